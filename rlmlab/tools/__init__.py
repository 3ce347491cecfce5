"""The tool registry, the workspace every call goes through, the bounded context tools and ast_query."""

from rlmlab.tools._registry import TOOLS, ToolRegistry, ToolSpec, tool
from rlmlab.tools._schema import Bounds, is_blobref_schema, schema_for
from rlmlab.tools._display import ToolResult, displayable
from rlmlab.tools._bounded import DEADLINE_KEY, exit_description, run_bounded, time_left
from rlmlab.tools._workspace import ToolCallRecord, ToolCaps, ToolObserver, Workspace
from rlmlab.tools import _context  # noqa: F401  (registers blob and ctx_*)
from rlmlab.tools._context import blob, ctx_find, ctx_peek, ctx_slice, ctx_stats
from rlmlab.tools._chunks import ctx_chunks  # registers ctx_chunks
from rlmlab.tools._ast import ast_query  # registers ast_query
from rlmlab.tools._paths import source_roots
from rlmlab.tools._files import add_files, file_headers
from rlmlab.tools._agenda import agenda  # registers agenda
from rlmlab.tools._sparql import attach_ontology, ontology_of, sparql_query  # registers sparql_query
from rlmlab.tools._memory import (attach_memory, event_log, mem_add, mem_get, mem_quote, mem_search,  # registers mem_*
                                  memory_of)

__all__ = [
    "TOOLS", "ToolRegistry", "tool", "Bounds", "is_blobref_schema",
    "ToolResult", "displayable", "DEADLINE_KEY", "exit_description", "run_bounded", "ToolCaps", "ToolCallRecord", "ToolObserver", "Workspace",
    "blob", "ctx_stats", "ctx_peek", "ctx_slice", "ctx_find", "ctx_chunks", "ast_query", "agenda", "source_roots",
    "attach_memory", "memory_of", "event_log", "mem_add", "mem_get", "mem_quote", "mem_search", "attach_ontology", "ontology_of", "sparql_query",
]
