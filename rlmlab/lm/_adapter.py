"""A ChatAdapter that salvages small models' replies instead of failing the run."""

from __future__ import annotations

import re
import threading
from typing import Any

from dspy.adapters.chat_adapter import ChatAdapter
from dspy.utils.exceptions import AdapterParseError

from rlmlab.lm._constraints import active_constraint

__all__ = ["LenientChatAdapter"]

_FENCE = re.compile(r"```(?:python|py|python3)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


class LenientChatAdapter(ChatAdapter):
    """ChatAdapter without the JSON retry; a reply missing the ``[[ ## field ## ]]`` markers is salvaged.

    Under a grammar (:func:`rlmlab.lm.constrained`) the closing reminder of the output fields is left out of the
    user message. Salvage rules: ``code`` is the first fenced code block (empty if none);
    ``reasoning`` is the text outside it; any other text field gets the
    whole reply. ``salvaged`` counts how often that happened, so a run can
    report how many model steps were off-format.
    """

    def __init__(self) -> None:
        super().__init__(use_json_adapter_fallback=False)
        self.salvaged = 0
        self._lock = threading.Lock()

    def user_message_output_requirements(self, signature: Any) -> str | None:
        # Under a grammar the reply's field markers are the grammar's, not the model's to remember: the reminder
        # would be prompt tokens (prefilled on every step) that change nothing.
        if active_constraint() is not None:
            return None
        return super().user_message_output_requirements(signature)

    def parse(self, signature: Any, completion: str) -> dict[str, Any]:
        try:
            return super().parse(signature, completion)
        except AdapterParseError:
            fields = salvage_fields(list(signature.output_fields), completion)
            if fields is None:
                raise
            with self._lock:
                self.salvaged += 1
            return fields


def salvage_fields(names: list[str], completion: str) -> dict[str, str] | None:
    """Best-effort field values from free text; None if a field cannot be filled."""
    text = re.sub(r"\[\[ ## \w+ ## \]\]", "", completion).strip()
    m = _FENCE.search(text)
    code = m.group(1).strip() if m else ""
    outside = (text[: m.start()] + text[m.end():]).strip() if m else text
    fields: dict[str, str] = {}
    for name in names:
        if name == "code":
            fields[name] = code
        elif name == "reasoning":
            fields[name] = outside
        else:
            fields[name] = text
    return fields
