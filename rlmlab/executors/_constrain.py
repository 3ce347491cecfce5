"""Constrained steps: a DSPy module callback that puts each call of one predictor under a grammar made for it."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from dspy.utils.callback import BaseCallback

from rlmlab.executors._step_grammar import assigned_names, output_numbers, query_slots, step_grammar
from rlmlab.executors._step_names import result_tools
from rlmlab.executors._offer import (RESULT_KEYS, answer_form, asks_every, ast_vocabulary, context_kind, grep_rules,
                                    text_rules,
                                    asks_for_items, item_names, lookup_names, offered_tools)
from rlmlab.executors._sparql_fill import sparql_keeper
from rlmlab.executors._sparql_space import space_fit
from rlmlab.executors._vocab import CAPTURES, argument_vocabularies, named_captures, ts_query_rules
from rlmlab.lm import can_constrain, pop_constraint, push_constraint
from rlmlab.errors import ToolError
from rlmlab.tools import memory_of, ontology_of

__all__ = ["StepConstraint", "DECODINGS", "check_decoding", "decoding_note", "output_fields", "grammar_lm",
           "GRAMMAR_MIN_TOKENS", "run_step_grammar"]

DECODINGS = ("free", "grammar")
_log = logging.getLogger("rlmlab.executors")
_WARNED: set[str] = set()


def check_decoding(decoding: str) -> None:
    if decoding not in DECODINGS:
        raise ValueError(f"decoding: {decoding!r}; use one of {', '.join(DECODINGS)}")


def decoding_note(decoding: str, lm: Any) -> tuple[str, str | None]:
    """The decoding a run really uses with ``lm``, and a note: the server a grammar is sent to, or why a grammar
    asked for cannot apply (a model whose server takes none; said once per model in the log, and in every such
    run's notes)."""
    server = getattr(lm, "rlmlab_constrain", "none")
    if decoding != "grammar" or can_constrain(lm):
        if decoding == "grammar" and server != "none":
            return decoding, f"decoding: grammar sent to the server in each request ({server})"
        return decoding, None
    model = str(getattr(lm, "model", lm))
    note = (f"decoding: grammar ignored; {model} cannot constrain its output (the embedded llama.cpp model can, and "
            "a server that takes grammars: --lm-constrain llamacpp|vllm)")
    if model not in _WARNED:
        _WARNED.add(model)
        _log.warning(note)
    return "free", note

class StepConstraint(BaseCallback):
    """While the predictor it is attached to runs, its LM calls follow ``make_grammar(instance, inputs)``.

    Only that predictor's calls are constrained: sub-LLM calls made by the step's code run after it ends.
    ``make_grammar`` may return None to leave a call free.
    """

    def __init__(self, make_grammar: Callable[[Any, dict[str, Any]], str | None]):
        self.make_grammar = make_grammar
        self._tokens: dict[str, Any] = {}
        self.grammars: list[str] = []  # the grammar of each constrained call, in order

    def on_module_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        grammar = self.make_grammar(instance, inputs)
        if grammar is not None:
            self.grammars.append(grammar)
            self._tokens[call_id] = push_constraint(grammar=grammar)

    def on_module_end(self, call_id: str, outputs: Any, exception: Exception | None = None) -> None:
        token = self._tokens.pop(call_id, None)
        if token is not None:
            pop_constraint(token)


def output_fields(instance: Any, inputs: dict[str, Any]) -> list[str] | None:
    """The output field names of a predictor call (its per-call signature, else its own); None when it has
    none (DSPy allows a replacement predictor without a signature: its calls then stay free)."""
    sig = inputs.get("signature") or getattr(instance, "signature", None)
    return None if sig is None else list(sig.output_fields)


GRAMMAR_MIN_TOKENS = 512


def grammar_lm(lm: Any, floor: int = GRAMMAR_MIN_TOKENS) -> Any:
    """``lm`` with a completion cap of at least ``floor`` tokens: a grammar bounds a step's length itself, and a
    cap that cuts a constrained reply short (a long template after the echoed query) leaves it off-grammar."""
    kwargs = getattr(lm, "kwargs", None)
    if not isinstance(kwargs, dict) or not hasattr(lm, "copy") or (kwargs.get("max_tokens") or 0) >= floor:
        return lm
    return lm.copy(max_tokens=floor)


def _raised(output: str | None) -> bool:
    """Whether a step's output reports an exception (the REPL prints ``[Error] <type>: ...``)."""
    return bool(output) and re.search(r"(?m)^\[Error\] ", output) is not None


def _has_memory(ws: Any) -> bool:
    try:
        memory_of(ws)
    except ToolError:
        return False
    return True


def _vocabularies(run: Any, slots: dict[str, list[str]]) -> dict[str, Any] | None:
    """The argument vocabularies of the run's tools, or None (steps then follow the tools' grammar without them)
    when the question's closed space cannot be built; the run's notes say so, once."""
    try:
        return argument_vocabularies(run.workspace, slots, run.query or "")
    except ValueError as exc:
        note = f"step space: no closed vocabulary for this question ({exc}); steps follow the tools' grammar only"
        if note not in run.traj.notes:
            run.traj.notes.append(note)
        return None


def run_step_grammar(run: Any, *, fmt: str, must_submit: bool) -> str:
    """The step grammar of the next step of ``run`` in an executor's format: the workspace's tools (with
    vocabularies on, only those that can answer the query over its context: :func:`offered_tools`), the variables
    earlier steps assigned, the numbers they printed and the injected templates (first step): procedures come from
    memory only. Over Rust, a whole result is read through the generic operations the grammar offers (count,
    distinct, filter on a capture equal to a name the question gives that occurs in the source, argmax by count,
    group by file), whatever the question's words."""
    ws, opts = run.workspace, run.options
    # a step that raised may have left its names unset: reading one next only repeats a NameError until the end
    scope = ["context"] + [n for it in run.records if not _raised(it.output) for n in assigned_names(it.code)]
    raw: set[str] = set()
    bare: set[str] = set()  # of raw, those holding a ctx_find result: it has no captures to read
    names = [t.name for t in ws.registry]
    for it in run.records:
        if not _raised(it.output):
            held = result_tools(it.code, names)  # each name the step assigned: the tool whose whole result it holds
            raw = (raw - set(held)) | {n for n, tool in held.items() if tool}
            bare = (bare - set(held)) | {n for n, tool in held.items() if tool == "ctx_find"}
    numbers = [n for it in run.records for n in output_numbers(it.output)]
    templates = [t["template"] for t in ws.extras.get("step_templates", []) if t.get("template")]
    slots = query_slots(run.query or "", run.context_text)
    vocab = _vocabularies(run, slots) if opts.vocab else None
    # a tool whose state is missing can only fail: sparql_query without an attached ontology, the memory tools
    # without a memory store (a code or arithmetic step is not offered them)
    tools = [t for t in ws.registry if (t.name != "sparql_query" or ws.extras.get("ontology") is not None)
             and (t.group != "memory" or _has_memory(ws))]
    keys, joins, lookup, form, kind, items = None, (), [], None, None, False
    if vocab is not None:  # closed vocabularies close the tools and a result's keys too (see _offer)
        kind = context_kind(run.context_text, ws.extras.get("ontology"))
        if kind in ("rust", "text"):  # the answer comes from a tool: numbers a step printed are not retyped
            numbers = []
        tools = offered_tools(tools, run.query or "", kind)
        grep = grep_rules(run.query or "", slots.get("ident") or [], run.context_text) if kind == "rust" else \
            text_rules(run.query or "", run.context_text or "") if kind == "text" else None
        if grep is not None:
            vocab["ctx_find.pattern"] = grep
        lookup = lookup_names(run.query or "", slots.get("ident") or [], run.context_text)[:24] \
            if kind == "rust" else []
        form = answer_form(run.query or "") if kind == "rust" else \
            "query" if kind == "ontology" and "sparql_query.query" in vocab else None
        av = ast_vocabulary(run.query or "")
        if kind == "rust" and "ast_query.query" in vocab:
            names = lookup or item_names(run.query or "", slots.get("ident") or [])[:24]
            vocab["ast_query.query"] = ts_query_rules(names, named=bool(lookup), **av) or vocab["ast_query.query"]
        keys = RESULT_KEYS
        items = kind in ("rust", "text") and asks_for_items(run.query or "", run.context_text)
        if items:
            keys = tuple(k for k in keys if k != "total")  # "which types implement Display": names, not a count
        joins = CAPTURES if kind == "rust" else ()  # an ast_query's matches carry captures; a SPARQL result rows
        if lookup:  # a question about one named item is answered by what a query captured of it (not a count, a
            # line number or a line), under the one name its child shape captures (never the item's own @name)
            keys = tuple(k for k in RESULT_KEYS if k not in ("total", "line", "text"))
            joins = named_captures(av["top"], av["asks"]) or joins
            # and only ast_query captures it: a ctx_find result has no captures, so with these keys a grep is a
            # step that can only fail (the model grepped a struct's line, then joined its "captures": KeyError)
            tools = [t for t in tools if t.name == "ast_query"] or tools
    # a SPARQL template's fillings are narrowed to those whose query matches the attached ontology (_sparql_fill)
    check = sparql_keeper(ontology_of(ws)) if templates and ws.extras.get("ontology") is not None else None
    # a retrieved SPARQL procedure fits when its query is one the space holds
    fit = space_fit(vocab["sparql_query.query"]) if templates and form == "query" else None
    return step_grammar(tools, ws.caps, fmt=fmt, scope=scope, max_statements=opts.max_statements,
                        query=run.query, templates=templates, numbers=numbers, must_submit=must_submit,
                        templates_first=not run.records, context=run.context_text, vocab=vocab, keys=keys,
                        raw=sorted(raw), template_check=check, joins=joins,
                        join_only=bool(lookup) and asks_every(run.query or ""),
                        answer_form=form, template_fit=fit,
                        typed_answers=vocab is None or kind not in ("rust", "text"),
                        # the generic operations over a whole result's matches, for any question over code or a
                        # document but a lookup of one named item (whose answer is what that item holds)
                        names=(slots.get("ident") or [])[:24], match_ops=kind in ("rust", "text") and not lookup,
                        count_reads=kind in ("rust", "text") and answer_form(run.query or "") == "count",
                        # over a document, a sub-call may read the lines a search found for the question (the value
                        # a line states is not a key of the result); over code the captures name it
                        sub_query=kind == "text",
                        # "Find all async functions": every match is the answer, never the first one alone
                        listing=items and not lookup, bare=sorted(bare))
