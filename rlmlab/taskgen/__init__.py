"""Task generators with verified answers: code questions from any directory of Rust sources, SPARQL questions
over PROV-O and SKOS, arithmetic from GSM8K and generated word problems, and three long-context suites (needle
retrieval in real Rust sources or service logs, aggregation over many records, two-hop questions over a document
collection) whose contexts, from 500 to millions of tokens, are written as files beside the task file.
Deterministic by seed; answers are kept only where a separate computation agrees (ctags, ``grep -P``, rdflib,
exact arithmetic, a re-parse of the written context); ``split_by="source"`` keeps train and test apart by crate or
module, ontology term, GSM8K item or problem family. ``rlmlab tasks generate`` is the command line;
data/tasks/README.md says how the E14 files were made and what the long-context suites hold."""

from rlmlab.taskgen._common import Candidate, Drop, GenerationReport, Kind
from rlmlab.taskgen._generate import LONG_SUITES, SPLITS, SUITE_NAMES, Generated, generate_tasks, write_tasks
from rlmlab.taskgen._longctx import MAX_SIZE_TOKENS, MIN_SIZE_TOKENS, ContextFiles, measure_tokens, parse_size
from rlmlab.taskgen._needle import TOPICS, needle_kinds
from rlmlab.taskgen._aggregate import REVIEWS, TICKETS, aggregate_kinds, relabel
from rlmlab.taskgen._twohop import parse_docs, twohop_kinds
from rlmlab.taskgen._haystack import log_haystack, rust_haystack

__all__ = ["generate_tasks", "write_tasks", "Generated", "SUITE_NAMES", "SPLITS", "Kind",
           "Candidate", "Drop",
           "ContextFiles",
           "TOPICS", "TICKETS", "REVIEWS"]
