"""Reading a grade out of a model's answer, or saying why none can be read.

JSON first: the first JSON object in the answer (bare, or in a Markdown code
fence) with a ``grade`` key (also ``score``, ``relevance``, ``rating``,
``label``). A tolerant pattern second: ``grade: 2``, ``grade 2``, ``Grade =
2``, or an answer that is a number and nothing else. Reasoning wrapped in
``<think>...</think>`` is set aside first. Anything else (no number, two
different numbers, a number off the scale, a fraction on a whole-number
scale) is *unrateable*: the answer is kept as raw text and never becomes a
grade.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from rankscope.judgments.scales import Scale

__all__ = ["ParsedGrade", "parse_grade"]

_KEYS = ("grade", "score", "relevance", "rating", "label")
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_NUMBER = r"(-?\d+(?:\.\d+)?)"
_PATTERN = re.compile(
    r"\b(?:grade|score|relevance|rating)\b[\"']?\s*(?:is|of|[:=])?\s*[\"']?" + _NUMBER,
    re.IGNORECASE,
)
_BARE = re.compile(r"^\s*[\"'(\[]?\s*" + _NUMBER + r"\s*[\"')\].]?\s*$")


@dataclass(frozen=True)
class ParsedGrade:
    """A grade read from an answer, or the reason there is none.

    Attributes
    ----------
    grade : float or None
        The grade (on the scale), or None when the answer is unrateable.
    how : str
        ``json``, ``pattern``, or ``unrateable``.
    reason : str
        Why the answer is unrateable (empty otherwise).
    """

    grade: float | None
    how: str
    reason: str = ""


def _json_objects(text: str) -> list[dict[str, object]]:
    """Every JSON object that starts at a ``{`` in ``text`` (fenced blocks first)."""
    out: list[dict[str, object]] = []
    decoder = json.JSONDecoder()
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for chunk in candidates:
        start = chunk.find("{")
        while start != -1:
            try:
                value, _ = decoder.raw_decode(chunk, start)
            except json.JSONDecodeError:
                value = None
            if isinstance(value, dict):
                out.append(value)
            start = chunk.find("{", start + 1)
    return out


def _value(obj: dict[str, object], scale: Scale) -> tuple[float | None, str] | None:
    """The grade in a JSON object: (grade, "") / (None, reason); None: no grade key."""
    lowered = {str(k).lower(): v for k, v in obj.items()}
    for key in _KEYS:
        if key not in lowered:
            continue
        raw = lowered[key]
        if isinstance(raw, bool):
            return None, f"{key} is a boolean ({raw})"
        if isinstance(raw, int | float):
            return _check(float(raw), scale)
        if isinstance(raw, str):
            text = raw.strip()
            try:
                return _check(float(text), scale)
            except ValueError:
                pass
            labels = scale.label_map()
            if text.lower() in labels:
                return labels[text.lower()], ""
            return None, f"{key} {raw!r} is neither a number nor a label of the scale"
        return None, f"{key} is not a number ({json.dumps(raw)[:40]})"
    return None


def _check(value: float, scale: Scale) -> tuple[float | None, str]:
    if not scale.contains(value):
        return None, f"grade {value:g} is outside the {scale.describe()} scale"
    return value, ""


def parse_grade(text: str, scale: Scale) -> ParsedGrade:
    """Read the grade in a model's answer.

    Parameters
    ----------
    text : str
        The answer, as the model wrote it.
    scale : Scale
        The scale the grade must be on.

    Returns
    -------
    ParsedGrade

    Examples
    --------
    >>> from rankscope.judgments import GRADED
    >>> parse_grade('{"grade": 2}', GRADED)
    ParsedGrade(grade=2.0, how='json', reason='')
    >>> parse_grade("I'd say it's highly relevant, grade 2", GRADED).grade
    2.0
    >>> parse_grade("Very relevant!", GRADED).how
    'unrateable'
    """
    visible = _THINK.sub(" ", text)
    reasons: list[str] = []
    for obj in _json_objects(visible):
        found = _value(obj, scale)
        if found is None:
            continue
        grade, reason = found
        if grade is not None:
            return ParsedGrade(grade, "json")
        reasons.append(reason)
    if reasons:
        return ParsedGrade(None, "unrateable", reasons[0])
    numbers = {float(m.group(1)) for m in _PATTERN.finditer(visible)}
    if not numbers:
        bare = _BARE.match(visible)
        if bare:
            numbers = {float(bare.group(1))}
    if not numbers:
        if not visible.strip():
            return ParsedGrade(None, "unrateable", "empty answer")
        return ParsedGrade(None, "unrateable", "no grade found in the answer")
    if len(numbers) > 1:
        shown = ", ".join(f"{n:g}" for n in sorted(numbers))
        return ParsedGrade(None, "unrateable", f"several grades in the answer ({shown})")
    grade, reason = _check(numbers.pop(), scale)
    if grade is None:
        return ParsedGrade(None, "unrateable", reason)
    return ParsedGrade(grade, "pattern")
