"""The ReasoningBank learning loop (seed 004): what an agent learns on one task is kept for the next ones.

Not :mod:`rlmlab.teach` (seed 002, the teacher-learner loop): ``teach`` reprompts a learner within one item and
keeps no memory; ``learning`` sits above the executors: it runs an agent on each task, judges the
trajectories, extracts memory items from them, consolidates and forgets, and writes all of it to a
:class:`rlmlab.memory.MemoryStore` in one transaction per task. Judges, extractors, consolidators and forgetters
are plug-ins in registries (``JUDGES.make("numeric", rel_tol=1e-3)``); a vote or the judge's score picks the
rollout a task keeps (MaTTS)."""

from rlmlab.learning._judge import (CodeJudge, ExactJudge, JUDGES, Judge, NumericJudge, SetJudge, SparqlJudge,
                                    answer_items, judge_for)
from rlmlab.learning._judge_oracle import CANNOT_JUDGE, OracleJudge
from rlmlab.learning._contains import CONTAINS_MAX_WORDS, ContainsJudge  # registers "contains"
from rlmlab.learning._judge_keyfree import (  # registers "oracle", "constraints", "vote"
    KEYFREE_JUDGES, ConstraintsJudge, VoteJudge, arith_implausible, judge_rollouts, keyfree_judge_for,
    keyfree_kind,
)
from rlmlab.learning._judge_llm import DEFAULT_RUBRIC, RUBRICS, LLMJudge, parse_llm_verdict  # registers "llm"
from rlmlab.learning._extract import EXTRACTORS, MAX_EXTRACT_ITEMS, ExtractionReport, Extractor, HeuristicExtractor
from rlmlab.learning._extract_llm import EXTRACT_PROMPTS, LLMExtractor  # registers the "llm" extractor
from rlmlab.learning._abstract import (
    Abstraction, SlotBinding, abstract_code, abstract_trajectory, fill_slots, minimal_code, query_literals,
)
from rlmlab.learning._replay import (
    Intervention, ReplayResult, Sibling, intervention, replay_code, replay_template, replay_workspace,
)
from rlmlab.learning._extract_template import TemplateExtractor  # registers the "template" extractor
from rlmlab.learning._siblings import SIBLING_SIMILARITY, nearest_siblings
from rlmlab.learning._consolidate import (
    CONSOLIDATION_ACTIONS, CONSOLIDATORS, AppendConsolidator, ConsolidationAction, Consolidator,
    SimilarityConsolidator, merge_contents, similarity,
)
from rlmlab.learning._forget import (
    FORGETTERS, BoundedForgetter, FailingForgetter, ForgetAction, Forgetter, NoForgetter, memory_health,
    retention_score, task_outcomes,
)
from rlmlab.learning._vote import (
    SELECTIONS, VOTE_STOPS, batch_seeds, majority, select_rollout, settled, settling_size,
)
from rlmlab.learning._agreement import AgreementCase, JudgeAgreement, judge_agreement
from rlmlab.learning._recall import (
    AFTER_RETRIEVAL, BEFORE_RETRIEVAL, RecallReport, right_templates, run_template, solves, task_kind, template_fills,
    template_fits, template_recall,
)
from rlmlab.learning._loop import EXTRACTION_MODES, RESULTS_FILE, ReasoningBankLoop, TaskOutcome, rlm_executor

__all__ = [
    "Judge", "JUDGES", "judge_for", "ExactJudge", "NumericJudge", "SparqlJudge", "CodeJudge", "LLMJudge", "RUBRICS",
    "OracleJudge", "ConstraintsJudge", "VoteJudge", "arith_implausible", "keyfree_judge_for",
    "keyfree_kind",
    "judge_rollouts", "CANNOT_JUDGE", "judge_agreement",
    "parse_llm_verdict",
    "Extractor", "EXTRACTORS", "HeuristicExtractor", "LLMExtractor", "ExtractionReport", "EXTRACT_PROMPTS",
    "TemplateExtractor", "abstract_trajectory", "abstract_code",
    "minimal_code", "fill_slots", "Sibling",
    "replay_code", "replay_workspace", "intervention", "nearest_siblings",
    "Consolidator", "CONSOLIDATORS", "ConsolidationAction",
    "similarity", "merge_contents",
    "Forgetter", "FORGETTERS", "BoundedForgetter", "FailingForgetter",
    "retention_score", "task_outcomes", "memory_health",
    "SELECTIONS", "batch_seeds", "majority", "select_rollout", "settled", "settling_size",
    "template_recall", "template_fits", "right_templates", "run_template", "solves", "task_kind",
    "BEFORE_RETRIEVAL", "AFTER_RETRIEVAL",
    "ReasoningBankLoop", "TaskOutcome", "rlm_executor",
]
