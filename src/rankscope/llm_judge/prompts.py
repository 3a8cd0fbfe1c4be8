"""Prompt templates: Jinja text that turns a (query, document) into chat messages.

A template is a text file with optional section markers, each alone on a
line: ``[system]`` starts the system message, ``[user]`` the user message
(a template without markers is one user message). Sections are split in the
template's *source*, before rendering, so a document containing ``[user]``
cannot open a section of its own. Every section is rendered with:

``query``, ``query_id``, ``need``
    the query's text and id, and the searcher's information need (an empty
    string when none is known);
``document``, ``doc_id``, ``fields``
    the document's fields (see :func:`document_text`; cut at
    ``max_doc_chars``), its id, and the fields as a mapping (``fields.title``);
``scale``, ``grades``
    the :class:`~rankscope.judgments.Scale` (``scale.min``, ``scale.max``,
    ``scale.name``) and its grades as records with ``grade`` and ``label``;
``guidelines``
    the team's guidelines (Markdown text), or an empty string.

Templates run in Jinja's sandbox with undefined names an error. The SHA-256
of the template's source is recorded with every grade, so a grade always
says which prompt produced it. The built-in templates (``graded``,
``binary``, ``detail`` and ``generic`` for any other scale) are rankscope's
own text; their structure follows the published approach of Thomas et al.
(2023) and UMBRELA (Upadhyay et al. 2024): the rater's task, the query (and
the need when known), the passage, the grade definitions, a short method
(the searcher's intent first, then how much of it the passage meets and
whether it can be trusted), and an answer the code can parse. ``assessor``
(graded 0-3 only) has the model write those steps out (intent, a match
score, a trustworthiness score) and end with ``Final grade: G`` on a line of
its own.

**The answer's format.** A template asks for a JSON object ``{"grade": G}``
unless its header (before the first section marker) declares a final line::

    {# answer: line "Final grade:" tokens 250 #}

The reader (:mod:`rankscope.llm_judge.parse`) then wants the answer's last line
to be that marker and a grade; ``tokens`` is the answer's expected length,
for the estimates of a dry run and of the token budget (16 for a JSON
answer when not declared).

**Few-shot examples** (:func:`with_examples`) are chat turns placed after
the system message: for each example, the template's user message for that
example's query and result, then an assistant message giving its grade in
the template's answer format.

References
----------
.. [1] Thomas, Spielman, Craswell, Mitra, "Large language models can
   accurately predict searcher preferences", arXiv:2309.10621 (2023).
.. [2] Upadhyay, Pradeep, Thakur, Craswell, Lin, "UMBRELA: UMbrela is the
   (Open-Source Reproduction of the) Bing RELevance Assessor",
   arXiv:2406.06519 (2024).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from rankscope.errors import DependencyError, FileAccessError, JudgeError
from rankscope.judgments.scales import Scale

__all__ = [
    "BUILTIN_TEMPLATES",
    "PLAIN_FIELDS",
    "Message",
    "PromptTemplate",
    "document_text",
    "load_template",
    "with_examples",
]

Message = dict[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": text}``."""

BUILTIN_TEMPLATES = ("graded", "binary", "detail", "generic", "assessor")
_BUILTIN_SCALES = {"graded": (0, 3), "assessor": (0, 3), "binary": (0, 1), "detail": (1, 10)}
"""The scale each built-in template's grade definitions are written for (generic: any)."""
PLAIN_FIELDS = frozenset({"title", "text", "snippet", "body", "content", "contents",
                          "passage", "abstract"})
"""Fields shown as bare text; any other field is shown as ``name: value``."""
_SECTION = re.compile(r"^\[(system|user|assistant)\][ \t]*$", re.MULTILINE)
_ANSWER = re.compile(
    r'\{#-?\s*answer:\s*(?:(json)|line\s+"([^"\n]+)")(?:\s+tokens\s+(\d+))?\s*-?#\}')
JSON_ANSWER_TOKENS = 16
"""Tokens expected in a JSON answer (``{"grade": 2}``) when the template declares none."""


def _jinja() -> Any:
    try:
        from jinja2 import StrictUndefined
        from jinja2.sandbox import SandboxedEnvironment
    except ImportError:
        raise DependencyError("jinja2", "judge", "LLM judge prompts") from None
    return SandboxedEnvironment(
        undefined=StrictUndefined, autoescape=False, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def document_text(fields: Mapping[str, str], max_chars: int | None) -> str:
    """The document's non-empty fields joined by blank lines, cut at ``max_chars``.

    Title, text, snippet and the like are shown as they are; any other field
    (a URL, a brand, a price) as ``name: value``, so the model knows what it is.

    Examples
    --------
    >>> document_text({"title": "json.dumps", "snippet": "Serialize obj.",
    ...                "url": "https://docs.python.org/json.html"}, None)
    'json.dumps\\n\\nSerialize obj.\\n\\nurl: https://docs.python.org/json.html'
    >>> document_text({"text": "one two three"}, 7)
    'one two [...]'
    """
    text = "\n\n".join(
        v.strip() if k in PLAIN_FIELDS else f"{k}: {v.strip()}"
        for k, v in fields.items() if v and v.strip()
    )
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars].rstrip() + " [...]"
    return text


@dataclass(frozen=True)
class PromptTemplate:
    """A compiled prompt template.

    Attributes
    ----------
    name : str
        The built-in name or the file it was read from.
    source : str
        The template's text, as written.
    sha256 : str
        SHA-256 (hex) of ``source``: recorded with every grade.
    marker : str or None
        The final line's marker the header declares (None: a JSON answer).
    answer_tokens : int
        The answer's expected length in tokens (declared, or 16 for JSON).
    """

    name: str
    source: str
    sha256: str
    _sections: tuple[tuple[str, Any], ...] = field(repr=False, compare=False)
    marker: str | None = None
    answer_tokens: int = JSON_ANSWER_TOKENS

    def answer_for(self, grade: float) -> str:
        """The answer giving ``grade`` in this template's format (few-shot examples).

        Examples
        --------
        >>> PromptTemplate.from_text("Grade {{ query }}").answer_for(2.0)
        '{"grade": 2}'
        """
        value = _num(grade)
        if self.marker:
            return f"{self.marker} {value}"
        return json.dumps({"grade": value})

    @classmethod
    def from_text(cls, source: str, name: str = "<template>") -> PromptTemplate:
        """Compile a template from its text.

        Raises
        ------
        JudgeError
            A Jinja syntax error (naming the template and line) or no text.
        """
        env = _jinja()
        from jinja2 import TemplateSyntaxError

        sections: list[tuple[str, Any]] = []
        marks = list(_SECTION.finditer(source))
        # Jinja comments before the first marker (a header) are kept out of every message.
        parts: list[tuple[str, str, int]] = []
        if not marks:
            parts.append(("user", source, 1))
        else:
            head = source[: marks[0].start()]
            parts.append(("", head, 1))
            for i, m in enumerate(marks):
                end = marks[i + 1].start() if i + 1 < len(marks) else len(source)
                line = source.count("\n", 0, m.end()) + 2
                parts.append((m.group(1), source[m.end() + 1: end], line))
        for role, text, first_line in parts:
            try:
                compiled = env.from_string(text)
            except TemplateSyntaxError as exc:
                line = first_line + (exc.lineno or 1) - 1
                raise JudgeError(f"{name}, line {line}: template error: {exc.message}") from None
            if role:
                sections.append((role, compiled))
        if not sections:
            raise JudgeError(f"{name}: the template has no message")
        digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
        head = source[: marks[0].start()] if marks else source
        declared = _ANSWER.search(head)
        marker, tokens = None, JSON_ANSWER_TOKENS
        if declared:
            marker = (declared.group(2) or "").strip() or None
            if declared.group(3):
                tokens = int(declared.group(3))
            elif marker:
                tokens = 4 * JSON_ANSWER_TOKENS
        elif re.search(r"\{#-?\s*answer:", head):
            raise JudgeError(f'{name}: the answer declaration is {{# answer: json #}} or '
                             f'{{# answer: line "MARKER" [tokens N] #}}')
        return cls(name=name, source=source, sha256=digest, _sections=tuple(sections),
                   marker=marker, answer_tokens=tokens)

    def render(
        self,
        *,
        query_id: str,
        query: str,
        doc_id: str,
        fields: Mapping[str, str],
        scale: Scale,
        guidelines: str = "",
        max_doc_chars: int | None = None,
        need: str | None = None,
    ) -> list[Message]:
        """The chat messages for one (query, document).

        Raises
        ------
        JudgeError
            The template uses a name it is not given, or fails otherwise.
        """
        grades = [
            {"grade": _num(g), "label": dict(scale.labels).get(g, "")}
            for g in (scale.values or (scale.min, scale.max))
        ]
        context = {
            "query": query, "query_id": query_id, "need": (need or "").strip(),
            "doc_id": doc_id, "fields": dict(fields),
            "document": document_text(fields, max_doc_chars),
            "scale": {"name": scale.name, "min": _num(scale.min), "max": _num(scale.max)},
            "grades": grades, "guidelines": guidelines or "",
        }
        messages: list[Message] = []
        for role, compiled in self._sections:
            try:
                text = compiled.render(context)
            except Exception as exc:  # Jinja raises many kinds; all mean a broken template
                raise JudgeError(f"{self.name}: cannot render the template: {exc}") from None
            text = text.strip()
            if text:
                messages.append({"role": role, "content": text})
        if not messages:
            raise JudgeError(f"{self.name}: the template rendered no text")
        return messages


def _num(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def with_examples(
    messages: list[Message], examples: Sequence[tuple[list[Message], str]]
) -> list[Message]:
    """The messages with few-shot turns after the system message(s).

    Each example is (its rendered messages, the answer giving its grade): its
    user message(s) then the answer as the assistant's turn.

    Examples
    --------
    >>> shot = ([{"role": "system", "content": "S"}, {"role": "user", "content": "ex"}],
    ...         '{"grade": 1}')
    >>> [m["role"] for m in with_examples(
    ...     [{"role": "system", "content": "S"}, {"role": "user", "content": "q"}], [shot])]
    ['system', 'user', 'assistant', 'user']
    """
    if not examples:
        return messages
    head = 0
    while head < len(messages) and messages[head]["role"] == "system":
        head += 1
    turns: list[Message] = []
    for shown, answer in examples:
        turns += [m for m in shown if m["role"] != "system"]
        turns.append({"role": "assistant", "content": answer})
    return [*messages[:head], *turns, *messages[head:]]


def builtin_name(scale: Scale) -> str:
    """The built-in template for a scale: its own for binary, graded, detail; else generic."""
    if scale.is_binary:
        return "binary"
    if scale.integer and (scale.min, scale.max) == (0, 3):
        return "graded"
    if scale.integer and (scale.min, scale.max) == (1, 10):
        return "detail"
    return "generic"


def load_template(
    spec: PromptTemplate | str | os.PathLike[str] | None, scale: Scale
) -> PromptTemplate:
    """A template from a file path, a built-in name, or (None) the scale's built-in one.

    Raises
    ------
    FileAccessError
        The file cannot be read.
    JudgeError
        The template does not compile.
    """
    if isinstance(spec, PromptTemplate):
        return spec
    if spec is None:
        spec = builtin_name(scale)
    text_spec = os.fspath(spec)
    if text_spec in BUILTIN_TEMPLATES:
        bounds = _BUILTIN_SCALES.get(text_spec)
        if bounds is not None and (not scale.integer or (scale.min, scale.max) != bounds):
            raise JudgeError(
                f"the built-in prompt {text_spec} defines the grades {bounds[0]}-{bounds[1]}, "
                f"not the {scale.describe()} scale: pick another prompt (generic fits any "
                "scale) or scale")
        folder = resources.files("rankscope.llm_judge") / "templates"
        source = (folder / f"{text_spec}.j2").read_text(encoding="utf-8")
        return PromptTemplate.from_text(source, name=text_spec)
    try:
        with open(text_spec, encoding="utf-8") as handle:
            source = handle.read()
    except FileNotFoundError:
        raise FileAccessError(
            f"no such template file (built-in templates: {', '.join(BUILTIN_TEMPLATES)})",
            source=text_spec,
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FileAccessError(f"cannot read the template: {exc}", source=text_spec) from None
    return PromptTemplate.from_text(source, name=text_spec)
