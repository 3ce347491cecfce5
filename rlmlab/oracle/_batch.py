"""Tree-sitter extraction over many files at once, spread over forked worker processes.

Parsing dominates whole-repository extraction (tokio: about 200 ms of tree-sitter parsing in one process, 3x
Universal Ctags' whole run) and the Python bindings hold the GIL while they parse, so threads do not help. Forked
children inherit the texts (nothing is sent to them) and send back only the extracted records, pickled. With a
``cache`` (:class:`~rlmlab.oracle._extract_cache.ExtractionCache`), files whose records are stored are not parsed
at all: tokio's second extraction is a hash and a lookup per file.
"""

from __future__ import annotations

import gc
import os
import pickle
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlmlab.oracle._extract_cache import ExtractionCache, tree_key
from rlmlab.oracle._treesitter import TreeSitterOracle

__all__ = ["EXTRACTIONS", "extract_files"]

EXTRACTIONS = ("functions", "structs", "enums", "impls", "traits")  # what get_<name>() returns


def _extract(files: Mapping[str, str], paths: Sequence[str], what: Sequence[str],
             made: Mapping[str, TreeSitterOracle] | None = None) -> dict[str, TreeSitterOracle]:
    """Extract ``what`` for ``paths``, on the oracles in ``made`` where given (their texts are hashed already)."""
    oracles = {}
    for path in paths:
        oracle = oracles[path] = made[path] if made and path in made else TreeSitterOracle(files[path], path)
        for name in what:
            getattr(oracle, f"get_{name}")()
    return oracles


def _extract_share(files: Mapping[str, str], paths: Sequence[str], what: Sequence[str]) -> dict[str, Any]:
    """A child's work: the records of its share, by path and extraction name."""
    return {p: {n: o.entry.memo[n] for n in what} for p, o in _extract(files, paths, what).items()}


def _child(files: Mapping[str, str], paths: Sequence[str], what: Sequence[str], conn: Any) -> None:
    try:
        payload = pickle.dumps(_extract_share(files, paths, what), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - the parent sees the pipe close and redoes this share itself
        conn.close()
        return
    conn.send_bytes(payload)
    conn.close()


def _shares(files: Mapping[str, str], n: int) -> list[list[str]]:
    """The paths in ``n`` shares of about equal total size (largest file first to the lightest share)."""
    shares: list[list[str]] = [[] for _ in range(n)]
    loads = [0] * n
    for path in sorted(files, key=lambda p: (-len(files[p]), p)):
        i = loads.index(min(loads))
        shares[i].append(path)
        loads[i] += len(files[path])
    return shares


def extract_files(files: Mapping[str, str], what: Sequence[str] = ("functions", "structs", "enums"),
                  workers: int | None = 1,
                  cache: ExtractionCache | str | Path | bool | None = None) -> dict[str, TreeSitterOracle]:
    """A :class:`TreeSitterOracle` per path (in the order of ``files``) with the extractions ``what`` done
    (names from ``EXTRACTIONS``: ``oracle.get_functions()`` etc. then return at once).

    ``workers`` processes share the work: this one and ``workers - 1`` forked children, each given files of about
    equal total size. None means ``os.cpu_count()``; 1 (the default), or a platform without ``fork``, or a
    process running other threads (forking those is unsafe), means all in this process. Only worth it with idle
    cores: tokio with 2 processes took 0.7x the time of one on an idle 2-core machine, 1.2x while another job
    kept one core busy (the children's copy-on-write page faults and the shared core). The records are the ones per-file
    extraction gives. An oracle whose file a child extracted has no parse tree here: ``.root``, ``query()`` or
    another extraction parse it again on first use. A child that fails has its share redone here.

    ``cache``: an :class:`ExtractionCache`, the path of one, or True for its default path
    (``$RLMLAB_CACHE_DIR/extractions.sqlite`` or ``~/.cache/rlmlab/``); texts found there are not parsed (their
    oracles parse on first use of ``.root`` too), the others are extracted as above and stored. None or False
    (the default): no cache.
    """
    unknown = [n for n in what if n not in EXTRACTIONS]
    if unknown:
        raise ValueError(f"unknown extraction {unknown[0]!r}; use some of {', '.join(EXTRACTIONS)}")
    # Extraction makes hundreds of thousands of objects and no reference cycles; the cyclic collector would
    # otherwise run many times over the whole process meanwhile (about 5% of tokio's extraction).
    collecting = gc.isenabled()
    gc.disable()
    try:
        if cache is None or cache is False:
            return _extract_all(files, what, workers)
        if isinstance(cache, ExtractionCache):
            return _extract_cached(files, what, workers, cache)
        with ExtractionCache(None if cache is True else cache) as opened:
            return _extract_cached(files, what, workers, opened)
    finally:
        if collecting:
            gc.enable()


def _extract_cached(files: Mapping[str, str], what: Sequence[str], workers: int | None,
                    cache: ExtractionCache) -> dict[str, TreeSitterOracle]:
    oracles = {path: TreeSitterOracle(text, path) for path, text in files.items()}
    if not oracles:
        return oracles
    hashes = [o.entry.sha256 for o in oracles.values()]
    key = tree_key(hashes, what)
    tree = cache.get_tree(key, len(oracles))
    if tree is not None:
        for oracle, records in zip(oracles.values(), tree):
            oracle.entry.memo.update(records)
        cache.hits += len(oracles) * len(what)
        return oracles
    stored = cache.get_many(hashes, what)
    missing = {}
    for path, oracle in oracles.items():
        records = stored.get(oracle.entry.sha256, {})
        if len(records) == len(what):
            oracle.entry.memo.update(records)
        else:
            missing[path] = files[path]
    if missing:
        fresh = _extract_all(missing, what, workers, oracles)
        oracles.update(fresh)
        cache.put_many({o.entry.sha256: {n: o.entry.memo[n] for n in what} for o in fresh.values()})
    else:  # the whole tree came from the files' rows: seen unchanged twice, it gets a row of its own
        cache.put_tree(key, [{n: o.entry.memo[n] for n in what} for o in oracles.values()])
    return {path: oracles[path] for path in files}


def _extract_all(files: Mapping[str, str], what: Sequence[str], workers: int | None,
                 made: Mapping[str, TreeSitterOracle] | None = None) -> dict[str, TreeSitterOracle]:
    n = max(1, min(workers or os.cpu_count() or 1, len(files)))
    if n == 1 or not hasattr(os, "fork") or threading.active_count() > 1:
        return _extract(files, list(files), what, made)
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    mine, *theirs = _shares(files, n)
    children = []
    for share in theirs:
        receive, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(files, share, what, send), daemon=True)
        proc.start()
        send.close()
        children.append((share, receive, proc))
    oracles = _extract(files, mine, what, made)
    for share, receive, proc in children:
        try:
            records = pickle.loads(receive.recv_bytes())
        except EOFError:  # the child died or failed: do its share here
            records = None
        receive.close()
        proc.join()
        if records is None:
            oracles.update(_extract(files, share, what))
            continue
        for path, memo in records.items():
            oracle = oracles[path] = TreeSitterOracle(files[path], path)
            oracle.entry.memo.update(memo)
    return {path: oracles[path] for path in files}
