"""The tree-sitter extraction cache: hits equal fresh extraction, edits and version changes invalidate, a corrupt
file is rebuilt, and a row naming code is refused. Real tokio sources."""

from __future__ import annotations

import logging
import os
import pickle

import pytest

from rlmlab.oracle import ExtractionCache, extract_files
from rlmlab.oracle import _extract_cache

WHAT = ("functions", "structs", "enums", "impls", "traits")


@pytest.fixture
def files(tokio_src):
    paths = sorted((tokio_src / "sync").glob("*.rs"))[:12]
    assert paths
    return {str(p.relative_to(tokio_src)): p.read_text(encoding="utf-8") for p in paths}


@pytest.fixture(autouse=True)
def fresh_fingerprint():
    _extract_cache.extractor_fingerprint.cache_clear()
    yield
    _extract_cache.extractor_fingerprint.cache_clear()


def records(oracles):
    return {path: [getattr(o, f"get_{n}")() for n in WHAT] for path, o in oracles.items()}


def test_a_hit_returns_what_a_fresh_extraction_returns_without_parsing(files, tmp_path):
    fresh = records(extract_files(files, WHAT))
    with ExtractionCache(tmp_path / "x.sqlite") as cache:
        first = extract_files(files, WHAT, cache=cache)
        assert (cache.hits, cache.misses) == (0, len(files) * len(WHAT))
        second = extract_files(files, WHAT, cache=cache)
        assert (cache.hits, cache.misses) == (len(files) * len(WHAT), len(files) * len(WHAT))
    assert records(first) == records(second) == fresh
    assert sum(len(v) for per in fresh.values() for v in per) > 50
    assert all(o.entry._tree is None for o in second.values())  # served from the cache: nothing parsed
    some = next(iter(second.values()))
    assert some.root.type == "source_file"  # the tree is still there on demand


def test_an_edited_file_is_extracted_again(files, tmp_path):
    path = tmp_path / "x.sqlite"
    extract_files(files, WHAT, cache=path)
    edited = dict(files)
    name = next(iter(edited))
    edited[name] += "\npub fn added_by_the_test(x: u8) -> u8 { x }\n"
    with ExtractionCache(path) as cache:
        again = extract_files(edited, WHAT, cache=cache)
        assert cache.misses == len(WHAT) and cache.hits == (len(files) - 1) * len(WHAT)
    assert "added_by_the_test" in [f.name for f in again[name].get_functions()]
    assert records(again) == records(extract_files(edited, WHAT))


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_parser_or_extractor_change_invalidates(files, tmp_path, monkeypatch):
    path = tmp_path / "x.sqlite"
    extract_files(files, WHAT, cache=path)
    versions = _extract_cache._library_versions()
    monkeypatch.setattr(_extract_cache, "_library_versions", lambda: {**versions, "tree-sitter-rust": "99.0.0"})
    _extract_cache.extractor_fingerprint.cache_clear()
    with ExtractionCache(path) as cache:
        assert len(cache) == 0  # the old fingerprint's rows are gone
        extract_files(files, WHAT, cache=cache)
        assert cache.hits == 0 and cache.misses == len(files) * len(WHAT)
    sources = _extract_cache._module_sources()
    monkeypatch.setattr(_extract_cache, "_module_sources",
                        lambda: {**sources, "_treesitter.py": sources["_treesitter.py"] + b"\n# changed\n"})
    before = _extract_cache.extractor_fingerprint()
    _extract_cache.extractor_fingerprint.cache_clear()
    assert _extract_cache.extractor_fingerprint() != before
    with ExtractionCache(path) as cache:
        extract_files(files, WHAT, cache=cache)
        assert cache.hits == 0


def test_a_corrupt_cache_file_is_rebuilt_with_one_warning(files, tmp_path, caplog):
    path = tmp_path / "x.sqlite"
    path.write_bytes(b"this is not SQLite\n" * 200)
    with caplog.at_level(logging.WARNING, logger="rlmlab.oracle"):
        with ExtractionCache(path) as cache:
            extract_files(files, WHAT, cache=cache)
            extract_files(files, WHAT, cache=cache)
            assert cache.hits == len(files) * len(WHAT)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "\n" not in warnings[0] and str(path) in warnings[0]
    assert (tmp_path / "x.sqlite.corrupt").read_bytes().startswith(b"this is not SQLite")


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_a_row_naming_code_is_refused_and_extracted_again(files, tmp_path, caplog):
    path = tmp_path / "x.sqlite"
    with ExtractionCache(path) as cache:
        extract_files(files, WHAT, cache=cache)
        # A row rewritten to call os.system when unpickled: the data-only unpickler must refuse it.
        cache._conn.execute("UPDATE extractions SET records = ? WHERE name = 'functions'",
                            (pickle.dumps(os.system),))
    with caplog.at_level(logging.WARNING, logger="rlmlab.oracle"), ExtractionCache(path) as cache:
        again = extract_files(files, WHAT, cache=cache)
        assert cache.misses == len(files)  # every functions row, nothing else
    assert any("does not decode" in r.getMessage() for r in caplog.records)
    assert records(again) == records(extract_files(files, WHAT))


def test_two_connections_share_one_file(files, tmp_path):
    path = tmp_path / "x.sqlite"
    with ExtractionCache(path) as a, ExtractionCache(path) as b:
        extract_files(files, ("functions",), cache=a)
        extract_files(files, ("functions", "structs"), cache=b)  # functions from a's rows, structs new
        assert (b.hits, b.misses) == (len(files), len(files))
        extract_files(files, ("structs",), cache=a)
        assert a.hits == len(files)


def test_a_tree_seen_twice_is_read_back_from_one_row(files, tmp_path, caplog):
    path = tmp_path / "x.sqlite"
    fresh = records(extract_files(files, WHAT))
    with ExtractionCache(path) as cache:
        extract_files(files, WHAT, cache=cache)  # cold: the files' rows
        extract_files(files, WHAT, cache=cache)  # from the files' rows; stores the tree's row
        assert cache._conn.execute("SELECT count(*) FROM trees").fetchone()[0] == 1
        third = extract_files(files, WHAT, cache=cache)
    assert records(third) == fresh
    params = [p for o in third.values() for f in o.get_functions() for p in f.parameters if p.name == "&self"]
    assert len(params) > 3 and len({id(p) for p in params}) == 1  # equal small records are one object
    with ExtractionCache(path) as cache:  # a damaged tree row: the files' rows serve, with a warning
        cache._conn.execute("UPDATE trees SET records = ?", (pickle.dumps(os.system),))
        with caplog.at_level(logging.WARNING, logger="rlmlab.oracle"):
            again = extract_files(files, WHAT, cache=cache)
        assert cache.hits == len(files) * len(WHAT) and cache.misses == 0
    assert records(again) == fresh and any("tree row" in r.getMessage() for r in caplog.records)


def _fill(path: str, files: dict[str, str], out) -> None:
    try:
        for _ in range(3):
            extract_files(files, WHAT, cache=path)
        out.put("ok")
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        out.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.slow
def test_processes_writing_one_file_at_once(files, tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")  # fresh interpreters: each opens, migrates and writes on its own
    path, out = str(tmp_path / "x.sqlite"), ctx.Queue()
    names = sorted(files)
    shares = [{n: files[n] for n in names[:8]}, {n: files[n] for n in names[4:]}]  # overlapping on purpose
    procs = [ctx.Process(target=_fill, args=(path, share, out)) for share in shares]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert results == ["ok", "ok"]
    with ExtractionCache(path) as cache:
        assert len(cache) == len(files) * len(WHAT)
        again = extract_files(files, WHAT, cache=cache)
        assert cache.misses == 0
    assert records(again) == records(extract_files(files, WHAT))


def test_cache_true_uses_the_cache_directory(files, tmp_path, monkeypatch):
    monkeypatch.setenv("RLMLAB_CACHE_DIR", str(tmp_path / "cachedir"))
    assert extract_files({}, WHAT, cache=True) == {}
    first = extract_files(files, WHAT, cache=True)
    assert (tmp_path / "cachedir" / "extractions.sqlite").is_file()
    with ExtractionCache() as cache:
        assert cache.path == tmp_path / "cachedir" / "extractions.sqlite"
        assert records(extract_files(files, WHAT, cache=cache)) == records(first) and cache.misses == 0


def test_a_file_damaged_past_its_header_is_rebuilt_when_read(files, tmp_path, caplog):
    path = tmp_path / "x.sqlite"
    extract_files(files, WHAT, cache=path)  # closed: the WAL is checkpointed into the file
    data = bytearray(path.read_bytes())
    assert len(data) > 16 * 4096
    data[8 * 4096:len(data) - 4096] = b"\xa5" * (len(data) - 9 * 4096)  # every page but the first and last
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="rlmlab.oracle"):
        again = extract_files(files, WHAT, cache=path)
    assert records(again) == records(extract_files(files, WHAT))
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings and all("\n" not in w for w in warnings) and "rebuilt" in warnings[0]
    with ExtractionCache(path) as cache:  # the rebuilt file serves the next run
        extract_files(files, WHAT, cache=cache)
        assert cache.misses == 0
