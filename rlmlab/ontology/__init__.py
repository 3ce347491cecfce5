"""L0 Ont-Sense and L1 schema constraints, on rdflib.

L0: :func:`sense_card` (<= 600 chars) and :func:`sense_brief` (<= 6000 chars), deterministic
and grounded (:func:`grounding_check`); :func:`crate_sense_card`, the same idea for a Rust crate.
L1: :func:`constraints_from_graph`, the curated anti-patterns (:func:`load_antipatterns`), the
packer :func:`pack_constraints` (<= 1000 chars) and the query checker :func:`validate_sparql`.
Ontology files are parsed once per process (:func:`load_ontology`).
"""

from rlmlab.ontology._constraints import (
    CONSTRAINTS_BUDGET, DEFAULT_ANTIPATTERNS, AntiPattern, PropertyConstraint, constraints_from_graph, load_antipatterns,
    pack_constraints,
)
from rlmlab.ontology._crate import CrateSense, crate_sense, crate_sense_card
from rlmlab.ontology._grounding import GroundingReport, extract_mentions, grounding_check
from rlmlab.ontology._loader import (
    LOADERS, ONTOLOGY_DIR, PROV_TTL, SKOS_TTL, as_graph, clear_ontology_cache, load_ontology, loader,
    ontology_cache_info,
)
from rlmlab.ontology._question import (
    CURIE_PATTERN, Relation, hierarchy_steps, question_relations, reaches, stated_values, text_tests,
)
from rlmlab.ontology._schema import OntologySchema, schema_of
from rlmlab.ontology._sense import BRIEF_BUDGET, CARD_BUDGET, OntSense, ont_sense, sense_brief, sense_card
from rlmlab.ontology._validate import FINDING_KINDS, Finding, validate_sparql

__all__ = [
    # loading
    "load_ontology", "as_graph", "loader", "LOADERS", "ontology_cache_info",
    "ONTOLOGY_DIR", "PROV_TTL", "SKOS_TTL",
    # L0
    "sense_card", "sense_brief", "ont_sense", "OntSense", "CARD_BUDGET", "BRIEF_BUDGET",
    "grounding_check",
    "crate_sense_card",
    # L1
    "PropertyConstraint", "constraints_from_graph", "load_antipatterns", "DEFAULT_ANTIPATTERNS",
    "pack_constraints", "validate_sparql", "FINDING_KINDS",
    # what a question states about its query
    "question_relations", "stated_values", "reaches", "hierarchy_steps", "text_tests", "Relation", "CURIE_PATTERN",
]
