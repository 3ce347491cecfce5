"""The README, docs/*.md and notebooks/README.md against the code, so they cannot drift (issue 55).

Nothing here runs a command. Every ``rlmlab ...`` line (fenced or inline) is parsed by the real click CLI: the
subcommand must exist and every option it uses must be one of that command's. Every ``make X`` names a Makefile
target. Every ```python block compiles, and the rlmlab names it imports resolve; so do the dotted ``rlmlab.x.y``
names and repository paths the prose quotes in backticks. Every relative link and image exists. The README is a
quickstart: at most 150 lines, ``make demo`` and ``make test`` on its first screen, a link to every docs page.
The notebooks' README and the CLI's help name the experiments the notebooks and configs really hold.
The last tests feed a broken page to each check, so none of them passes vacuously.
"""

from __future__ import annotations

import ast
import importlib
import re
import shlex
from pathlib import Path

import click
import pytest

from rlmlab import PROJECT_ROOT
from rlmlab.cli import main as CLI

ROOT = Path(PROJECT_ROOT)
PAGES = [ROOT / "README.md", ROOT / "notebooks" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 150
FIRST_SCREEN = 40

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"(?<!`)`([^`\n]+(?:\n[^`\n]+)*?)`(?!`)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
SHELL_LANGS = {"bash", "sh", "console", "shell"}
REPO_DIRS = ("rlmlab", "tests", "benchmarks", "data", "configs", "notebooks", "studies", "docs", "kernels")
PLACEHOLDER = re.compile(r"[<>*{}…|]|\.\.\.|\s")


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


# --- reading a page -------------------------------------------------------------------------------------------

def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block."""
    return [(m.group(1).lower(), m.group(2)) for m in FENCE.finditer(text)]


def prose(text: str) -> str:
    """The page without its fenced blocks."""
    return FENCE.sub("", text)


def inline_spans(text: str) -> list[str]:
    """Every inline code span of the prose, its line breaks folded to spaces."""
    return [" ".join(m.group(1).split()) for m in INLINE.finditer(prose(text))]


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True)
    except ValueError:  # an unbalanced quote in prose: plain words are enough to find options
        return line.split("#")[0].split()


def command_lines(text: str) -> list[list[str]]:
    """Every command the page shows, as words: each line of a shell block, then each inline span."""
    lines = [ln for lang, body in fenced_blocks(text) if lang in SHELL_LANGS
             for ln in body.replace("\\\n", " ").splitlines()]
    words = [_words(ln) for ln in lines]
    spans = [_words(span) for span in inline_spans(text)]  # prose: only spans that start with the command
    words += [w for w in spans if w and (w[0] in {"rlmlab", "make"} or w[0].endswith("/rlmlab"))]
    return [w for w in words if w]


def _after(words: list[str], program: str) -> list[list[str]]:
    """The arguments of each call of ``program`` in a line (up to a pipe, ``&&``, ``;`` or a redirection)."""
    calls = []
    for i, w in enumerate(words):
        if w == program or w.endswith(f"/{program}"):
            rest = []
            for a in words[i + 1:]:
                if a in {"|", "||", "&&", ";", ">", ">>", "2>&1"} or a.startswith((">", "|")):
                    break
                rest.append(a)
            calls.append(rest)
    return calls


# --- the checks: each returns the problems it found, one line each -------------------------------------------

def _expand(args: list[str]) -> list[list[str]]:
    """Drop a usage line's optional-argument brackets, read an ellipsis as a value, split ``a|b`` into calls."""
    out = ["X" if a.strip("[]") in {"...", "…"} else a.strip("[]") for a in args if a.strip("[]")]
    i = next((i for i, a in enumerate(out) if "|" in a and not a.startswith("-")), None)
    return [out] if i is None else [[*out[:i], alt, *out[i + 1:]] for alt in out[i].split("|")]


def check_cli(args: list[str], cli: click.Command = CLI) -> str | None:
    """None when ``rlmlab ARGS`` names a real command with options it has; else what is wrong.

    Click's own option parser splits the words (an unknown option, or an option short of its values, is its
    error); nothing is converted or run, so placeholders such as QUERY or N stand for any value."""
    cmd, path, rest = cli, ["rlmlab"], list(args)
    while True:
        ctx = click.Context(cmd, info_name=path[-1])
        try:
            _, remaining, _ = cmd.make_parser(ctx).parse_args(args=list(rest))
        except click.UsageError as exc:
            return f"`{' '.join(path)}`: {exc.format_message()}"
        if not isinstance(cmd, click.Group) or not remaining:
            return None
        sub = cmd.get_command(ctx, remaining[0])
        if sub is None:
            return f"`{' '.join(path)}` has no command {remaining[0]!r} (it has: {', '.join(cmd.list_commands(ctx))})"
        cmd, path, rest = sub, [*path, remaining[0]], remaining[1:]


def shell_programs(text: str, program: str = "rlmlab") -> list[str]:
    """How each line of the page's shell blocks calls ``program``: the word as typed (``rlmlab``,
    ``.venv/bin/rlmlab``)."""
    lines = [ln for lang, body in fenced_blocks(text) if lang in SHELL_LANGS
             for ln in body.replace("\\\n", " ").splitlines()]
    return [w for ln in lines for w in _words(ln) if w == program or w.endswith(f"/{program}")]


def check_program(text: str, way: str) -> list[str]:
    """Every rlmlab call in the page's shell blocks typed ``way``, as the README types it: a newcomer who ran
    ``make demo`` has no bare ``rlmlab`` on PATH until the venv is activated."""
    return [f"a shell block calls `{w} ...`; the README calls `{way} ...`" for w in shell_programs(text) if w != way]


def makefile_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {t for line in re.findall(r"^([A-Za-z0-9_. -]+):(?!=)", text, re.M) for t in line.split()}


def check_commands(text: str, targets: set[str] | None = None, cli: click.Command = CLI) -> list[str]:
    targets = makefile_targets() if targets is None else targets
    problems = []
    for words in command_lines(text):
        for args in _after(words, "rlmlab"):
            for call in _expand(args):
                if (problem := check_cli(call, cli)) is not None:
                    problems.append(f"{problem}  [in: {' '.join(words)}]")
        for args in _after(words, "make"):
            problems += [f"`make {t}`: no such Makefile target" for t in args
                         if not t.startswith("-") and "=" not in t and t not in targets]
    return problems


def _resolves(dotted: str) -> bool:
    """Whether ``a.b.c`` is a module or an attribute chain from the longest importable module prefix."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:n]))
        except ImportError:
            continue
        try:
            for attr in parts[n:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def _python_sources(text: str) -> list[str]:
    """Each ```python block as code (a ``>>>`` session keeps its input lines only)."""
    out = []
    for lang, body in fenced_blocks(text):
        if lang not in {"python", "py", "pycon"}:
            continue
        if any(ln.startswith(">>>") for ln in body.splitlines()):
            body = "\n".join(ln[4:] for ln in body.splitlines() if ln.startswith((">>> ", "... ")))
        out.append(body)
    return out


def _imported_names(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rlmlab":
            names += [f"{node.module}.{a.name}" for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names if a.name.split(".")[0] == "rlmlab"]
    return names


def check_python(text: str) -> list[str]:
    problems = []
    for src in _python_sources(text):
        try:
            tree = ast.parse(src)
        except SyntaxError as exc:
            problems.append(f"python block does not compile: {exc.msg} (line {exc.lineno}): {src.strip()[:80]!r}")
            continue
        problems += [f"python block imports {n}, which does not exist" for n in _imported_names(tree)
                     if not _resolves(n)]
    for span in inline_spans(text):  # `from rlmlab.x import A, B` in prose
        if span.startswith(("from rlmlab", "import rlmlab")):
            try:
                tree = ast.parse(span.rstrip(",;."))
            except SyntaxError:
                continue
            problems += [f"`{span}`: {n} does not exist" for n in _imported_names(tree) if not _resolves(n)]
    return problems


def check_names(text: str) -> list[str]:
    """Dotted ``rlmlab.x.y`` names and repository paths quoted in the prose exist."""
    problems = []
    for span in inline_spans(text):
        name = re.sub(r"\(.*$", "", span)  # `rlmlab.x.f(...)` names rlmlab.x.f
        if re.fullmatch(r"rlmlab(\.[A-Za-z_]\w*)+", name) and not _resolves(name):
            problems.append(f"`{span}`: no such name")
        if span.split("/")[0] in REPO_DIRS and "/" in span and not PLACEHOLDER.search(span) \
                and not (ROOT / span).exists():
            problems.append(f"`{span}`: no such file or directory in the repository")
    return problems


def check_links(text: str, page: Path) -> list[str]:
    problems = []
    for target in LINK.findall(prose(text)):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#")[0]).resolve()
        if not path.exists():
            problems.append(f"link or image {target!r}: {_rel(path)} does not exist")
    return problems


OWN_QUESTION = "Ask your own question"  # the README's section on asking rlmlab about one's own file


def check_own_question(text: str, screen: str) -> list[str]:
    """The first screen links the README's "Ask your own question" section and gives its command (its first
    ``rlmlab`` call's subcommand), so a newcomer finds how to ask about their own file without scrolling."""
    section = re.search(rf"^## {OWN_QUESTION}[ \t]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if section is None:
        return [f"README.md has no '{OWN_QUESTION}' section"]
    anchor = "#" + re.sub(r"[^\w\- ]", "", OWN_QUESTION.lower()).replace(" ", "-")
    problems = [] if f"]({anchor})" in screen else [f"README.md's first {FIRST_SCREEN} lines do not link {anchor}"]
    asks = [call[:2] for words in command_lines(section.group(1)) for call in _after(words, "rlmlab")]
    shown = [call[:2] for words in command_lines(screen) for call in _after(words, "rlmlab")]
    if asks and asks[0] not in shown:
        problems.append(f"README.md's first {FIRST_SCREEN} lines do not give `rlmlab {' '.join(asks[0])}`")
    return problems


def check_readme(text: str, docs: list[Path]) -> list[str]:
    lines = text.splitlines()
    screen = "\n".join(lines[:FIRST_SCREEN])
    problems = [f"README.md has {len(lines)} lines; a quickstart has at most {README_MAX_LINES}"] \
        if len(lines) > README_MAX_LINES else []
    problems += [f"README.md's first {FIRST_SCREEN} lines do not give `{c}`" for c in ("make demo", "make test")
                 if not re.search(rf"^{c}\b", screen, re.M)]
    problems += [f"README.md does not link docs/{d.name}" for d in docs if f"(docs/{d.name}" not in text]
    problems += check_own_question(text, screen)
    problems += ["README.md shows no picture"] if not re.search(r"!\[[^\]]*\]\(", text) else []
    return problems


# --- the tests ---------------------------------------------------------------------------------------------

def _ids(paths: list[Path]) -> list[str]:
    return [_rel(p) for p in paths]


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_commands_exist(page):
    assert check_commands(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_python_blocks_compile_and_import(page):
    assert check_python(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_quoted_names_and_paths_exist(page):
    assert check_names(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_links_and_images_exist(page):
    assert check_links(page.read_text(encoding="utf-8"), page) == []


def readme_way() -> str:
    """How the README's shell blocks call rlmlab: one way, the one the docs follow."""
    ways = set(shell_programs((ROOT / "README.md").read_text(encoding="utf-8")))
    assert len(ways) == 1, f"the README calls rlmlab in several ways: {sorted(ways)}"
    return ways.pop()


@pytest.mark.parametrize("page", PAGES[1:], ids=_ids(PAGES[1:]))
def test_pages_call_rlmlab_as_the_readme_does(page):
    assert check_program(page.read_text(encoding="utf-8"), readme_way()) == []


def test_readme_is_a_quickstart():
    assert check_readme((ROOT / "README.md").read_text(encoding="utf-8"), sorted((ROOT / "docs").glob("*.md"))) == []


def test_every_page_shows_something_checkable():
    """A page the checks cannot see into (no command, no code) would pass them vacuously."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert command_lines(text) or _python_sources(text), f"{_rel(page)}: no command or code block to check"


def _experiment_ids() -> list[int]:
    return sorted(int(p.stem[1:]) for p in (ROOT / "configs" / "experiments").glob("E*.yaml"))


def _all_help(cmd: click.Command, name: str = "rlmlab") -> list[tuple[str, str]]:
    out = [(name, " ".join(filter(None, [cmd.help, *(getattr(p, "help", None) or "" for p in cmd.params)])))]
    if isinstance(cmd, click.Group):
        for sub_name, sub in cmd.commands.items():
            out += _all_help(sub, f"{name} {sub_name}")
    return out


def test_help_names_every_experiment():
    """A help text that gives the experiments' range (E1..En) gives the configs' range."""
    last = _experiment_ids()[-1]
    wrong = [(name, m.group(0)) for name, text in _all_help(CLI)
             for m in re.finditer(r"E1\s*(?:\.\.|–|-)\s*E(\d+)", text) if int(m.group(1)) != last]
    assert wrong == [], f"configs go to E{last}; these help texts say otherwise: {wrong}"


def test_demo_help_and_the_setup_page_say_the_same_of_the_free_baseline():
    """`rlmlab demo --help` and docs/setup.md give each free-baseline option the same default and the same meaning
    of 0; and none of the demo's help, the setup page or the README says the free baseline takes most of the
    demo's time (measured, it does not: the demo took about 6 minutes warm, E14 about 3 of them)."""
    demo = CLI.commands["demo"]
    setup = (ROOT / "docs" / "setup.md").read_text(encoding="utf-8")
    said = " ".join(setup.split()).replace("`", "")
    for param in (p for p in demo.params if p.name in {"free_tasks", "free_suites"}):
        flag = param.opts[0]
        docs = re.search(rf"{flag} \(default (\d+); 0: ([^)]+)\)", said)
        assert docs, f"docs/setup.md gives no default and meaning of 0 for {flag}"
        helped = re.search(r"\(0: ([^)]+)\)", param.help or "")
        assert int(docs.group(1)) == param.default and helped and helped.group(1) == docs.group(2), flag
    claims = re.compile(r"\bmost of (its|the (demo|job)'s) (time|minutes)|\bslow (condition|part)\b", re.I)
    texts = {"rlmlab demo --help": " ".join(t for _, t in _all_help(demo, "rlmlab demo")), "docs/setup.md": setup,
             "README.md": (ROOT / "README.md").read_text(encoding="utf-8"),
             "notebooks/main_job.ipynb": (ROOT / "notebooks" / "main_job.ipynb").read_text(encoding="utf-8")}
    assert {name: m.group(0) for name, text in texts.items() if (m := claims.search(" ".join(text.split())))} == {}


def test_notebooks_readme_says_what_each_notebook_runs():
    """Each notebook is listed; each family notebook's row names its experiments; the guides name their defaults."""
    from rlmlab.experiments import FAMILIES, MAIN_JOB
    from rlmlab.experiments._notebooks import notebook_parameters

    text = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([\w.]+\.ipynb)` \|.*$", text, re.M)}
    on_disk = {p.name for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert sorted(on_disk - rows.keys()) == [], "notebooks/README.md does not list these notebooks"
    assert sorted(rows.keys() - on_disk) == [], "notebooks/README.md lists notebooks that do not exist"
    assert sorted(e for ids in FAMILIES.values() for e in ids) == sorted(f"E{n}" for n in _experiment_ids())
    for name, ids in FAMILIES.items():
        assert ids[0] in rows[name] and ids[-1] in rows[name], f"{name} runs {ids}: its row says {rows[name]!r}"
    def default(notebook: str, name: str):
        value = notebook_parameters(ROOT / "notebooks" / notebook)[name]
        return ast.literal_eval(value) if isinstance(value, str) else value

    explore = default("01_explore_traces.ipynb", "experiment")
    assert re.search(rf"\b{explore}\b", rows["01_explore_traces.ipynb"]), f"01_explore_traces runs {explore}"
    main_job = default(MAIN_JOB, "experiments")
    for experiment in main_job:
        assert experiment in rows[MAIN_JOB], f"{MAIN_JOB} runs {experiment}; its row does not say so"
    named = set(re.findall(r"\bE\d+\b", rows[MAIN_JOB]))
    runs = set(main_job) | ({"E14"} if default(MAIN_JOB, "learn_tasks") else set())  # its learning part is E14's
    assert named <= runs, f"{MAIN_JOB}'s row names experiments it does not run: {sorted(named - runs)}"


# --- the checks fail on a broken page ---------------------------------------------------------------------

BROKEN = """# A page that drifted

```bash
rlmlab rlm run "q" file.rs --no-such-option 3
rlmlab experiment launch E1
make no-such-target
```

`rlmlab memory import|serach --db x.sqlite` and `rlmlab.experiments.no_such_function`, from `benchmarks/gone.py`.

```python
from rlmlab import run_rlm, no_such_name
```

```python
def broken(:
```

![a picture](img/missing.png) and [a guide](no-such-page.md).
"""


def test_checks_fail_on_a_broken_page(tmp_path):
    page = tmp_path / "broken.md"
    page.write_text(BROKEN, encoding="utf-8")
    commands = "\n".join(check_commands(BROKEN))
    assert "--no-such-option" in commands
    assert "has no command 'launch'" in commands
    assert "has no command 'serach'" in commands and "'import'" not in commands
    assert "no-such-target" in commands
    python = "\n".join(check_python(BROKEN))
    assert "rlmlab.no_such_name" in python and "run_rlm" not in python
    assert "does not compile" in python
    names = "\n".join(check_names(BROKEN))
    assert "no_such_function" in names and "benchmarks/gone.py" in names
    assert check_program(BROKEN, ".venv/bin/rlmlab") == [
        "a shell block calls `rlmlab ...`; the README calls `.venv/bin/rlmlab ...`"] * 2
    links = "\n".join(check_links(BROKEN, page))
    assert "img/missing.png" in links and "no-such-page.md" in links


def test_readme_check_fails_on_a_long_readme_without_the_commands():
    long = "# rlmlab\n" + "text\n" * 60 + "make demo\nmake test\n" + "more\n" * 100
    problems = "\n".join(check_readme(long, [ROOT / "docs" / "setup.md"]))
    assert "at most 150" in problems and "`make demo`" in problems and "`make test`" in problems
    assert "docs/setup.md" in problems and "no picture" in problems
    assert f"no '{OWN_QUESTION}' section" in problems
    lower = long.replace("more\n" * 100, f"## {OWN_QUESTION}\n\n```bash\nrlmlab rlm run Q FILE\n```\n")
    problems = "\n".join(check_readme(lower, []))
    assert "do not link #ask-your-own-question" in problems and "do not give `rlmlab rlm run`" in problems


def test_a_real_command_passes():
    assert check_cli(["rlm", "run", "QUERY", "FILE", "--lm", "local", "--max-depth", "2"]) is None
    assert check_cli(["experiment", "notebook", "E7", "-p", "lm", "local", "-p", "tasks", "10"]) is None
    assert check_cli(["experiment", "notebook", "E7", "-p", "lm"]) is not None  # -p takes NAME VALUE
