"""The learned second opinion of ``phantom_tool_result``: a linear classifier over a turn's words, scored as numbers.

The hand-written rules (``_phrases``, ``_answers``, ``_events`` and the hook's grounding) catch the phrasings they were
written from; each new labeller of the narrated-contents sets brought phrasings they had not seen (the recall on each
unseen split: ``studies/turing_narrated/REPORT.md``). This model is trained on the labelled splits (``_train``,
``rlmlab turing train-phantom``: scikit-learn's logistic regression over TF-IDF of the features below) and shipped as
plain numbers in ``rlmlab/turing/phantom_model.json``, so scoring a turn needs no scikit-learn: count the features,
weight them ``(1 + ln count) * idf``, L2-normalise, dot with the coefficients, add the intercept, squash.

Features (:func:`phantom_features`): the reply's first 150 words, word pairs and the first 60 word triples, numbers
and file names folded to ``<num>`` and ``<file>``; the user's message words and pairs; the turn's shape (calls,
earlier rounds, a pasted block, a block in the reply, numbers and file names the reply has that the question does
not); and the rules' own verdict (fired, narrated claims, ungrounded claims). A turn with any call or earlier round
has its features doubled under a ``G|`` prefix, so grounded turns learn their own weights.

A turn's features, and where the model may add a detection, are the hook's (:mod:`rlmlab.turing._phantom_hook`):
this module scores feature lists and reads no turn.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["PHANTOM_MODEL_PATH", "PhantomModel", "phantom_features", "default_phantom_model"]

PHANTOM_MODEL_PATH = Path(__file__).parent.parent / "phantom_model.json"  # rlmlab/turing/phantom_model.json
FORMAT = "rlmlab.phantom_model/1"

_WORD = re.compile(r"[A-Za-z_][\w./-]*|\d+(?:\.\d+)*|```|[:`\"'*-]")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_FILE = re.compile(r"\w\.\w")


def _fold(word: str) -> str:
    if _NUMBER.fullmatch(word):
        return "<num>"
    return "<file>" if _FILE.search(word) else word


def phantom_features(response: str, context: str = "", *, calls: int = 0, rounds: int = 0, fired: bool = False,
                     narrated: int = 0, ungrounded: int = 0) -> list[str]:
    """The feature strings of one turn (a name may repeat: repeats are counts).

    ``calls``/``rounds``: tool calls and earlier rounds of the user turn; ``fired``, ``narrated``, ``ungrounded``:
    the rules' verdict, the reply's narrated claims and those nothing in the turn grounds."""
    reply = [w.lower() for w in _WORD.findall(response)][:150]
    asked = [w.lower() for w in _WORD.findall(context)]
    seen = set(asked)
    r = [_fold(w) for w in reply]
    u = [_fold(w) for w in asked]
    out = ["r:" + w for w in r]
    out += [f"r2:{a}_{b}" for a, b in zip(r, r[1:])]
    out += [f"r3:{a}_{b}_{c}" for a, b, c in zip(r, r[1:], r[2:])][:60]
    out += ["u:" + w for w in u]
    out += [f"u2:{a}_{b}" for a, b in zip(u, u[1:])]
    out += [f"tools:{min(2, calls)}", f"hist:{min(2, rounds)}", f"ublock:{int('```' in context or chr(10) in context)}",
            f"rblock:{int('```' in response)}"]
    out.append(f"newnum:{min(3, sum(1 for w in reply if w not in seen and _NUMBER.fullmatch(w)))}")
    out.append(f"newfile:{min(3, sum(1 for w in reply if w not in seen and _FILE.search(w)))}")
    if calls or rounds:
        out = ["G|" + f for f in out] + out
    out += [f"rule:{int(fired)}", f"nc:{min(narrated, 2)}", f"uc:{min(ungrounded, 2)}"] * 3
    return out


@dataclass(frozen=True)
class PhantomModel:
    """TF-IDF (sublinear, L2) then logistic regression; ``weights[name] = (idf, coefficient)``."""

    weights: dict[str, tuple[float, float]]
    intercept: float
    threshold: float
    meta: dict[str, Any] = field(default_factory=dict)  # how it was trained: files and their sha256, C, CV figures

    def score(self, features: list[str]) -> float:
        """P(phantom) for a turn's :func:`phantom_features`."""
        counts = Counter(f for f in features if f in self.weights)
        values = {f: (1.0 + math.log(n)) * self.weights[f][0] for f, n in counts.items()}
        norm = math.sqrt(sum(v * v for v in values.values())) or 1.0
        z = self.intercept + sum(v / norm * self.weights[f][1] for f, v in values.items())
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "threshold": self.threshold, "intercept": self.intercept, "meta": self.meta,
                "weights": {f: [round(i, 6), round(c, 6)] for f, (i, c) in sorted(self.weights.items())}}

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "phantom model") -> PhantomModel:
        if d.get("format") != FORMAT:
            raise ValueError(f"{where}: format {d.get('format')!r}, expected {FORMAT!r}")
        try:
            weights = {str(f): (float(i), float(c)) for f, (i, c) in d["weights"].items()}
            return cls(weights, float(d["intercept"]), float(d["threshold"]), dict(d.get("meta") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc!r}; expected weights {{feature: [idf, coef]}}, intercept, threshold") \
                from None

    @classmethod
    def load(cls, path: str | Path = PHANTOM_MODEL_PATH) -> PhantomModel:
        path = Path(path)
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
        return cls.from_dict(d, str(path))

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
        return path


@lru_cache(maxsize=1)
def default_phantom_model() -> PhantomModel | None:
    """The shipped model, or None where the file is absent (the rules then decide alone)."""
    return PhantomModel.load(PHANTOM_MODEL_PATH) if PHANTOM_MODEL_PATH.exists() else None
