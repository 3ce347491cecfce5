"""Layered memory: a SQLite store of ReasoningBank items with FTS5 search, L3 artifacts, the L4 event log,
item usage and outcomes, pluggable retrievers and retrieval policies, JSONL packs; the per-layer packers and
the ContextBuilder; code templates with slots that items may carry for a step grammar to copy.

The learning loop that runs agents and writes to this store (judges, extraction, consolidation, forgetting,
``ReasoningBankLoop``) is :mod:`rlmlab.learning`, a layer above the executors."""

from rlmlab.memory._errors import ItemValidationError, MemoryStoreError, PackError, StoreBusyError
from rlmlab.memory._context import (
    BASE_INSTRUCTIONS, CONTEXT_MODES, PLAIN_INSTRUCTIONS, SPEC_BUDGET_MAX, TOOL_MEDIATED_NOTE, Budgets, BuiltContext, ContextBuilder, LayerReport,
    Toggles,
)
from rlmlab.memory._domains import DOMAINS, Domain, register_domain, resolve_domain
from rlmlab.memory._packers import DEFAULT_BUDGETS, Packed, clip_words, pack_l2, pack_l3, pack_text, summarise_markdown
from rlmlab.memory._policies import RETRIEVAL_POLICIES, RETRIEVAL_SCOPES, MixedRetrieval, RetrievalPolicy, Retrieved
from rlmlab.memory._tasks import MemoryTask, Verdict
from rlmlab.memory._packs import PACK_FIELDS, ImportReport, export_pack, import_pack, read_pack
from rlmlab.memory._records import (
    FILTERS, LAYERS, LIMITS, POLARITIES, STATUSES, AddResult, Artifact, Event, Hit, MemoryItem, StoreStats, admission_summary,
    artifact_id, item_id,
)
from rlmlab.memory._retrievers import (
    RETRIEVERS, BM25Retriever, EmbeddingRetriever, FTS5Retriever, Retriever, make_retriever, register_retriever,
)
from rlmlab.memory._schema import MIGRATIONS, Migration
from rlmlab.memory._templates import (
    SLOT_TYPES, STEP_TEMPLATES_KEY, Slot, TemplateError, check_template, fill_template, normalise_template,
    parse_template, template_matches, template_slots,
)
from rlmlab.memory._store import MemoryStore
from rlmlab.memory._candidates import admit_candidates, candidate_items, propose_candidate
from rlmlab.memory._literals import query_shape, query_slots, shape_similarity, shape_tokens, numbers_in
from rlmlab.memory._shape import ShapeRetriever
from rlmlab.memory._tokens import FIELD_WEIGHTS, STOPWORDS, fts_query, query_tokens, tokenize

__all__ = [
    "MemoryStore", "MemoryItem", "propose_candidate", "candidate_items", "admit_candidates", "admission_summary", "Event", "Hit", "StoreStats", "item_id",
    "POLARITIES", "LAYERS", "LIMITS", "FILTERS", "STATUSES", "Artifact",
    "Packed", "pack_text", "pack_l2", "pack_l3", "summarise_markdown",
    "ContextBuilder", "BuiltContext", "Toggles", "Budgets", "CONTEXT_MODES", "BASE_INSTRUCTIONS",
    "PLAIN_INSTRUCTIONS",
    "Domain", "DOMAINS", "register_domain", "resolve_domain",
    "RetrievalPolicy", "Retrieved", "MixedRetrieval", "RETRIEVAL_POLICIES",
    "MemoryTask", "Verdict",
    "Retriever", "FTS5Retriever", "BM25Retriever", "EmbeddingRetriever", "RETRIEVERS",
    "register_retriever", "make_retriever",
    "query_shape", "query_slots", "shape_similarity", "numbers_in",
    "import_pack", "export_pack", "read_pack",
    "tokenize", "query_tokens", "fts_query", "FIELD_WEIGHTS", "STOPWORDS",
    "Migration", "MIGRATIONS",
    "parse_template", "fill_template", "template_slots", "check_template", "Slot", "SLOT_TYPES", "TemplateError",
    "STEP_TEMPLATES_KEY", "normalise_template", "template_matches",
    "MemoryStoreError", "ItemValidationError", "PackError", "StoreBusyError",
]
