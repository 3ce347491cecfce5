"""Judges without the answer key (oracle, constraints, vote) on real tasks of the suites, with the reference
answer and plausible wrong ones, compared with the reference judge; their choice per suite; and the loop
judging a task's rollouts together."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rlmlab.executors import Trajectory
from rlmlab.experiments import load_suite
from rlmlab.learning import (
    CANNOT_JUDGE, JUDGES, ConstraintsJudge, OracleJudge, VoteJudge, judge_agreement, judge_for, judge_rollouts,
    keyfree_judge_for,
)
from rlmlab.memory import MemoryTask

TASKS = {t.id: t for suite in ("code", "ontology", "arith") for t in load_suite(suite)}
PROV = "PREFIX prov: <http://www.w3.org/ns/prov#>\nPREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"


def traj(answer, i=0):
    return Trajectory(run_id=f"t{i}", query="q", lm="given", context_mode="handle", answer=answer,
                      submitted=answer is not None)


def both(task_id, answer):
    """(key-free verdict, reference verdict) for one answer."""
    task = TASKS[task_id]
    return keyfree_judge_for(task).judge(task, traj(answer)), judge_for(task).judge(task, traj(answer))


def reference_answer(task: MemoryTask) -> str:
    ref = task.meta.get("reference") if task.expected is None else task.expected
    return ref[0] if isinstance(ref, list) else str(ref)


def test_each_suite_gets_its_key_free_judge():
    assert isinstance(keyfree_judge_for(TASKS["code-l2-03"]), OracleJudge)
    assert isinstance(keyfree_judge_for(TASKS["onto-l1-01"]), ConstraintsJudge)
    assert isinstance(keyfree_judge_for(TASKS["arith-math20-q1"]), VoteJudge)
    assert {"oracle", "constraints", "vote"} <= set(JUDGES.names())
    with pytest.raises(Exception, match="min_votes"):
        JUDGES.make("vote", min_votes=1)


# -- oracle ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("task_id, wrong", [
    ("code-l2-03", "count + 1"),  # how many unwrap calls (grep oracle)
    ("code-l1-01", "pub fn set_len(&self, size: u64) -> io::Result<()>"),  # signature without async
    ("code-l1-03", "bool"),  # return type (tree-sitter facts: TraceValidator does not classify it)
    ("code-l1-04", "yes"),  # does the file define a pub struct (facts; the grep oracle would count structs)
])
def test_oracle_agrees_with_the_reference_on_right_and_wrong_answers(task_id, wrong):
    task = TASKS[task_id]
    right = reference_answer(task)
    if wrong == "count + 1":
        wrong = str(int(right) + 1)
    mine, truth = both(task_id, right)
    assert mine.success and truth.success, mine.rationale
    mine, truth = both(task_id, wrong)
    assert not mine.success and not truth.success, mine.rationale
    assert mine.confidence == 1.0


@pytest.mark.parametrize("query", [
    "What does fn wait in sync/barrier.rs return? Answer with the return type only.",
    "What is the return type of wait in sync/barrier.rs? Give the type only.",
    "Which type does wait (sync/barrier.rs) return? Answer with the type only.",
    "What type does the method `wait` return? It is in sync/barrier.rs.",
])
def test_oracle_reads_the_return_type_however_the_question_asks(query, tokio_src):
    task = MemoryTask("rt", query, "", "crate:tokio", None, "exact",
                      {"source_path": str(tokio_src / "sync" / "barrier.rs")})
    judge = OracleJudge()
    right, wrong = judge.judge(task, traj("BarrierWaitResult")), judge.judge(task, traj("bool"))
    assert right.success and right.confidence == 1.0 and "tree-sitter" in right.rationale, right.rationale
    assert not wrong.success and wrong.confidence == 1.0, wrong.rationale


@pytest.mark.parametrize("query", [
    "Does {p} define a struct named {n}? Answer yes or no.",
    "Is a struct called {n} declared in {p}? Answer yes or no.",
    "Answer yes or no: does the file {p} declare struct {n}?",
    "Is there a struct named {n} defined in {p}?",
])
def test_oracle_reads_whether_a_file_defines_a_struct_however_the_question_asks(query, tokio_src):
    path = tokio_src / "sync" / "barrier.rs"  # defines Barrier and BarrierWaitResult, not Semaphore
    judge = OracleJudge()
    for name, defined in (("BarrierWaitResult", True), ("Semaphore", False)):
        task = MemoryTask("def", query.format(p="sync/barrier.rs", n=name), "", "crate:tokio", None, "exact",
                          {"source_path": str(path)})
        yes, no = judge.judge(task, traj("yes")), judge.judge(task, traj("no"))
        assert (yes.success, no.success) == (defined, not defined), (name, yes.rationale)
        assert "tree-sitter" in yes.rationale  # not the grep oracle's count of structs


@pytest.mark.parametrize("task_id, wrong", [
    ("code-l5-04", "bytes.rs"),  # the file of the bytes crate with the most unsafe blocks
    ("code-l5-05", "11"),  # distinct traits implemented by impl blocks in mio's net module
])
def test_oracle_computes_aggregates_from_tree_sitter_facts(task_id, wrong):
    mine, truth = both(task_id, reference_answer(TASKS[task_id]))
    assert mine.success and truth.success and mine.rationale.startswith("tree-sitter"), mine.rationale
    mine, truth = both(task_id, wrong)
    assert not mine.success and not truth.success and mine.confidence == 1.0, mine.rationale


@pytest.mark.slow  # 0.3 s or more a case: make test, not make check
def test_oracle_finds_the_most_implemented_trait_the_hand_labelled_task_names():
    task = TASKS["code-l5-06"]  # labelled by hand: AsyncRead, Future not counted
    asked = replace(task, query="Which trait is implemented by the largest number of distinct types in the io/util "
                                "module, counting impl blocks only (not derives) and not counting Future? Answer "
                                "with the trait name.")
    judge = keyfree_judge_for(task)
    assert judge.judge(asked, traj("AsyncRead")).success
    assert judge.judge(asked, traj("`tokio::io::AsyncRead`")).success  # a path to it names it too
    wrong = judge.judge(asked, traj("AsyncWrite"))
    assert not wrong.success and wrong.confidence == 1.0, wrong.rationale


def test_oracle_says_cannot_judge_where_no_oracle_can():
    # the most implemented trait, without saying whether derives count
    mine, truth = both("code-l5-06", reference_answer(TASKS["code-l5-06"]))
    assert truth.success and not mine.success
    assert mine.confidence == 0.0 and mine.rationale.startswith(CANNOT_JUDGE), mine.rationale
    task = replace(TASKS["code-l5-04"], query="Which file of the bytes crate has the fewest lines?")
    mine = keyfree_judge_for(task).judge(task, traj("lib.rs"))  # an aggregate nothing computes
    assert mine.confidence == 0.0 and mine.rationale.startswith(CANNOT_JUDGE), mine.rationale


# -- constraints ----------------------------------------------------------------------------------------------

DR = PROV + "SELECT ?domain ?range WHERE {{ {p} rdfs:domain ?domain ; rdfs:range ?range }}"


@pytest.mark.parametrize("task_id, answer, passes, why", [
    ("onto-l1-01", None, True, "runs"),
    ("onto-l1-01", PROV + "SELECT ?label WHERE { prov:Entity rdfs:label ?label }", False, "does not use prov:Activity"),
    ("onto-l1-01", PROV + "SELECT ?label ?c WHERE { prov:Activity rdfs:label ?label ; rdfs:comment ?c }", False,
     "asks for 1"),
    # issue 18: the right answer is empty; a guessed term is not
    ("onto-l1-07", None, True, "prov:Process is not in the ontology"),
    ("onto-l1-07", PROV + "SELECT ?l WHERE { prov:Activity rdfs:label ?l }", False, "does not use prov:Process"),
    # direction: the inverse property, and domain and range reversed
    ("onto-l2-08", None, True, "runs"),
    ("onto-l2-08", DR.format(p="prov:wasGeneratedBy"), False, "does not use prov:generated"),
    ("onto-l3-07", PROV + "SELECT ?property WHERE { ?property rdfs:domain prov:Activity ; rdfs:range prov:Entity }",
     False, "no triple pattern"),
    # empty result although every term exists
    ("onto-l1-01", PROV + "SELECT ?label WHERE { prov:Activity rdfs:label ?label . ?label rdfs:label ?label }",
     False, "no rows"),
    ("onto-l1-01", PROV + "SELECT ?label WHERE { prov:Activity rdfs:label ?label", False, "does not parse"),
])
def test_constraints_on_real_ontology_tasks(task_id, answer, passes, why):
    task = TASKS[task_id]
    answer = task.expected if answer is None else answer
    mine, truth = both(task_id, answer)
    assert mine.success is passes, mine.rationale
    assert why in mine.rationale
    assert truth.success is passes  # these answers: the reference judge agrees


# -- vote -----------------------------------------------------------------------------------------------------

def program(answer, code, i=0, query="q"):
    """A rollout whose one step wrote ``code`` and submitted ``answer``."""
    from rlmlab.executors import IterationRecord
    from rlmlab.trace import IterationLeakage

    t = traj(answer, i)
    t.query = query
    t.iterations = [IterationRecord(index=1, reasoning="", code=code, output="", tool_calls=[],
                                    leakage=IterationLeakage(iteration=1), input_tokens=0, output_tokens=0,
                                    elapsed_ms=0)]
    return t


def test_vote_passes_the_agreeing_majority_only():
    task = TASKS["arith-math20-q3"]  # 125 + 389 = 514
    judge = VoteJudge(min_votes=3, plausible=False)  # the bare vote: every answer votes, no exact value
    verdicts = judge_rollouts(judge, task, [traj(a, i) for i, a in enumerate(["514", "514", "515", "514.0", "1028"])])
    assert [v.success for v in verdicts] == [True, True, False, True, False]
    disagreeing = judge.judge_rollouts(task, [traj(a, i) for i, a in enumerate(["514", "515", "516", "517", None])])
    assert not any(v.success for v in disagreeing)
    tied = judge.judge_rollouts(task, [traj(a, i) for i, a in enumerate(["514", "514", "1", "1", "2", "2"])])
    assert not any(v.success for v in tied) and "tied" in tied[0].rationale
    wrong_majority = judge.judge_rollouts(task, [traj(a, i) for i, a in enumerate(["515", "515", "515", "514"])])
    assert [v.success for v in wrong_majority] == [True, True, True, False]  # a vote is not the truth
    alone = judge.judge(task, traj("514"))
    assert not alone.success and alone.rationale.startswith(CANNOT_JUDGE)


def test_only_plausible_rollouts_vote_on_a_word_problem():
    task = TASKS["arith-gsm-1"]  # 48 clips in April and half as many in May: 72
    q = task.query
    agreeing_wrong = [program("24", "SUBMIT(answer=48 / 2)", i, q) for i in range(3)]  # writes 48: plausible
    right = [program("72", "answer = 48 + 48 / 2\nSUBMIT(answer=answer)", 3, q)]
    verdicts = VoteJudge(min_votes=3).judge_rollouts(task, agreeing_wrong + right)
    assert [v.success for v in verdicts] == [True, True, True, False]  # plausible and agreeing is still no proof

    # the model's typical failures: a product of numbers the question does not give, a retyped constant
    made_up = [program("4", "SUBMIT(answer=2 * 2)", i, q) for i in range(3)]
    verdicts = VoteJudge(min_votes=3).judge_rollouts(task, made_up + right)
    assert not any(v.success for v in verdicts)
    assert "never uses 48" in verdicts[0].rationale
    assert all(v.success for v in VoteJudge(min_votes=3, plausible=False).judge_rollouts(task, made_up))

    how_many = TASKS["arith-gsm-1"]
    for answer, code, why in [("-24", "SUBMIT(answer=24 - 48)", "negative"), ("36.5", "SUBMIT(answer=48 * 0.76)",
                                                                                   "not whole"),
                              ("clips", "SUBMIT(answer='clips' + str(48))", "not a number")]:
        verdicts = VoteJudge(min_votes=3).judge_rollouts(how_many, [program(answer, code, i, q) for i in range(3)])
        assert not any(v.success for v in verdicts) and why in verdicts[0].rationale, verdicts[0].rationale


def test_a_question_that_states_its_arithmetic_is_judged_by_its_value():
    for query, right, wrong in [("What is 125 + 389?", "514", "515"), ("How much is 40 percent of 1140?", "456",
                                                                     "45600"),
                                ("Calculate 12 * 9 + 300. Answer with a number.", "408", "3900")]:
        task = MemoryTask(id="t", query=query, check="numeric")
        majority_wrong = [traj(wrong, i) for i in range(3)] + [traj(right, 3)]
        assert [v.success for v in VoteJudge(min_votes=3).judge_rollouts(task, majority_wrong)] == \
            [False, False, False, True]
        assert VoteJudge().judge(task, traj(right)).success  # one rollout is enough: no vote is taken


def test_agreement_counts_precision_and_recall_against_the_reference():
    cases = [
        (TASKS["arith-math20-q3"], ["514", "514", "514", "515", "1028"], "right majority"),
        (TASKS["arith-math20-q3"], ["515", "515", "515", "514", "1"], "wrong majority"),
        (TASKS["onto-l1-01"], [TASKS["onto-l1-01"].expected], "reference"),
        (TASKS["onto-l2-08"], [DR.format(p="prov:wasGeneratedBy")], "inverse"),
        (TASKS["code-l2-03"], [reference_answer(TASKS["code-l2-03"])], "reference"),
        (TASKS["code-l5-04"], [reference_answer(TASKS["code-l5-04"])], "reference"),
        (TASKS["code-l5-06"], [reference_answer(TASKS["code-l5-06"])], "reference"),
    ]
    reports = judge_agreement(cases, group_of=lambda task, label: label)
    vote = reports["vote"]  # "What is 125 + 389?" states its arithmetic: judged by its exact value, not the vote
    assert vote.counts() == {"tp": 4, "fp": 0, "fn": 0, "tn": 6, "abstain": 0}
    assert vote.precision() == 1.0 and vote.recall() == 1.0
    assert vote.precision("right majority") == 1.0 and vote.precision("wrong majority") == 1.0
    assert reports["constraints"].counts() == {"tp": 1, "fp": 0, "fn": 0, "tn": 1, "abstain": 0}
    oracle = reports["oracle"]
    assert oracle.counts() == {"tp": 2, "fp": 0, "fn": 1, "tn": 0, "abstain": 1}
    assert oracle.precision() == 1.0 and oracle.recall() == pytest.approx(2 / 3)


def test_the_loop_judges_a_tasks_rollouts_together(tmp_path):
    from rlmlab.learning import ReasoningBankLoop
    from rlmlab.memory import MemoryStore

    task = TASKS["arith-math20-q3"]
    answers = iter(["514", "514", "999", "514", "7"])

    def executor(task, instructions, workspace, trajectory_id):
        return Trajectory(run_id=trajectory_id, query=task.query, lm="given", context_mode="handle",
                          answer=next(answers), submitted=True)

    with MemoryStore(tmp_path / "m.sqlite") as store:
        loop = ReasoningBankLoop(store, executor=executor, judge="vote", extractor="none", rollouts=5)
        outcome = loop.run_task(task)
    assert [v["success"] for v in outcome.verdicts] == [True, True, False, True, False]
    assert outcome.success and outcome.answers[outcome.best] == "514"


def test_items_the_loop_extracts_carry_the_tasks_shape(tmp_path):
    from rlmlab.learning import ReasoningBankLoop
    from rlmlab.memory import MemoryItem, MemoryStore, query_shape

    task = TASKS["arith-math20-q3"]

    def executor(task, instructions, workspace, trajectory_id):
        return Trajectory(run_id=trajectory_id, query=task.query, lm="given", context_mode="handle",
                          answer="514", submitted=True)

    class OneTemplate:  # an extractor that learns one template and says nothing of shapes
        def extract(self, task, trajectory, verdict):
            return [MemoryItem(title="Add two numbers", description="a + b", content="add them", polarity="success",
                               template="answer = {{a:number}} + {{b:number}}\nSUBMIT(answer=answer)")]

    with MemoryStore(tmp_path / "m.sqlite") as store:
        outcome = ReasoningBankLoop(store, executor=executor, extractor=OneTemplate()).run_task(task)
        items = store.get_many(outcome.extracted)
    assert len(items) == 1 and items[0].shape == query_shape(task.query) == "What is {number} + {number}?"
