"""Experiments E1-E15: task suites with deterministic checkers, validated configs, and the runner that
writes results, memory snapshots and the environment of every run under runs/<run-id>/."""

from rlmlab.experiments._config import (
    EXPERIMENT_SCHEMA, EXPERIMENTS_DIR, Condition, ExperimentConfig, list_experiments, load_experiment,
)
from rlmlab.experiments._backends import BACKENDS
from rlmlab.experiments._env import environment
from rlmlab.experiments._interrupt import INTERRUPTED_FILE, RunInterruption, read_interruption, without_resume_hint
from rlmlab.experiments._learning import (
    CURVE_WINDOW, bank_figures, fifths, learning_curve, learning_figures, learning_line, learning_table,
    plot_learning,
)
from rlmlab.experiments._params import as_list, finished_run, latest_run
from rlmlab.experiments._phases import EXPERIMENT_PHASES, SuiteJudge, load_test_suite
from rlmlab.experiments._notebooks import (
    FAMILIES, MAIN_JOB, NOTEBOOKS_DIR, NotebookFailed, NotebookRun, notebook_for, parse_parameter, run_notebook,
)
from rlmlab.experiments._report import (
    compare_table, plot_conditions, plot_learning_curve, plot_rollouts, plot_tasks, results_table,
)
from rlmlab._figures import figure, summary_label  # the figures (label, unit, format) results tables use
from rlmlab.experiments._runs import (
    TASK_COLUMNS, condition_stats, find_row, is_experiment_run, outcome, row_trajectory_dir, run_rows, task_runs_table,
    time_table,
)
from rlmlab.experiments._runner import (
    ExperimentRun, read_results, run_experiment, sample_lm, summarise, summary_columns, summary_table,
)
from rlmlab.experiments._rerun import Rerun, compare_runs, environment_differences, rerun_experiment
from rlmlab.experiments._inspect import INSPECT_FORMATS, export_inspect, inspect_log, listed_by_inspect_view
from rlmlab.learning import SELECTIONS, majority, select_rollout
from rlmlab.numbers import vote_key  # what a vote compares: one key per answer (rlmlab.numbers)
from rlmlab.experiments._suites import (
    CHECKERS, MAX_CONTEXT_CHARS, SUITES, TASK_SCHEMA, TASKS_DIR, SuiteError, Task, list_suites, load_suite,
    read_tasks, task_context, task_numbers, DOCS_DIR,
)

__all__ = [
    "Task", "SUITES", "MAX_CONTEXT_CHARS", "SuiteError", "read_tasks",
    "load_suite", "task_context", "task_numbers", "DOCS_DIR",
    "ExperimentConfig", "Condition", "load_experiment", "list_experiments",
    "run_experiment", "ExperimentRun", "read_results", "summarise", "summary_table", "environment", "BACKENDS",
    "run_notebook", "notebook_for", "MAIN_JOB", "parse_parameter", "NotebookFailed", "FAMILIES", "NOTEBOOKS_DIR",
    "compare_table", "TASK_COLUMNS", "condition_stats", "find_row", "is_experiment_run", "outcome",
    "row_trajectory_dir", "run_rows", "time_table",
    "results_table", "plot_conditions", "plot_learning_curve", "plot_rollouts", "plot_tasks", "figure", "summary_label",
    "sample_lm", "vote_key", "majority", "select_rollout", "SELECTIONS",
    "learning_curve", "learning_line", "learning_table", "fifths", "plot_learning",
    "RunInterruption", "read_interruption", "INTERRUPTED_FILE", "without_resume_hint", "as_list", "finished_run",
    "rerun_experiment", "compare_runs",
    "export_inspect", "inspect_log", "listed_by_inspect_view",
]
