"""The scorecard: does each seed's claim hold on a given model? One row per claim, its paired effect, interval
and verdict (``rlmlab scorecard``, ``notebooks/scorecard.ipynb``)."""

from rlmlab.scorecard._claims import CLAIMS, SEEDS, Claim, NotMeasured, Paired, claim
from rlmlab.scorecard._context import ScoreContext, experiment_arm
from rlmlab.scorecard._cost import MEASURED, ArmCost, Plan, arm_costs, plan_scorecard
from rlmlab.scorecard._procs import Part, auto_procs, partition, usable_cores
from rlmlab.scorecard._long_context import (E15_FILE, LongContextRow, long_context_markdown, long_context_study,
                                           plot_long_context, study_sizes)
from rlmlab.scorecard._learner import (CODE_FIRST_INSTRUCTIONS, CodeFirstLearner, expression_grammar, number_counts,
                                      question_numbers)
from rlmlab.scorecard._run import (
    DEFAULT_N, MEASURE_KEYS, QUICK_N, SCORECARD_FILE, ROW_FIELDS, Scorecard, ScoreRow, read_scorecard, run_scorecard,
    score_claim,
    select_claims,
)
from rlmlab.scorecard._stats import (
    DIRECTIONS, VERDICTS, Z95, Comparison, n_to_decide, n_to_decide_paired, newcombe_paired, paired_binary,
    paired_bootstrap, paired_continuous, verdict, wilson,
)
from rlmlab.scorecard._table import plot_scorecard, scorecard_html, scorecard_markdown, scorecard_table

__all__ = [
    "long_context_study", "long_context_markdown", "plot_long_context", "study_sizes",
    "CLAIMS", "SEEDS", "Claim", "NotMeasured", "Paired", "claim", "ScoreContext",
    "MEASURED", "ArmCost", "Plan", "plan_scorecard", "Part", "auto_procs", "partition",
    "usable_cores",
    "CodeFirstLearner", "expression_grammar", "question_numbers", "number_counts",
    "DEFAULT_N", "QUICK_N", "SCORECARD_FILE", "ROW_FIELDS", "Scorecard", "ScoreRow", "read_scorecard", "run_scorecard",
    "score_claim", "select_claims",
    "VERDICTS", "Z95", "n_to_decide", "newcombe_paired",
    "paired_binary", "paired_continuous", "verdict", "wilson",
    "plot_scorecard", "scorecard_markdown",
]
