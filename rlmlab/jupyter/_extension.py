"""IPython extension: ``%load_ext rlmlab`` pushes the rlmlab namespace and registers the magics.

rlmlab's own errors (a misused magic, a ToolError from a tool called in a cell, a failed ``%%rlm`` run) show as
one line, ``ToolError: k: 500 is out of range; allowed 1 to 100``: their messages name the problem and the fix,
and the frames inside rlmlab above them would only bury it. ``%xmode Verbose`` (or ``%%rlm --traceback``) shows
the whole traceback; other exceptions keep IPython's usual traceback.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from IPython.core.magic import Magics, cell_magic, line_cell_magic, line_magic, magics_class

from rlmlab._paths import runs_home
from rlmlab.errors import RLMLabError, RunInterrupted
from rlmlab.namespace import build_namespace

__all__ = ["load", "unload", "RLMLabMagics", "MagicError", "RunFailed", "short_error"]


class MagicError(RLMLabError, ValueError):
    """A magic used wrongly; the message says how to use it."""


class RunFailed(RLMLabError):
    """A ``%%rlm`` run that ended in an error (every LM call failed, say); ``rlm_last`` holds its trajectory."""

_PUSHED: dict[int, list[str]] = {}


TURING_LOG = "interaction_log.sqlite"  # beside the runs of %%rlm, one log for all of them

_RLM_ARGS = argparse.ArgumentParser(prog="%%rlm", add_help=False, exit_on_error=False)
_RLM_ARGS.add_argument("--lm", default="local")
_RLM_ARGS.add_argument("--context", default=None)
_RLM_ARGS.add_argument("--max-iters", type=int, default=4)
_RLM_ARGS.add_argument("--runs-dir", default=None)  # None: runs_home(), where the CLI and the guides write
_RLM_ARGS.add_argument("--trace-budget", type=int, default=8000)
_RLM_ARGS.add_argument("--no-live", dest="live", action="store_false")
_RLM_ARGS.add_argument("--traceback", action="store_true")
_RLM_ARGS.add_argument("--decoding", choices=("grammar", "free"), default="grammar")


@magics_class
class RLMLabMagics(Magics):
    """``%rlmlab_tools``, ``%ast_query``, ``%%rlm``, ``%budget`` and ``%turing on|off``."""

    def __init__(self, shell: Any = None, **kwargs: Any):
        super().__init__(shell, **kwargs)
        self.turing_on = True  # %%rlm checks every step with the Turing Protocol unless `%turing off`
        self.turing_log: Path | None = None  # the interaction log the last checked %%rlm run wrote to

    @cell_magic
    def rlm(self, line: str, cell: str) -> Any:
        """Run the cell's text as an RLM task, with a live token-budget timeline, and show the trajectory explorer.

        ``%%rlm [--lm local|scripted:NAME|MODEL] [--context VAR_OR_FILE] [--max-iters 4] [--runs-dir runs]
        [--trace-budget 8000] [--no-live] [--traceback] [--decoding grammar|free]``.
        Steps follow the step grammar by default (the local model; other LMs run free and the trajectory notes it).
        The context is a namespace variable (a BlobRef or a string) or a file path; the run uses the
        namespace's workspace, so handles made in the notebook resolve. The trajectory is kept as ``rlm_last``.
        With the Turing Protocol on, every round is logged to ``<runs-dir>/interaction_log.sqlite`` (``%turing log``).
        Unless ``--no-live``, a :class:`BudgetTimeline` of the run's trace is displayed before the run starts
        and follows it (at most one render per 200 ms); when the run ends it stops following and its output
        is replaced by the final state, so a saved notebook shows the whole run.
        A run that ended in an error fails the cell with one line (RunFailed): before its first step (every LM
        call failed, say) the timeline is replaced by that line; after some steps the explorer shows them first.
        ``--traceback`` shows the full traceback of an error in this cell.
        """
        try:
            args = _RLM_ARGS.parse_args(shlex.split(line))
        except (argparse.ArgumentError, SystemExit) as exc:
            raise MagicError(f"%%rlm: {exc}; usage: %%rlm [--lm SPEC] [--context VAR_OR_FILE] [--max-iters N] "
                             "[--runs-dir DIR] [--trace-budget TOKENS] [--no-live] [--traceback] "
                             "[--decoding grammar|free]") from None
        try:
            return self._rlm(args, cell)
        except RLMLabError as exc:
            exc.show_traceback = args.traceback  # type: ignore[attr-defined]
            raise

    def _rlm(self, args: argparse.Namespace, cell: str) -> Any:
        from rlmlab.executors import run_rlm
        from rlmlab.jupyter._explorer import TrajectoryExplorer
        from rlmlab.lm import CALLS_FILE, make_lm, read_calls
        from rlmlab.trace import ContextTrace

        if args.trace_budget <= 0:
            raise MagicError(f"%%rlm: --trace-budget {args.trace_budget}; must be a positive number of tokens")
        ns = self.shell.user_ns
        context: Any = ""
        if args.context is not None:
            if args.context in ns:
                context = ns[args.context]
            elif Path(args.context).is_file():
                context = Path(args.context).read_text(encoding="utf-8")
            else:
                raise MagicError(f"%%rlm: --context {args.context!r} is neither a namespace variable nor a file")
        args.runs_dir = args.runs_dir or str(runs_home())
        # Everything that can fail on bad arguments comes before the timeline is displayed.
        try:
            lm = make_lm(args.lm)
        except (RLMLabError, ValueError) as exc:
            raise MagicError(f"%%rlm: --lm {args.lm}: {exc}") from None
        trace = ContextTrace(budget_tokens=args.trace_budget)
        turing = None
        if self.turing_on:
            from rlmlab.turing import TuringProtocol

            log = Path(args.runs_dir) / TURING_LOG
            log.parent.mkdir(parents=True, exist_ok=True)
            turing = TuringProtocol.from_config(log=log)
            self.turing_log = log
        timeline = _show_live(trace) if args.live else None
        try:
            traj = run_rlm(cell.strip(), context, lm=lm, workspace=ns.get("workspace"), max_iters=args.max_iters,
                           runs_dir=args.runs_dir, turing=turing, trace=trace, decoding=args.decoding)
        except RunInterrupted as exc:  # Kernel -> Interrupt: the steps so far are saved; IPython shows one line
            ns["rlm_last"] = exc.trajectory
            raise
        finally:
            if timeline is not None:
                timeline.close()  # unsubscribe, render the final state and update its output (static HTML too)
        ns["rlm_last"] = traj
        calls = read_calls(Path(args.runs_dir) / traj.run_id / CALLS_FILE)
        explorer = TrajectoryExplorer(traj, calls=calls)
        if traj.error:
            raise _failed(traj, calls, timeline, explorer)
        return explorer

    @line_magic
    def budget(self, line: str) -> Any:
        """The token-budget timeline of the last ``%%rlm`` run (or of a run directory: ``%budget runs/<id>``)."""
        from rlmlab.jupyter._budget import BudgetTimeline

        if line.strip():
            return BudgetTimeline.from_file(line.strip())
        traj = self.shell.user_ns.get("rlm_last")
        if traj is None or traj.context_trace is None:
            raise MagicError("%budget: no run yet; run a %%rlm cell first, or give a run directory")
        return BudgetTimeline.from_trajectory(traj)  # a recursive run's stacked by depth

    @line_magic
    def turing(self, line: str) -> Any:
        """``%turing on|off``: check ``%%rlm`` steps with the Turing Protocol (configs/turing.yaml); no argument
        shows the setting. ``%turing log [PATH]``: the interaction-log view of the last checked run's log (or of
        the SQLite log at PATH)."""
        arg, _, rest = line.strip().partition(" ")
        arg = arg.lower()
        if arg == "log":
            from rlmlab.jupyter._log_view import InteractionLogView

            path = Path(rest.strip()) if rest.strip() else self.turing_log
            if path is None:
                raise MagicError("%turing log: no checked run yet; run a %%rlm cell with %turing on, or give a log path")
            return InteractionLogView(path)
        if arg not in ("", "on", "off") or rest:
            raise MagicError("%turing: usage: %turing on|off, or %turing log [PATH]")
        if arg:
            self.turing_on = arg == "on"
        return f"Turing Protocol {'on' if self.turing_on else 'off'} for %%rlm"

    @line_magic
    def rlmlab_tools(self, line: str) -> Any:
        """List the rlmlab tools (one line each), with their result caps."""
        return self.shell.user_ns["tools"]()

    @line_cell_magic
    def ast_query(self, line: str, cell: str | None = None) -> Any:
        """Tree-sitter query over Rust source held in a BlobRef, a blob key, a variable or a file.

        Line form: ``%ast_query "(function_item name: (identifier) @name)" src/lib.rs [-k 50]``.
        Cell form: ``%%ast_query src/lib.rs [-k 50]`` with the query as the cell body.
        Returns the tool's result dict (matches with line numbers and captures).
        """
        args = shlex.split(line)
        k = 20
        if "-k" in args:
            i = args.index("-k")
            try:
                k = int(args[i + 1])
            except (IndexError, ValueError):
                raise MagicError("%ast_query: -k needs an integer, e.g. -k 50") from None
            del args[i:i + 2]
        if cell is None:
            if len(args) != 2:
                raise MagicError('%ast_query: usage: %ast_query "QUERY" SOURCE  (SOURCE: a BlobRef variable, '
                                 "a blob key or a file path)")
            query, source = args
        else:
            if len(args) != 1:
                raise MagicError("%%ast_query: usage: %%ast_query SOURCE, with the query as the cell body")
            query, source = cell, args[0]
        ns = self.shell.user_ns
        ref = ns[source] if source.isidentifier() and source in ns else source
        return ns["ast_query"](ref, query, k=k)


def _show_live(trace: Any) -> Any:
    """Display a live BudgetTimeline of ``trace`` now and return it; its ``close()`` updates that output.

    Outside a frontend (plain or terminal IPython) the display is its text form, and the widget still
    follows the trace; nothing here needs a kernel.
    """
    from rlmlab.jupyter._budget import BudgetTimeline

    timeline = BudgetTimeline(trace, live=True)
    timeline.show()
    return timeline


def _failed(traj: Any, calls: list[Any], timeline: Any, explorer: Any) -> RunFailed:
    """The one-line error of a %%rlm run that ended in an error; shows what there is to show first: the steps
    it made (the explorer), or, with none, a failed line in place of the empty timeline."""
    error = (traj.error or "").strip().splitlines()[0][:400] if traj.error else ""
    failed = sum(1 for c in calls if c.error)
    if traj.iterations:
        explorer.show()
        what = f"the run ended in an error after {len(traj.iterations)} step(s) (shown above)"
    else:
        what = (f"every LM call failed ({failed} of {len(calls)})" if calls and failed == len(calls)
                else "the run ended before its first step")
        if timeline is not None:
            timeline.replace_display(f"%%rlm failed: {what}: {error}")
    return RunFailed(f"%%rlm: {what}: {error} (rlm_last holds the trajectory)")


def short_error(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: int | None = None) -> list[str]:
    """IPython custom exception handler for RLMLabError: one line, unless ``%xmode Verbose`` is on or the error
    asks for its traceback (``%%rlm --traceback``)."""
    if shell.InteractiveTB.mode == "Verbose" or getattr(value, "show_traceback", False):
        stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    else:
        stb = [f"{etype.__name__}: {value}"]
    shell._showtraceback(etype, value, stb)
    return stb


def load(ipython: Any) -> None:
    ns = build_namespace()
    ipython.push(ns)
    _PUSHED[id(ipython)] = list(ns)
    ipython.register_magics(RLMLabMagics)
    ipython.set_custom_exc((RLMLabError,), short_error)


def unload(ipython: Any) -> None:
    for name in _PUSHED.pop(id(ipython), []):
        ipython.user_ns.pop(name, None)
    if ipython.custom_exceptions == (RLMLabError,):
        ipython.set_custom_exc((), None)
