"""Task generators with verified answers: code questions from any directory of Rust sources, SPARQL questions
over PROV-O and SKOS, arithmetic from GSM8K and generated word problems. Deterministic by seed; answers are kept
only where a separate computation agrees (ctags, ``grep -P``, rdflib, exact arithmetic); ``split_by="source"``
keeps train and test apart by crate or module, ontology term, GSM8K item or problem family.
``rlmlab tasks generate`` is the command line; data/tasks/README.md says how the E14 files were made."""

from rlmlab.taskgen._common import Candidate, Drop, GenerationReport, Kind
from rlmlab.taskgen._generate import SPLITS, SUITE_NAMES, Generated, generate_tasks, write_tasks

__all__ = ["generate_tasks", "write_tasks", "Generated", "GenerationReport", "SUITE_NAMES", "SPLITS", "Kind",
           "Candidate", "Drop"]
