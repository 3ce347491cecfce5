"""rlmlab/_startup.py: jsonschema's RFC 3987 parser is built at the first IRI check, with the same verdicts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("rfc3987_syntax")

IRIS = ["http://example.org/é", "https://w3id.org/prov#Entity", "not an iri", "urn:isbn:0451450523", "http://[::1",
        "//relative/ref", "skos:Concept"]

CHECK = """
import json, sys
{before}
import jsonschema
deferred = "rfc3987_syntax.syntax_helpers" not in sys.modules
fc = jsonschema.Draft202012Validator.FORMAT_CHECKER
check = lambda f, v: jsonschema.Draft202012Validator({{"format": f}}, format_checker=fc).is_valid(v)
verdicts = [[check(f, v) for f in ("iri", "iri-reference")] for v in json.loads(sys.argv[1])]
loaded = "rfc3987_syntax.syntax_helpers" in sys.modules
print(json.dumps({{"deferred": deferred, "verdicts": verdicts, "loaded": loaded}}))
"""


def _run(before: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHECK.format(before=before), json.dumps(IRIS)], capture_output=True,
                         text=True, timeout=120, check=True)
    return json.loads(out.stdout)


@pytest.mark.slow
def test_importing_rlmlab_defers_the_iri_parser_and_checks_give_the_same_verdicts():
    with_rlmlab, plain = _run("import rlmlab"), _run("")
    assert with_rlmlab["deferred"] and not plain["deferred"]  # jsonschema alone builds the parser at import
    assert with_rlmlab["verdicts"] == plain["verdicts"]
    assert [v[0] for v in plain["verdicts"]][:3] == [True, True, False]  # the checks really ran
    assert with_rlmlab["loaded"]  # the first check built the real parser


@pytest.mark.slow
def test_the_stand_in_leaves_an_imported_module_alone_and_its_submodules_import():
    code = ("import sys, rlmlab._startup as s; import rfc3987_syntax.syntax_helpers as h; "
            "print(s.defer_iri_parser(), callable(h.is_valid_syntax), "
            "sys.modules['rfc3987_syntax'].parse('iri', 'a:b') is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["False", "True", "True"]
