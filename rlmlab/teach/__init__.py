"""The teacher-learner loop (seed 002): a teacher reprompts a learner on one item until STOP rules end it.

Not :mod:`rlmlab.learning` (seed 004, the ReasoningBank loop): ``teach`` improves one answer within an item by
reprompting (across items it keeps only flip counts for its STOP rule); ``learning`` runs agents and keeps what
worked across tasks as items in a memory bank.

Learners (demo simulator, any DSPy LM with log-prob self-confidence, k-sample voting) answer; on the embedded
model ``LMLearner`` is code-first by default (``decoding="code"``: one expression over the question's numbers,
computed by the host). The teacher (``detect_bias``, ``combine_confidence``, ``bucket``) judges; the RTS policy
picks a template; STOP rules end the item. ``run_teach`` runs single pass, try-again and RTS in both teacher modes
and writes traces.json.
"""

from rlmlab.numbers import solve_arithmetic
from rlmlab.teach._config import DEFAULT_RUN_CONFIG, RunConfig, load_run_config
from rlmlab.teach._expression import (
    CODE_INSTRUCTIONS, TURN_SEED_STRIDE, code_answer, expression_grammar, number_counts, question_numbers,
    read_expression,
)
from rlmlab.teach._data import DatasetError, Item, answers_match, load_csv, load_dataset, load_gsm8k, normalise_answer
from rlmlab.teach._learner import DECODINGS, DemoLearner, Exchange, LearnerAnswer, LMLearner, VotingLearner
from rlmlab.teach._loop import (
    ARMS, TEACHER_MODES, ArmSummary, JudgedTurn, apply_turn, check_arm_mode, judge_turn, run_arm, run_item,
)
from rlmlab.teach._traces import TRACES_SCHEMA, ItemTrace, TurnRecord, read_traces, write_traces
from rlmlab.teach._policy import (
    DEFAULT_TEMPLATES, RTS_RULES, TEMPLATE_SCHEMA, Decision, Template, TemplateNotFound, load_templates, rts_rule,
    select_template,
)
from rlmlab.teach._run import TeachReport, finished_teach, make_learner, run_teach
from rlmlab.teach._stop import DEFAULT_STOP_RULES, ExpectedGain, StopRules, load_stop_rules
from rlmlab.teach._teacher import BIASES, TEACHER_CONFIDENCE, BiasResult, bucket, combine_confidence, detect_bias

__all__ = [
    "solve_arithmetic", "RunConfig", "load_run_config", "DemoLearner", "Exchange",
    "LearnerAnswer", "LMLearner", "VotingLearner", "ARMS", "TEACHER_MODES", "TRACES_SCHEMA", "ItemTrace",
    "TurnRecord", "judge_turn", "apply_turn", "check_arm_mode", "read_traces", "run_arm",
    "run_item", "write_traces", "TeachReport", "make_learner", "run_teach", "finished_teach",
    "RTS_RULES", "Template", "TemplateNotFound",
    "load_templates", "rts_rule", "select_template", "ExpectedGain", "StopRules",
    "load_stop_rules", "DatasetError", "Item", "answers_match", "load_csv", "load_dataset", "load_gsm8k",
    "normalise_answer", "BIASES", "bucket", "combine_confidence", "detect_bias",
    "CODE_INSTRUCTIONS", "TURN_SEED_STRIDE", "code_answer", "expression_grammar", "number_counts", "question_numbers",
    "read_expression", "DECODINGS",
]
