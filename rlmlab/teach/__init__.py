"""The teacher-learner loop (seed 002): bias detection, confidence, RTS reprompt policy, STOP rules.

Started: the teacher (``detect_bias``, ``combine_confidence``, ``bucket``), the RTS policy and templates, the STOP
rules with expected gain, and the datasets. The learners and the runner come next.
"""

from rlmlab.teach._data import DatasetError, Item, answers_match, load_csv, load_dataset, load_gsm8k, normalise_answer
from rlmlab.teach._policy import (
    DEFAULT_TEMPLATES, RTS_RULES, TEMPLATE_SCHEMA, Decision, Template, TemplateNotFound, load_templates, rts_rule,
    select_template,
)
from rlmlab.teach._stop import DEFAULT_STOP_RULES, ExpectedGain, StopRules, load_stop_rules
from rlmlab.teach._teacher import BIASES, TEACHER_CONFIDENCE, BiasResult, bucket, combine_confidence, detect_bias

__all__ = [
    "DEFAULT_TEMPLATES", "RTS_RULES", "TEMPLATE_SCHEMA", "Decision", "Template", "TemplateNotFound",
    "load_templates", "rts_rule", "select_template", "DEFAULT_STOP_RULES", "ExpectedGain", "StopRules",
    "load_stop_rules", "DatasetError", "Item", "answers_match", "load_csv", "load_dataset", "load_gsm8k",
    "normalise_answer", "BIASES", "TEACHER_CONFIDENCE", "BiasResult", "bucket", "combine_confidence", "detect_bias",
]
