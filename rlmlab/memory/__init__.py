"""Memory substrate: a SQLite store of ReasoningBank items with FTS5 search, the L4 event log, item
usage and outcomes, pluggable retrievers, and JSONL packs."""

from rlmlab.memory._errors import ItemValidationError, MemoryStoreError, PackError
from rlmlab.memory._packs import PACK_FIELDS, ImportReport, export_pack, import_pack, read_pack
from rlmlab.memory._records import (
    FILTERS, LAYERS, LIMITS, POLARITIES, AddResult, Event, Hit, MemoryItem, StoreStats, item_id,
)
from rlmlab.memory._retrieve import (
    RETRIEVERS, BM25Retriever, EmbeddingRetriever, FTS5Retriever, Retriever, make_retriever, register_retriever,
)
from rlmlab.memory._schema import MIGRATIONS, Migration
from rlmlab.memory._store import MemoryStore
from rlmlab.memory._tokens import FIELD_WEIGHTS, fts_query, query_tokens, tokenize

__all__ = [
    "MemoryStore", "MemoryItem", "Event", "Hit", "AddResult", "StoreStats", "item_id",
    "POLARITIES", "LAYERS", "LIMITS", "FILTERS",
    "Retriever", "FTS5Retriever", "BM25Retriever", "EmbeddingRetriever", "RETRIEVERS", "register_retriever",
    "make_retriever",
    "import_pack", "export_pack", "read_pack", "ImportReport", "PACK_FIELDS",
    "tokenize", "query_tokens", "fts_query", "FIELD_WEIGHTS",
    "Migration", "MIGRATIONS",
    "MemoryStoreError", "ItemValidationError", "PackError",
]
