"""Reading a grade out of a model's answer, or saying why none can be read.

The model's reasoning is set aside first: a ``<think>...</think>`` block
(or everything up to a ``</think>`` whose opening was in the prompt); a
server's separate ``reasoning_content`` never reaches this module. What is
left is *the answer*. An answer cut off by the token limit
(``finish_reason`` ``length``) or still inside an unclosed ``<think>`` is
never a grade, whatever digits it holds.

**strict** (the default) accepts the format the prompt asks for and nothing
looser:

- a JSON answer (the built-in prompts): the answer is one JSON object (bare,
  or alone in a Markdown code fence) with one ``grade`` key whose value is a
  number, or a string that is a number, on the scale. Text before or after
  the object, a second object, a second ``grade`` key, a label instead of a
  number: unrateable.
- a final-line answer (a template that declares a marker, such as the
  ``assessor`` prompt's ``Final grade:``): the answer's last non-empty line
  is the marker followed by one number on the scale (Markdown emphasis and
  a closing full stop allowed); exactly one such line. Reasoning lines before
  it are free.

**lenient** (``--parse lenient``) is the tolerant reader of earlier
versions: the last final line when the template declares one, else the
first JSON object anywhere with a ``grade`` (also ``score``, ``relevance``,
``rating``, ``label``) key, a number or a label of the scale; else a pattern
(``grade: 2``, ``grade 2``, an answer that is only a number). It reads
negations ("not a grade 3") as grades: use it knowingly.

Anything else is *unrateable*, with the reason; the answer is kept as raw
text and never becomes a grade.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from rankscope.errors import OptionError
from rankscope.judgments.scales import Scale

__all__ = ["PARSE_MODES", "ParsedGrade", "parse_grade", "split_reasoning"]

PARSE_MODES = ("strict", "lenient")

_KEYS = ("grade", "score", "relevance", "rating", "label")
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(r"<think>", re.IGNORECASE)
_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_ONLY_FENCE = re.compile(r"^```(?:json|JSON)?[ \t]*\n?(.*?)\n?```$", re.DOTALL)
_NUMBER = r"(-?\d+(?:\.\d+)?)"
_PATTERN = re.compile(
    r"\b(?:grade|score|relevance|rating)\b[\"']?\s*(?:is|of|[:=])?\s*[\"']?" + _NUMBER,
    re.IGNORECASE,
)
_BARE = re.compile(r"^\s*[\"'(\[]?\s*" + _NUMBER + r"\s*[\"')\].]?\s*$")
_EMPHASIS = re.compile(r"[*_`#\"]+")


@dataclass(frozen=True)
class ParsedGrade:
    """A grade read from an answer, or the reason there is none.

    Attributes
    ----------
    grade : float or None
        The grade (on the scale), or None when the answer is unrateable.
    how : str
        ``json``, ``line``, ``pattern`` (lenient only) or ``unrateable``.
    reason : str
        Why the answer is unrateable (empty otherwise).
    """

    grade: float | None
    how: str
    reason: str = ""


def _unrateable(reason: str) -> ParsedGrade:
    return ParsedGrade(None, "unrateable", reason)


def split_reasoning(text: str) -> tuple[str | None, str | None]:
    """(the answer, the reasoning) of a model's text; None: reasoning left open.

    Closed ``<think>`` blocks are reasoning; so is everything before a
    ``</think>`` left without its opening (the server put ``<think>`` in the
    prompt). An opening ``<think>`` never closed means the model stopped
    while reasoning: the answer is None.

    Examples
    --------
    >>> split_reasoning("<think>2 or 3?</think> 3")
    ('3', '2 or 3?')
    >>> split_reasoning("<think>2 or 3")[0] is None
    True
    """
    reasoning: list[str] = []
    close = list(_CLOSE.finditer(text))
    first_open = _OPEN.search(text)
    if close and (first_open is None or close[0].start() < first_open.start()):
        # the answer began inside the reasoning: up to the first orphan </think> is reasoning
        reasoning.append(text[:close[0].start()])
        text = text[close[0].end():]
    for block in _THINK.finditer(text):
        reasoning.append(block.group(0)[len("<think>"):-len("</think>")])
    answer = _THINK.sub("\n", text)
    if _OPEN.search(answer):
        return None, "\n".join(reasoning) if reasoning else None
    return answer.strip(), "\n".join(r.strip() for r in reasoning) if reasoning else None


def _check(value: float, scale: Scale) -> tuple[float | None, str]:
    if not math.isfinite(value):
        return None, f"the grade {value} is not a finite number"
    if not scale.contains(value):
        return None, f"grade {value:g} is outside the {scale.describe()} scale"
    return value, ""


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [k.lower() for k, _ in pairs]
    if keys.count("grade") > 1:
        raise _SeveralGrades
    return dict(pairs)


class _SeveralGrades(Exception):
    """A JSON object with the grade key twice."""


def _strict_json(answer: str, scale: Scale) -> ParsedGrade:
    text = answer.strip()
    fenced = _ONLY_FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text.startswith("{"):
        if text.startswith("["):
            return _unrateable("the answer is not a JSON object (it is a JSON array)")
        if "{" not in text:
            return _unrateable('no JSON object in the answer (the prompt asks for '
                               '{"grade": N})')
        return _unrateable("text before the JSON object (the prompt asks for the object "
                           "alone)")
    decoder = json.JSONDecoder(object_pairs_hook=_no_duplicates)
    try:
        value, end = decoder.raw_decode(text)
    except _SeveralGrades:
        return _unrateable("several grades in the JSON object")
    except json.JSONDecodeError as exc:
        return _unrateable(f"not valid JSON ({exc.msg} at character {exc.pos + 1})")
    rest = text[end:].strip()
    if rest:
        if rest.startswith("{"):
            return _unrateable("several JSON objects in the answer")
        return _unrateable("text after the JSON object (the prompt asks for the object "
                           "alone)")
    if not isinstance(value, dict):
        return _unrateable("the answer is not a JSON object")
    found = [k for k in value if k.lower() == "grade"]
    if not found:
        return _unrateable('no "grade" key in the JSON object')
    raw = value[found[0]]
    if isinstance(raw, bool):
        return _unrateable(f"the grade is a boolean ({json.dumps(raw)})")
    if isinstance(raw, str):
        try:
            number = float(raw.strip())
        except ValueError:
            return _unrateable(f"the grade {raw!r} is not a number (--parse lenient reads "
                               "labels of the scale)")
    elif isinstance(raw, int | float):
        number = float(raw)
    else:
        return _unrateable(f"the grade is not a number ({json.dumps(raw)[:40]})")
    grade, reason = _check(number, scale)
    return _unrateable(reason) if grade is None else ParsedGrade(grade, "json")


def _marker_lines(answer: str, marker: str) -> tuple[list[tuple[int, str]], list[str]]:
    """(index and what follows the marker, for each marker line), and the non-empty lines."""
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    wanted = _EMPHASIS.sub("", marker).strip().lower()
    found = []
    for i, line in enumerate(lines):
        plain = _EMPHASIS.sub("", line).strip()
        if plain.lower().startswith(wanted):
            found.append((i, plain[len(wanted):].strip()))
    return found, lines


def _line_value(rest: str, scale: Scale) -> tuple[float | None, str]:
    match = re.fullmatch(_NUMBER + r"\s*\.?", rest)
    if match is None:
        return None, f"the final line does not give one number ({rest[:40]!r})"
    return _check(float(match.group(1)), scale)


def _strict_line(answer: str, scale: Scale, marker: str) -> ParsedGrade:
    found, lines = _marker_lines(answer, marker)
    if not lines:
        return _unrateable("empty answer")
    if not found:
        return _unrateable(f"no final line {marker!r} in the answer")
    if len(found) > 1 and len({rest for _, rest in found}) > 1:
        return _unrateable(f"several final lines {marker!r} with different grades")
    index, rest = found[-1]
    if index != len(lines) - 1:
        return _unrateable(f"text after the final line {marker!r}")
    grade, reason = _line_value(rest, scale)
    return _unrateable(reason) if grade is None else ParsedGrade(grade, "line")


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


def _lenient_value(obj: dict[str, object], scale: Scale) -> tuple[float | None, str] | None:
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


def _lenient(answer: str, scale: Scale, marker: str | None) -> ParsedGrade:
    if marker:
        found, _ = _marker_lines(answer, marker)
        if found:
            grade, reason = _line_value(found[-1][1], scale)
            return _unrateable(reason) if grade is None else ParsedGrade(grade, "line")
    reasons: list[str] = []
    for obj in _json_objects(answer):
        found_value = _lenient_value(obj, scale)
        if found_value is None:
            continue
        grade, reason = found_value
        if grade is not None:
            return ParsedGrade(grade, "json")
        reasons.append(reason)
    if reasons:
        return _unrateable(reasons[0])
    numbers = {float(m.group(1)) for m in _PATTERN.finditer(answer)}
    if not numbers:
        bare = _BARE.match(answer)
        if bare:
            numbers = {float(bare.group(1))}
    if not numbers:
        return _unrateable("no grade found in the answer")
    if len(numbers) > 1:
        shown = ", ".join(f"{n:g}" for n in sorted(numbers))
        return _unrateable(f"several grades in the answer ({shown})")
    grade, reason = _check(numbers.pop(), scale)
    return _unrateable(reason) if grade is None else ParsedGrade(grade, "pattern")


def parse_grade(
    text: str,
    scale: Scale,
    *,
    mode: str = "strict",
    marker: str | None = None,
    finish_reason: str | None = None,
) -> ParsedGrade:
    """Read the grade in a model's answer (see the module docs for the rules).

    Parameters
    ----------
    text : str
        The answer, as the model wrote it (``content``; never ``reasoning_content``).
    scale : Scale
        The scale the grade must be on.
    mode : {"strict", "lenient"}, default "strict"
        Accept only the format the prompt asks for, or read tolerantly.
    marker : str, optional
        The final line's marker the template declares (``Final grade:``);
        None: the answer is a JSON object.
    finish_reason : str, optional
        The endpoint's ``finish_reason``: ``length`` (cut off) is never a grade.

    Returns
    -------
    ParsedGrade

    Raises
    ------
    OptionError
        ``mode`` is neither strict nor lenient.

    Examples
    --------
    >>> from rankscope.judgments import GRADED
    >>> parse_grade('{"grade": 2}', GRADED)
    ParsedGrade(grade=2.0, how='json', reason='')
    >>> parse_grade("Not a grade 3 answer.", GRADED).how
    'unrateable'
    >>> parse_grade("Intent: cats.\\nFinal grade: 1", GRADED, marker="Final grade:").grade
    1.0
    >>> parse_grade("I'd say it's highly relevant, grade 2", GRADED, mode="lenient").grade
    2.0
    """
    if mode not in PARSE_MODES:
        raise OptionError(f"the answer reader is strict or lenient, not {mode!r}")
    if finish_reason == "length":
        return _unrateable("the answer was cut off at the token limit (finish_reason "
                           "length): raise max_tokens")
    answer, _ = split_reasoning(text)
    if answer is None:
        return _unrateable("reasoning without a final answer (<think> never closed)")
    if not answer.strip():
        return _unrateable("empty answer" if not text.strip() else
                           "reasoning without a final answer (nothing after </think>)")
    if mode == "lenient":
        return _lenient(answer, scale, marker)
    if marker:
        return _strict_line(answer, scale, marker)
    return _strict_json(answer, scale)
