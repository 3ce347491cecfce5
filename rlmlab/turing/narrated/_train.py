"""Train and cross-validate the learned ``phantom_tool_result`` model (``rlmlab turing train-phantom``).

scikit-learn fits it (``pip install -e '.[train]'``; the tests install it): ``CountVectorizer`` over the rows'
features (a turn's :func:`~rlmlab.turing._phantom_hook.turn_features`; those seen in fewer than ``min_df`` turns
dropped), ``TfidfTransformer(sublinear_tf=True)``, ``LogisticRegression(C, class_weight="balanced")``. The fitted
numbers go into a :class:`~rlmlab.turing.narrated.PhantomModel`, which scores without scikit-learn.

Cross-validation leaves one labelled file out at a time (each file is one labeller's split, so this measures what a
new labeller's phrasings do to it) and scores the rules alone and the rules with the model on the file left out.
The rows come from the hook (:func:`~rlmlab.turing._phantom_hook.phantom_rows`: labelled turns with the rules'
verdict), so this module reads rows only, never a turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rlmlab._paths import PROJECT_ROOT
from rlmlab.turing._turn import Turn
from rlmlab.turing.narrated._model import PhantomModel

__all__ = ["PHANTOM_TRAIN_FILES", "PHANTOM_THRESHOLDS", "PhantomRow", "fit_phantom_model", "cross_validate_phantom",
           "pick_threshold"]

# The training files: the narrated-contents dev set and splits 1-6 (data/turing_narrated.README.md) and the hooks'
# dev set (turing_eval.jsonl: agent steps with no user message). Left out, for evaluation: the hooks' held-out set
# (turing_heldout.jsonl) and split 7 (turing_narrated_heldout7.jsonl). How each split was scored before it joined,
# and why a refit with split 7 was not shipped: studies/turing_narrated/REPORT.md.
PHANTOM_TRAIN_FILES = tuple(PROJECT_ROOT / "data" / f"turing_narrated_{s}.jsonl"
                            for s in ("dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6")) + (
    PROJECT_ROOT / "data" / "turing_eval.jsonl",)
C_DEFAULT, THRESHOLD_DEFAULT, MIN_DF_DEFAULT, MAX_PRECISION_LOSS_DEFAULT = 10.0, 0.55, 2, 0.01
PHANTOM_THRESHOLDS = tuple(round(0.30 + 0.05 * i, 2) for i in range(9))  # 0.30 ... 0.70, the grid pick_threshold reads


@dataclass(frozen=True)
class PhantomRow:
    file: str
    id: str
    turn: Turn
    expected: bool
    rules: bool  # the rules alone fire (detected and validated)
    features: tuple[str, ...]  # the turn's features with ``fired`` = ``rules``
    may_fire: bool  # the hook lets the model add a detection on this turn (its model_may_fire)


def fit_phantom_model(rows: Sequence[PhantomRow], *, c: float = C_DEFAULT, threshold: float = THRESHOLD_DEFAULT,
                      min_df: int = MIN_DF_DEFAULT, meta: dict[str, Any] | None = None) -> PhantomModel:
    """Fit on ``rows``; the model fires at ``threshold`` (scored only where the rules did not fire)."""
    try:
        from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise RuntimeError("training the phantom model needs scikit-learn: pip install -e '.[train]'") from None
    labels = [r.expected for r in rows]
    if len(set(labels)) < 2:
        raise ValueError(f"{len(rows)} labelled turns, all {'positive' if labels and labels[0] else 'clean'}; "
                         "expected both phantom and clean turns")
    counts = CountVectorizer(analyzer=lambda feats: list(feats), min_df=min_df, lowercase=False)
    x = counts.fit_transform([r.features for r in rows])
    tfidf = TfidfTransformer(sublinear_tf=True)
    x = tfidf.fit_transform(x)
    fitted = LogisticRegression(C=c, max_iter=5000, class_weight="balanced").fit(x, labels)
    names = counts.get_feature_names_out()
    weights = {str(f): (float(tfidf.idf_[i]), float(fitted.coef_[0][i])) for i, f in enumerate(names)}
    info = {"c": c, "min_df": min_df, "turns": len(rows), "positive": sum(labels), **(meta or {})}
    return PhantomModel(weights, float(fitted.intercept_[0]), threshold, info)


def _counts(pairs: Iterable[tuple[bool, bool]]) -> dict[str, Any]:
    pairs = list(pairs)
    tp = sum(e and g for e, g in pairs)
    fp = sum(g and not e for e, g in pairs)
    fn = sum(e and not g for e, g in pairs)
    return {"n": len(pairs), "tp": tp, "fp": fp, "fn": fn,
            "precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "recall": round(tp / (tp + fn), 3) if tp + fn else None}


def _model_score(model: PhantomModel, row: PhantomRow) -> float:
    """``model``'s score of a row the rules did not flag (its features are the turn's with ``fired`` False); 0.0
    where the hook does not let the model fire."""
    return model.score(list(row.features)) if row.may_fire else 0.0


def cross_validate_phantom(rows: Sequence[PhantomRow], *, c: float = C_DEFAULT,
                           thresholds: Sequence[float] = (THRESHOLD_DEFAULT,), min_df: int = MIN_DF_DEFAULT,
                           progress=None) -> dict[str, Any]:
    """Leave one file out: fit on the others, score the one left out; per file and pooled, for the rules alone
    and for the rules with the model at each threshold."""
    files = sorted({r.file for r in rows}, key=[r.file for r in rows].index)
    if len(files) < 2:
        raise ValueError("cross-validation needs at least two labelled files (it leaves one out at a time)")
    scored: list[tuple[PhantomRow, float]] = []
    for name in files:
        if progress:
            progress(name)
        model = fit_phantom_model([r for r in rows if r.file != name], c=c, min_df=min_df)
        scored += [(r, 1.0 if r.rules else _model_score(model, r)) for r in rows if r.file == name]
    out: dict[str, Any] = {"c": c, "min_df": min_df, "files": files, "rules": {}, "model": {}}
    for name in files + ["pooled"]:
        part = [(r, p) for r, p in scored if name in (r.file, "pooled")]
        out["rules"][name] = _counts((r.expected, r.rules) for r, _ in part)
        out["model"][name] = {str(t): _counts((r.expected, p >= t) for r, p in part) for t in thresholds}
    return out


def pick_threshold(cv: dict[str, Any], max_loss: float = MAX_PRECISION_LOSS_DEFAULT) -> float | None:
    """The lowest threshold (the most recall) whose pooled leave-one-file-out precision is at most ``max_loss``
    below the rules' own pooled precision (the model may add recall, not trade much precision for it); None if
    none is."""
    floor = (cv["rules"]["pooled"]["precision"] or 0.0) - max_loss
    ok = [float(t) for t, s in cv["model"]["pooled"].items()
          if s["precision"] is not None and s["precision"] >= floor - 1e-9]
    return min(ok) if ok else None
