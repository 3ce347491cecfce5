"""Tools imported from the top level work in a plain script or notebook: they use one default workspace."""

from __future__ import annotations

import pytest

import rlmlab
from rlmlab.errors import ToolError


def test_top_level_tools_use_the_default_workspace(rust_file):
    from rlmlab import blob, ctx_find, ctx_peek, default_workspace

    ref = blob(rust_file.read_text())
    assert ref.key in default_workspace().store and ctx_peek(ref, n=10)["preview"] == rust_file.read_text()[:10]
    assert ctx_find(ref, r"async fn", k=5)["total"] >= 10
    assert rlmlab.ast_query(ref, "(struct_item name: (type_identifier) @name)", k=3)["total"] >= 1
    with pytest.raises(ToolError, match="n"):
        ctx_peek(ref, n=10**6)  # caps apply as in the REPL
    from rlmlab import tools

    assert tools.blob is not blob and tools.blob.tool_spec.name == "blob"  # the registered function
