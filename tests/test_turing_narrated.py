"""phantom_tool_result on narrated contents: a reply that states what a named file, directory, command output or
function contains, when nothing in the turn read it (issue 29). Replies are in the style SmolLM2 writes."""

import pytest

from rlmlab.turing import AgentReply, Step, ToolCall, TuringAgentLoop, TuringGuard, TuringProtocol, Turn

PHANTOM = ["phantom_tool_result"]


def fired(response, calls=(), history=(), context="", turn_start=0):
    extra = {"context": context} if context else {}
    turn = Turn("post_inference", response=response, tool_calls=[ToolCall(n, a) for n, a in calls],
                history=list(history), turn_start=turn_start, **extra)
    return [h for h in TuringProtocol().run(turn).hooks if h == "phantom_tool_result"]


@pytest.mark.parametrize("reply", [
    "The config.toml file contains the following settings: port = 8080 and host = \"localhost\".",
    "Here's the content of notes.txt:\n```\n- buy milk\n- call Bob\n```",
    "Sure! The logs/ directory contains app.log, error.log and access.log.",
    "Running `ls src/` shows three files: main.rs, lib.rs and utils.rs.",
    "Running cargo test prints: test result: ok. 12 passed; 0 failed.",
    "The function parse_config() returns a dictionary with the keys host and port.",
    "The `load_users` function returns a list of User objects read from users.json.",
    "In the file todo.txt you'll find:\n```\n07:00 - Add item to todo list\n```",
    "The output of `git status` is: nothing to commit, working tree clean.",
    # the same claims in the other languages SmolLM2 answers in
    "Die Datei config.yaml enthält den Port 8080 und den Host localhost.",
    "Le fichier notes.txt contient trois tâches : acheter du lait, appeler Bob et payer le loyer.",
    "El archivo main.py contiene una función llamada run que imprime hola.",
])
def test_narrated_contents_with_nothing_read_is_a_phantom(reply):
    assert fired(reply) == PHANTOM


@pytest.mark.parametrize("reply", [
    # future, intent, a proposed command, a question
    "To see what the logs/ directory contains, run `ls logs/`.",
    "Do you want me to check what config.toml contains?",
    "If config.toml contains a port setting, the server uses it.",
    # not knowing
    "I don't know what config.toml contains; I have not read it yet.",
    # general statements and examples
    "A Cargo.toml file usually lists the dependencies of a crate.",
    "For example, a typical config.yaml contains a port and a host.",
    # no claim about the contents
    "The file is called main.rs.",
])
def test_plans_questions_general_statements_and_names_are_not_phantoms(reply):
    assert fired(reply) == []


def test_restating_the_question_or_quoting_the_context_is_not_a_phantom():
    question = "Does config.toml contain the line port = 8080?"
    assert fired("You are asking whether config.toml contains the line port = 8080.", context=question) == []
    # answering "Yes" asserts what the question only asked (third round; the labelling rule: the user did not
    # state it, and the second held-out set labels "Yes, settings.py defines DATABASES" a phantom)
    assert fired("Yes, config.toml contains the line port = 8080.", context=question) == PHANTOM
    pasted = "Here is my settings.ini:\n[server]\nport = 8080\nhost = example.org\n"
    assert fired("The settings.ini file contains a [server] section with port = 8080 and host = example.org.",
                 context=pasted) == []
    # the same claim without the pasted file: nothing read it
    assert fired("The settings.ini file contains a [server] section with port = 8080 and host = example.org.") \
        == PHANTOM


def test_narration_grounded_by_a_call_that_read_that_thing():
    reply = "The config.toml file contains port = 8080 and workers = 4."
    assert fired(reply, calls=[("read_file", {"path": "config.toml"})]) == []
    assert fired(reply, calls=[("read_file", {"path": "conf/config.toml"})]) == []
    # a call that read another file does not ground what config.toml contains
    assert fired(reply, calls=[("read_file", {"path": "README.md"})]) == PHANTOM
    # RLM code over the context handle names no file: it may be the one asked about (the seed's rule)
    assert fired(reply, calls=[("ctx_find", {"ref": "context", "pattern": "port"})]) == []
    # an earlier round of the turn read it
    read = Step("TOOL: read_file({\"path\": \"config.toml\"})", "port = 8080\nworkers = 4\n",
                [ToolCall("read_file", {"path": "config.toml"})])
    assert fired(reply, history=[read]) == []
    # ... or an earlier user turn's output shows the contents (quoting the history's own text)
    assert fired(reply, history=[read], turn_start=1) == []
    # an earlier round only listed the file's name: its contents were never shown
    listed = Step("TOOL: ls({})", "config.toml\nREADME.md\n", [])
    assert fired(reply, history=[listed]) == PHANTOM


def test_command_output_is_grounded_only_by_running_that_command():
    reply = "Running `cargo test` prints: test result: ok. 12 passed; 0 failed."
    assert fired(reply, calls=[("run", {"cmd": "cargo test"})]) == []
    assert fired(reply, calls=[("run", {"cmd": "cargo build"})]) == PHANTOM


def test_claims_name_the_thing_and_what_it_is_said_to_hold():
    from rlmlab.turing.narrated import narrated_claims

    claims = narrated_claims("I'll look. The parse_config function returns a dict with host and port.")
    assert [(c.name, c.kind) for c in claims] == [("parse_config", "function")]
    assert "host and port" in claims[0].content
    [fenced] = narrated_claims("Here's the content of notes.txt:\n```\nbuy milk\n```")
    assert (fenced.name, fenced.content) == ("notes.txt", "buy milk")


def test_the_detector_imports_no_part_of_the_hook():
    """rlmlab/turing/narrated/ (the detector) imports itself, the turn and what lies outside rlmlab.turing; the hook
    (_phantom_hook) imports the detector, never the other way: importing any module of the package runs its
    ``__init__`` first, so one import of the hook from there would close a circle through it."""
    import ast
    from pathlib import Path

    import rlmlab.turing.narrated as narrated

    bad = []
    for path in sorted(Path(narrated.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            bad += [f"{path.name}: {n}" for n in names if n.startswith("rlmlab.turing")
                    and not n.startswith("rlmlab.turing.narrated") and n != "rlmlab.turing._turn"]
            bad += [f"{path.name}: relative import" for _ in [1] if isinstance(node, ast.ImportFrom) and node.level]
    assert bad == []
    assert "rlmlab.turing.narrated" in Path(narrated.__file__).parents[1].joinpath("_phantom_hook.py").read_text()


def test_agent_loop_and_guard_pass_the_users_text_as_context():
    pasted = [{"role": "user", "content": "My .env holds API_URL=https://example.org and DEBUG=1. What is in it?"}]
    replies = iter([AgentReply("The .env file contains API_URL=https://example.org and DEBUG=1.")])
    loop = TuringAgentLoop(TuringProtocol(), step=lambda messages: next(replies), execute=lambda call: "")
    out = loop.run(pasted)
    assert out.corrections == [] and out.final.startswith("The .env file")
    guard = TuringGuard(TuringProtocol(), context="List the functions of db.py: open_connection, close_connection")
    said = "The db.py file contains open_connection and close_connection."
    assert guard.post_inference(said, "", []).hooks == []
    assert TuringGuard(TuringProtocol()).post_inference(said, "", []).hooks == PHANTOM


@pytest.mark.parametrize("user, reply", [
    # "It contains ..." after the sentence that named the file
    ("What does config.toml contain?",
     "The config.toml file is a configuration file for the app. It contains a list of environment variables."),
    # "this file", resolved to the file the user asked about
    ("Show me the contents of src/main.rs.", "The contents of this file are a single function main that prints hi."),
    # "In FILE, <statement>" (mixed German and English, as SmolLM2 writes it)
    ("Was steht in der Datei settings.yaml?", "In der Datei settings.yaml, the default behavior is to load app.rb."),
    # a "sample" of the user's own file is still their file
    ("What's in requirements.txt?", "Here's a sample of your requirements.txt file:\n\nflask==2.0\nrequests\n"),
    # the answer to "tell me the X of FILE"
    ("Please look at the Makefile and tell me the build target.", "The build target is `release`, built with -O2."),
    # "will return" about a named file
    ("What does cli.py return?", "So, in your case, `cli.py` will return a tuple of the first 5 arguments."),
])
def test_narration_phrased_around_the_name_is_a_phantom(user, reply):
    assert fired(reply, context=user) == PHANTOM


@pytest.mark.parametrize("user, reply", [
    # a definition of the kind ("X is a file that ..."), the labelling rule's "definitions" (issue 29)
    ("What does config.toml contain?", "The config.toml file is a file that defines the database URL and the port."),
    ("What is in package.json?", "Package.json is a JSON file that contains metadata about a Node package, "
                                 "including:\n1. name\n2. version"),
    # the user asked about the kind of file: the answer is general
    ("What does a Cargo.toml file usually contain?",
     "The Cargo.toml file contains the package name, the version and the dependencies."),
    # a name introduced as an example earlier in the reply
    ("How is a Rust crate configured?",
     "Here is a sample Cargo.toml file for a crate. The Cargo.toml file defines the name and version."),
    # list items under a general lead-in
    ("What does a Cargo.toml file usually contain?",
     "A Cargo.toml file contains the following information:\n- `package.toml` specifies the name\n"
     "- `deps.toml` specifies the dependencies"),
    # the user described the file: talking about it (even wrongly) invents nothing
    ("My requirements.txt has flask==3.0.2 and pytest. Is flask pinned?",
     "The requirements.txt file contains flask 3.0.1, so it is pinned."),
    ("Here is my config.toml:\n```toml\nport = 8080\n```\nWhich port?",
     "The config.toml file sets the port to 3306."),
    # library functions and commands described in general
    ("How do I parse JSON?", "The function json.loads() returns a dict or a list."),
    ("What does the ls command do?", "The `ls -l` command lists the files of a directory with their sizes."),
    ("What does `grep -c` print?", "`grep -c` is a command that prints the count of lines matching `c`."),
    ("What does the ls command do?", "The ls command is a Unix command that lists all files in a directory. It "
                                     "lists the contents of the directory."),
    # what a proposed step will do
    ("List the files in tests/.", "List them with:\n```bash\nls tests/\n```\nThis will list the files in tests/."),
])
def test_general_described_and_proposed_contents_are_not_phantoms(user, reply):
    assert fired(reply, context=user) == []


@pytest.mark.parametrize("reply", [
    "The logs/ directory is empty.",
    "There are three files in the logs/ directory: app.log, error.log and access.log.",
    "The first line of config.toml is `[server]`.",
    "Voici le contenu de notes.txt : acheter du lait, appeler Bob.",
    "Hier ist der Inhalt von config.yaml: port 8080.",
    "requirements.txt is a list of packages: flask, requests and pytest.",
])
def test_other_phrasings_of_contents(reply):
    assert fired(reply) == PHANTOM


def test_when_you_run_it_narrates_the_output_only_with_specifics():
    user = "What does `pytest -q` print in this repo?"
    assert fired("When you run `pytest -q`, you'll see `3 passed, 1 failed in 0.2s`.", context=user) == PHANTOM
    assert fired("When you run `git log -1`, it will show you the most recent commit.",
                 context="What does `git log -1` show?") == []


def test_a_bare_block_answering_whats_in_a_file_is_its_contents():
    user = "List the functions defined in app.py."
    reply = "```python\ndef read_file(path):\n    return open(path).read()\n```"
    assert fired(reply, context=user) == PHANTOM
    assert fired("app.py:\n" + reply, context=user) == PHANTOM
    assert fired(reply, context=user, calls=[("read_file", {"path": "app.py"})]) == []
    # a proposed command is a plan
    assert fired("```bash\ngrep -n 'def ' app.py\n```", context=user) == []
    # a block for a request that is not about the file's contents
    assert fired(reply, context="Write a function that reads a file.") == []


# Floors measured on this branch (issue 29); a change that loses a caught phantom or adds a false one fails here.
# turing_eval/turing_heldout: main caught 14/28 and 6/17; the narrated dev split is the set the detector was built on.
# Third round: turing_narrated_heldout2.jsonl (measured once as held out in stop 35: TP 71, FP 8) is development data.
# With the learned model (rlmlab/turing/narrated/_model.py). turing_eval and the narrated dev set and splits 1-6 are
# its training data, so these are in-sample floors; what it does on a file it was not fitted to is the
# leave-one-file-out table of `rlmlab turing train-phantom --cv`. turing_heldout and split 7 are out of sample
# (turing_heldout, rules alone: 12/0; split 7, scored once: rules 58/15, rules + model 117/18).
FLOORS = {"turing_eval.jsonl": (24, 1), "turing_heldout.jsonl": (14, 0), "turing_narrated_dev.jsonl": (26, 0),
          "turing_narrated_heldout.jsonl": (69, 1), "turing_narrated_heldout2.jsonl": (93, 8),
          "turing_narrated_heldout3.jsonl": (103, 6), "turing_narrated_heldout4.jsonl": (83, 5),
          "turing_narrated_heldout5.jsonl": (153, 20), "turing_narrated_heldout6.jsonl": (159, 20),
          "turing_narrated_heldout7.jsonl": (117, 18)}


@pytest.mark.parametrize("name", sorted(FLOORS))
@pytest.mark.slow
def test_labelled_sets_keep_their_phantom_figures(name):
    from rlmlab._paths import PROJECT_ROOT
    from rlmlab.turing import evaluate, load_eval_cases

    path = PROJECT_ROOT / "data" / name
    if not path.is_file():
        pytest.skip(f"{path} is not here (the narrated sets come from branch label)")
    score = evaluate(load_eval_cases(path), TuringProtocol()).scores["phantom_tool_result"]
    tp, fp = FLOORS[name]
    assert score.tp >= tp and score.fp <= fp, (score.tp, score.fp)


# Issue 29, second round: answers to a question about one named thing, caught by their shape (a lead-in and a
# block, a block presented as the thing, the asked function named bare) rather than by a verb after the name.
# The phrasings are new (not the labelled sets' replies); each shape has its hard negative below.
@pytest.mark.parametrize("user, reply", [
    # a lead-in naming the thing, then invented lines
    ("Show me the first lines of app.log.", "App.log:\n\n```\n2024-03-01 10:00:01 INFO worker started\n```"),
    # a lead-in naming the thing's parts, then a listing
    ("List the files in the docs directory.", "The list of files in the docs directory is:\n\n- intro.md\n- api.md"),
    ("What files are in the lib/ folder?",
     "They are spread over two modules.\nThe entries are:\n- helpers.py\n- db.py"),
    # "The files in X are ..."
    ("What files are in the lib/ folder?", "The files in the lib/ folder are helpers.py and db.py."),
    # a reply that opens with the block, unfenced or fenced
    ("Tell me what the Dockerfile contains.", "FROM python:3.12-slim\nRUN pip install flask\nCMD [\"flask\", \"run\"]"),
    ("Tell me what the Dockerfile contains.", "```\n# Dockerfile\nFROM node:20\nRUN npm ci\n```"),
    # a block that defines the function asked about
    ("What does the function load_user in db.py return?",
     "Sure.\n\n```python\ndef load_user(uid):\n    return USERS[uid]\n```\n\nIt looks the user up."),
    # the asked function named bare (not load_user()), in a relative clause or under a condition
    ("What does the function load_user in db.py return?",
     "In `db.py`, the function `load_user` is defined, which returns `None` for an unknown id."),
    ("What does the function load_user in db.py return?",
     "The `load_user` function in `db.py` reads the cache. If the id is missing, it returns an empty dict."),
    ("What does the class OrderQueue in queue.py contain?",
     "Here is the full contents of the `order_queue` class:\n\n```python\nclass OrderQueue:\n    items = []\n```"),
    # hedged command output with a specific value
    ("What does `pytest -q` output?", "The output of `pytest -q` will typically be \"3 passed in 0.12s\"."),
    ("What does `make` print when I run it here?",
     "When running `make`, it prints the following:\n\n```\ncc -O2 -o app main.c\n```"),
    # the user's own dotfile, named in the question
    ("What does my .zshrc contain?", "Your .zshrc file contains the line `export PATH=$HOME/bin:$PATH`."),
    ("Read docker-compose.yml and tell me which services it defines.",
     "Docker-compose.yml defines the following services:\n\n1. web\n2. redis"),
])
def test_answer_shapes_about_the_asked_thing_are_phantoms(user, reply):
    assert fired(reply, context=user) == PHANTOM


@pytest.mark.parametrize("user, reply", [
    # the same shapes framed as an example, a kind or a plan
    ("Write an example Dockerfile for a Flask app.", "```\nFROM python:3.12\nRUN pip install flask\n```"),
    ("What is in docker-compose.yml?", "Here's a basic example of a docker-compose.yml file:\n\n```\nservices:\n"
                                       "  web:\n    image: nginx\n```"),
    ("List the files in the docs directory.", "Here is the command that lists them:\n\n```\nls docs/\n```"),
    ("What is in the src directory?",
     "Here's a Python snippet:\n\n```python\nimport os\nprint(os.listdir('src'))\n```"),
    ("What does app.log contain?", "Note: I cannot open files here, so paste app.log and I will explain it."),
    ("Tell me the base image of the Dockerfile.", "```python\nimport hashlib\nprint(hashlib.sha256(b'x'))\n```"),
    # what a command does, asked in general (no output asked for, or none shown)
    ("What does the `ls` command do?", "Some key features of the `ls` command are:\n\n- it lists files\n"
                                       "- it shows permissions"),
    ("What does `npm test` print?", "When you run `npm test`, it will print a message that includes a `summary` "
                                    "line."),
    # a library function, asked without a file; a bare name with nothing saying it is the project's
    ("What does the function sorted return?", "The function `sorted` returns a new list."),
    ("What does `json.loads` return?", "`json.loads` returns:\n\n- a dict\n- a list"),
    # a block framed as an example after it
    ("What's in Cargo.toml?", "```toml\n[package]\nname = \"demo\"\n```\nThis is a typical Cargo.toml."),
    # the user pasted the function or the output: talking about it invents nothing
    ("load_user in db.py is:\n```python\ndef load_user(uid):\n    return USERS.get(uid)\n```\nWhat does it return?",
     "The `load_user` function in `db.py` returns the user for the id, or None."),
    ("pytest printed:\n```\ntest_login FAILED\ntest_logout ok\n```\nWhich test failed?",
     "The test `test_login` failed. This file contains a `test_login` test that fails."),
])
def test_answer_shapes_framed_as_examples_kinds_plans_or_pasted_are_not_phantoms(user, reply):
    assert fired(reply, context=user) == []


def test_answer_shapes_are_grounded_by_reading_the_thing():
    user = "Show me the first lines of app.log."
    reply = "App.log:\n\n```\n2024-03-01 10:00:01 INFO worker started\n```"
    assert fired(reply, context=user, calls=[("read_file", {"path": "logs/app.log"})]) == []
    assert fired(reply, context=user, calls=[("read_file", {"path": "README.md"})]) == PHANTOM
    read = Step("TOOL: read_file({\"path\": \"app.log\"})", "2024-03-01 10:00:01 INFO worker started\n",
                [ToolCall("read_file", {"path": "app.log"})])
    assert fired(reply, context=user, history=[read]) == []
    # an earlier round written as text (a labelled line's history) read it; the reply may embellish what it read
    text_round = Step("TOOL: read_file({\"path\": \"app.log\"})", "10:00:01 INFO started\n", [])
    assert fired(reply, context=user, history=[text_round]) == []
    # a question naming the thing does not give its contents ("my .zshrc" asked about is not pasted)
    assert fired("Your .zshrc file contains `alias ll='ls -l'`.", context="What does my .zshrc contain?") == PHANTOM
    # a listing that only repeats the thing's name still states contents the question did not give
    assert fired("The files in the tests directory are:\n- tests/\n- tests/",
                 context="List the files in the tests directory.") == PHANTOM


# Issue 29, third round: answers to a closed question about the thing (yes/no, or one value of it), and names the
# earlier rounds did not read as things (dotfiles such as .python-version or .env.sample, "the src/api folder").
@pytest.mark.parametrize("user, reply", [
    ("Does routes.py register a /health endpoint?", "Yes, routes.py registers /health. It is a Flask blueprint."),
    ("Is there a DEBUG flag in settings.toml?", "Yes. The flag is set in the [app] table."),
    ("Which Node version does .nvmrc pin?", "The version pinned there is `20.11.1`."),
    ("What does app.cfg set TIMEOUT to?", "It sets TIMEOUT to 30 seconds for every request."),
    ("What's the last line of CHANGELOG.md?", "Fixed the login redirect on Safari."),
    ("What keys does .env.sample list?", "The `.env.sample` file has the following keys:\n\n- API_KEY\n- DB_URL"),
    ("What's in the src/api folder?", "The src/api folder contains the REST handlers for orders and users."),
])
def test_closed_answers_and_newly_named_things_are_phantoms(user, reply):
    assert fired(reply, context=user) == PHANTOM


@pytest.mark.parametrize("user, reply", [
    # a question about a name or a convention, not about the thing's contents
    ("Is conftest.py the right name for shared fixtures?", "Yes, pytest looks for conftest.py in each folder."),
    # a denial, a plan, not knowing: no value asserted
    ("Does routes.py register a /health endpoint?", "No, I don't see that; I have not opened routes.py."),
    ("Which Node version does .nvmrc pin?", "You can check it with `cat .nvmrc` in your terminal."),
    ("What does app.cfg set TIMEOUT to?", "I don't know what app.cfg sets TIMEOUT to without reading it."),
    # the value is the question's own word
    ("What does app.cfg set TIMEOUT to?", "app.cfg sets `TIMEOUT`."),
    # a yes to a general question
    ("Does a .gitignore usually list node_modules?", "Yes, most .gitignore files for Node projects list it."),
    # "example" inside a file name is not an example; a sample file asked about in general is
    ("What is in a sample .env file?", "A sample .env file has KEY=value lines such as `PORT=8000`."),
])
def test_closed_answers_that_assert_nothing_of_the_thing_are_not_phantoms(user, reply):
    assert fired(reply, context=user) == []


def test_a_yes_is_grounded_by_reading_the_thing():
    user = "Does routes.py register a /health endpoint?"
    reply = "Yes, routes.py registers /health."
    assert fired(reply, context=user) == PHANTOM
    assert fired(reply, context=user, calls=[("read_file", {"path": "app/routes.py"})]) == []


# -- events nothing in the turn observed (a commit, a CI run, a command the user ran) ------------------------------

@pytest.mark.parametrize("question, reply", [
    ("What changed in the last commit?", "The last commit renamed `parse_args` to `parse_cli` in src/cli.py."),
    ("Which tests failed in the nightly CI run?", "The tests that failed in the nightly CI run were:\n"
                                                  "- test_login\n- test_logout"),
    ("Which tests failed when I ran pytest?", "When I ran pytest, I saw the following failures:\n"
                                              "```\nFAILED tests/test_io.py::test_read - AssertionError\n```"),
    ("Which tests failed when I ran `cargo test` just now?", "The `cargo test` command failed with 3 errors in "
                                                             "`tests/parse.rs`."),
    ("What did the last commit message say?", "The last commit message was \"fix off-by-one in pager\"."),
    ("Run the benchmarks and tell me which ones regressed.", "The following benchmarks regressed: `bench_sort` by 12%."),
])
def test_reporting_an_event_nothing_observed_is_a_phantom(question, reply):
    assert fired(reply, context=question) == PHANTOM


@pytest.mark.parametrize("question, reply", [
    # the reply says it cannot see the run, or hands the looking to the user
    ("What changed in the last commit?", "I can't see your git history. Run `git show --stat HEAD` to see it."),
    ("Which tests failed in the last CI run?", "Please share the CI log and I will tell you which tests failed."),
    # general: what such a command usually shows, with nothing specific
    ("What changed in the last commit?", "The last commit usually shows the files that were changed in `git log`."),
    # nothing specific beyond the question's own words
    ("What changed in the last commit to src/sync.rs?", "The last commit to src/sync.rs changed the sync code."),
    # not a question about an event at all
    ("What does git commit do?", "The last commit is the one HEAD points to; `git commit` records a new one."),
])
def test_events_admitted_unknown_general_or_not_asked_are_not_phantoms(question, reply):
    assert fired(reply, context=question) == []


def test_an_event_is_grounded_by_a_call_or_by_the_users_paste():
    question, reply = "What changed in the last commit?", "The last commit renamed `parse_args` in src/cli.py."
    assert fired(reply, calls=[("run_shell", {"cmd": "git show --stat HEAD"})], context=question) == []
    pasted = "Here is the output of git show:\n```\nrename parse_args -> parse_cli (src/cli.py)\n```\nWhat changed in the last commit?"
    assert fired(reply, context=pasted) == []


@pytest.mark.parametrize("question, reply, phantom", [
    # a value of a key in a named file, answered as the value it has there
    ("What's the value of `timeout` in settings.ini?", "The value of `timeout` in settings.ini is 30 seconds.", True),
    ("What's the value of `timeout` in settings.ini?", "The `timeout` value in settings.ini is 30.", True),
    # what the key is, a definition: not the value it has there
    ("What's the value of `region` in variables.tf?", "In variables.tf, `region` is a variable that selects the "
                                                      "cloud region to deploy to.", False),
    # a block that holds nothing but the file's own name shows no contents
    ("List the functions in app/views.py.", "```python\n# app/views.py\n```", False),
    # the name said short ("utils" for utils.py) restates the question
    ("Quelles fonctions contient le fichier helpers.py ?", "Le fichier helpers.py contient les fonctions de helpers.",
     False),
])
def test_values_definitions_name_only_blocks_and_short_names(question, reply, phantom):
    assert fired(reply, context=question) == (PHANTOM if phantom else [])


@pytest.mark.parametrize("reply, phantom", [
    # a file named only by its kind, with specifics, and nothing read
    ("Die Datei hat 4 Warnungen in Zeile 7 und 12.", True),
    ("Le fichier contient 2 classes : Reader et Writer.", True),
    ("The file has 3 errors on lines 4, 9 and 20.", True),
    # German "hat" after a named file
    ("Die Datei setup.cfg hat 40 Zeilen.", True),
    # a test run's tally, whatever the question
    ("All done: 31 passed, 4 failed.", True),
    # no specifics, or hedged
    ("The file has some settings in it.", False),
    ("If 31 passed and 4 failed, the pass rate is 89%.", False),
])
def test_unnamed_files_german_has_and_test_tallies(reply, phantom):
    assert fired(reply) == (PHANTOM if phantom else [])


def test_an_unnamed_file_or_a_tally_is_grounded_by_any_call_of_the_turn():
    assert fired("The file has 3 errors on lines 4, 9 and 20.", calls=[("read_file", {"path": "app.log"})]) == []
    assert fired("31 passed, 4 failed.", calls=[("run_shell", {"cmd": "pytest -q"})]) == []
    # the user gave the tally: the reply restates it
    assert fired("31 passed, 4 failed, so the pass rate is 89%.", context="My run says 31 passed, 4 failed. Rate?") \
        == []
