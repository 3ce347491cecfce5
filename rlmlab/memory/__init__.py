"""Layered memory: a SQLite store of ReasoningBank items with FTS5 search, L3 artifacts, the L4 event log,
item usage and outcomes, pluggable retrievers, JSONL packs; the per-layer packers and the ContextBuilder;
and the ReasoningBank policies (retrieval, judging, extraction, consolidation, forgetting, MaTTS) with
the loop that runs them; code templates with slots that items may carry for a step grammar to copy."""

from rlmlab.memory._errors import ItemValidationError, MemoryStoreError, PackError, StoreBusyError
from rlmlab.memory._context import (
    BASE_INSTRUCTIONS, MODES, PLAIN_INSTRUCTIONS, SPEC_BUDGET_MAX, TOOL_MEDIATED_NOTE, Budgets, BuiltContext, ContextBuilder, LayerReport,
    Toggles,
)
from rlmlab.memory._domains import DOMAINS, Domain, register_domain, resolve_domain
from rlmlab.memory._packers import DEFAULT_BUDGETS, Packed, clip_words, pack_l2, pack_l3, pack_text, summarise_markdown
from rlmlab.memory._plugins import PolicyRegistry
from rlmlab.memory._retrieval import RETRIEVAL_POLICIES, SCOPES, MixedRetrieval, RetrievalPolicy, Retrieved
from rlmlab.memory._tasks import MemoryTask, Verdict
from rlmlab.memory._judge import (
    DEFAULT_RUBRIC, JUDGES, RUBRICS, CodeJudge, ExactJudge, Judge, LLMJudge, NumericJudge, SparqlJudge, judge_for,
    parse_llm_verdict,
)
from rlmlab.memory._extract import EXTRACTORS, MAX_EXTRACT_ITEMS, ExtractionReport, Extractor, HeuristicExtractor
from rlmlab.memory._extract_llm import EXTRACT_PROMPTS, LLMExtractor  # registers the "llm" extractor
from rlmlab.memory._consolidate import (
    CONSOLIDATION_ACTIONS, CONSOLIDATORS, AppendConsolidator, ConsolidationAction, Consolidator,
    SimilarityConsolidator, similarity,
)
from rlmlab.memory._forget import (
    FORGETTERS, BoundedForgetter, ForgetAction, Forgetter, NoForgetter, memory_health, retention_score,
)
from rlmlab.memory._loop import EXTRACTION_MODES, RESULTS_FILE, ReasoningBankLoop, TaskOutcome, rlm_executor
from rlmlab.memory._packs import PACK_FIELDS, ImportReport, export_pack, import_pack, read_pack
from rlmlab.memory._records import (
    FILTERS, LAYERS, LIMITS, POLARITIES, STATUSES, AddResult, Artifact, Event, Hit, MemoryItem, StoreStats, artifact_id,
    item_id,
)
from rlmlab.memory._retrieve import (
    RETRIEVERS, BM25Retriever, EmbeddingRetriever, FTS5Retriever, Retriever, make_retriever, register_retriever,
)
from rlmlab.memory._schema import MIGRATIONS, Migration
from rlmlab.memory._templates import (
    SLOT_TYPES, STEP_TEMPLATES_KEY, Slot, TemplateError, check_template, fill_template, parse_template, template_slots,
)
from rlmlab.memory._store import MemoryStore
from rlmlab.memory._tokens import FIELD_WEIGHTS, fts_query, query_tokens, tokenize

__all__ = [
    "MemoryStore", "MemoryItem", "Event", "Hit", "AddResult", "StoreStats", "item_id",
    "POLARITIES", "LAYERS", "LIMITS", "FILTERS", "STATUSES", "Artifact", "artifact_id",
    "Packed", "DEFAULT_BUDGETS", "pack_text", "pack_l2", "pack_l3", "summarise_markdown", "clip_words",
    "ContextBuilder", "BuiltContext", "LayerReport", "Toggles", "Budgets", "MODES", "BASE_INSTRUCTIONS",
    "PLAIN_INSTRUCTIONS",
    "TOOL_MEDIATED_NOTE", "SPEC_BUDGET_MAX",
    "Domain", "DOMAINS", "register_domain", "resolve_domain",
    "RetrievalPolicy", "Retrieved", "MixedRetrieval", "RETRIEVAL_POLICIES", "SCOPES", "PolicyRegistry",
    "MemoryTask", "Verdict",
    "Judge", "JUDGES", "judge_for", "ExactJudge", "NumericJudge", "SparqlJudge", "CodeJudge", "LLMJudge", "RUBRICS",
    "DEFAULT_RUBRIC", "parse_llm_verdict",
    "Extractor", "EXTRACTORS", "HeuristicExtractor", "LLMExtractor", "ExtractionReport", "EXTRACT_PROMPTS",
    "MAX_EXTRACT_ITEMS",
    "Consolidator", "CONSOLIDATORS", "AppendConsolidator", "SimilarityConsolidator", "ConsolidationAction",
    "CONSOLIDATION_ACTIONS", "similarity",
    "Forgetter", "FORGETTERS", "NoForgetter", "BoundedForgetter", "ForgetAction", "retention_score", "memory_health",
    "ReasoningBankLoop", "TaskOutcome", "EXTRACTION_MODES", "RESULTS_FILE", "rlm_executor",
    "Retriever", "FTS5Retriever", "BM25Retriever", "EmbeddingRetriever", "RETRIEVERS", "register_retriever",
    "make_retriever",
    "import_pack", "export_pack", "read_pack", "ImportReport", "PACK_FIELDS",
    "tokenize", "query_tokens", "fts_query", "FIELD_WEIGHTS",
    "Migration", "MIGRATIONS",
    "parse_template", "fill_template", "template_slots", "check_template", "Slot", "SLOT_TYPES", "TemplateError",
    "STEP_TEMPLATES_KEY",
    "MemoryStoreError", "ItemValidationError", "PackError", "StoreBusyError",
]
