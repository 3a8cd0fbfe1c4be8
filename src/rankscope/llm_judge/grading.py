"""Grade a list of results with a configured LLM judge: the call a web app makes.

The web app shows an LLM judge as one more grader. It holds its own
grading tasks (a query, its need, a result as the grader sees it), so this
module takes them as plain values, not files::

    from rankscope.llm_judge.grading import GradeItem, JudgeConfig, grade_items

    judge = JudgeConfig(endpoint="http://127.0.0.1:8080/v1", model="qwen2.5-7b-instruct",
                        guidelines=project_guidelines)
    result = grade_items([GradeItem("q01", "json.dumps", "json dumps indent",
                                    {"title": "json.dumps(obj, ...)", "snippet": "..."},
                                    need="Wants pretty-printed JSON.")],
                         judge, cache="answers.sqlite")
    for g in result.grades:          # one per item, in order
        save(g.query_id, g.doc_id, result.rater, g.grade, g.status, result.template_sha256)

Every answer goes through the same cache as ``rankscope judge`` (same key:
endpoint, model, full messages, every setting), so a result the command
line graded costs nothing here, and the reverse. Nothing is written to a
file; the caller stores the grades. The result says who graded (rater,
model, endpoint), with which prompt (name and SHA-256) and settings, and
what it cost.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rankscope.errors import InputError
from rankscope.judgments.scales import Scale
from rankscope.llm_judge.cache import AnswerCache
from rankscope.llm_judge.client import Budget, Sleep
from rankscope.llm_judge.inputs import Pair
from rankscope.llm_judge.output import ResultsFile
from rankscope.llm_judge.prompts import PromptTemplate
from rankscope.llm_judge.runner import RunSpec, Usage, build_spec, run, run_blocking
from rankscope.outbound.hosts import HostPolicy

__all__ = ["GradeItem", "GradingResult", "JudgeConfig", "LLMGrade", "grade_items",
           "grade_items_async"]


@dataclass(frozen=True)
class JudgeConfig:
    """A configured LLM judge: where to ask, which model, which prompt, which settings.

    Attributes
    ----------
    endpoint : str
        The OpenAI-compatible API base (``http://127.0.0.1:8080/v1``) or a
        full ``.../chat/completions`` URL.
    model : str
        The model's name, sent with every request.
    api_key : str, optional
        Sent as ``Authorization: Bearer KEY`` (or in ``auth_header`` as is);
        never part of the cache key, never shown in ``repr``.
    auth_header : str, default "Authorization"
        Another header for the key (Azure: ``api-key``).
    rater : str, optional
        The rater name of the grades (default ``llm:<model>``).
    scale : Scale or str, default "graded"
        ``graded`` (0-3), ``binary``, ``detail`` (1-10) or any scale.
    prompt : PromptTemplate, str or None
        A built-in template name, a template file, or a compiled template
        (``PromptTemplate.from_text(text)`` for one kept in a database);
        None: the scale's built-in prompt.
    guidelines : str
        The team's grading guidelines (Markdown), given to the prompt.
    temperature : float, default 0
        Sampling temperature.
    settings : mapping
        Any other decoding setting sent (``seed``, ``top_p``, ``max_tokens``).
    samples : int, default 1
        Answers per result; the grade is their majority (a tie: no grade).
    max_doc_chars : int or None, default 6000
        Documents are cut at this length.
    concurrency, rpm, timeout, max_retries
        Requests in flight (default 4), per minute (no limit), seconds per
        request (60) and retries on 429, 5xx, timeouts, connection errors (5).
    parse : {"strict", "lenient"}, default "strict"
        The answer reader (see :mod:`rankscope.llm_judge.parse`).
    outbound : HostPolicy, optional
        The hosts the judge may reach (a server's policy,
        :mod:`rankscope.outbound`); None: any.
    provider : str, default "openai"
        How requests are written and answers read (a name of
        :data:`rankscope.llm_judge.providers.PROVIDERS`: ``openai``, ``ollama``).
    """

    endpoint: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    auth_header: str = "Authorization"
    rater: str | None = None
    scale: Scale | str = "graded"
    prompt: PromptTemplate | str | None = None
    guidelines: str = ""
    temperature: float = 0.0
    settings: Mapping[str, Any] = field(default_factory=dict)
    samples: int = 1
    max_doc_chars: int | None = 6000
    concurrency: int = 4
    rpm: float | None = None
    timeout: float = 60.0
    max_retries: int = 5
    parse: str = "strict"
    outbound: HostPolicy | None = None
    provider: str = "openai"

    def spec(self) -> RunSpec:
        """The run specification (checked; the template compiled).

        Raises
        ------
        OptionError, JudgeError, FileAccessError
            A bad value, or a template that cannot be read or compiled.
        """
        return build_spec(
            endpoint=self.endpoint, model=self.model, scale=self.scale, prompt=self.prompt,
            rater=self.rater, temperature=self.temperature, settings=self.settings,
            samples=self.samples, guidelines=self.guidelines,
            max_doc_chars=self.max_doc_chars, concurrency=self.concurrency,
            parse=self.parse, provider=self.provider,
        )


@dataclass(frozen=True)
class GradeItem:
    """One result to grade, as the grader sees it.

    Attributes
    ----------
    query_id, doc_id : str
        Identify the pair (grades come back with them).
    query : str
        The query's text.
    fields : mapping of str to str
        The result's display fields in display order (``title``, ``snippet``,
        ``text``, ``url``, any other: shown as ``name: value``).
    need : str, optional
        What the searcher wants, when known.
    """

    query_id: str
    doc_id: str
    query: str
    fields: Mapping[str, str]
    need: str | None = None


@dataclass(frozen=True)
class LLMGrade:
    """The judge's grade of one item, or why there is none.

    Attributes
    ----------
    query_id, doc_id : str
        The item.
    grade : float or None
        The grade on the scale; None unless ``status`` is ``graded``.
    status : str
        ``graded``; ``unrateable`` (no grade could be read from the answer);
        ``no_majority`` (samples tied); ``failed`` (the request failed after
        its retries); ``not_reached`` (the call or token budget was spent first).
    reason : str
        Why there is no grade (empty when graded).
    answer : str or None
        The model's answer (the first one, with samples); None when none came.
    reasoning : str or None
        The reasoning the endpoint returned apart from the answer, if any.
    votes : str
        The samples' grades (``"2,2,3"``; ``?`` for an answer with no grade).
    consistency : float or None
        Share of the samples that gave the majority grade.
    cached : bool
        Every answer came from the cache (nothing was paid for it).
    prompt_tokens, completion_tokens : int or None
        What the answers cost, as the endpoint reported.
    """

    query_id: str
    doc_id: str
    grade: float | None
    status: str
    reason: str = ""
    answer: str | None = None
    reasoning: str | None = None
    votes: str = ""
    consistency: float | None = None
    cached: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class GradingResult:
    """What a call of :func:`grade_items` produced.

    Attributes
    ----------
    rater, model, endpoint : str
        Who graded: the rater name (``llm:<model>`` by default), the model,
        and the endpoint asked.
    template_name, template_sha256 : str
        The prompt template and the SHA-256 of its source.
    settings : dict
        The decoding settings sent (temperature and the others).
    samples : int
        Answers asked per item.
    scale : Scale
        The grading scale.
    grades : list of LLMGrade
        One per item, in the items' order.
    usage : Usage
        Requests, retries, cache hits, tokens; ``stopped`` says why a budget ended it.
    """

    rater: str
    model: str
    endpoint: str
    template_name: str
    template_sha256: str
    settings: dict[str, Any]
    samples: int
    scale: Scale
    grades: list[LLMGrade]
    usage: Usage


class _ItemTexts:
    """The items as a text source (documents as shown for their query)."""

    def __init__(self, items: Sequence[GradeItem]) -> None:
        self.queries: dict[str, str] = {}
        self.needs: dict[str, str] = {}
        self.shown: dict[tuple[str, str], dict[str, str]] = {}
        for i, item in enumerate(items):
            where = f"item {i + 1} ({item.query_id}, {item.doc_id})"
            known = self.queries.setdefault(item.query_id, item.query)
            if known != item.query:
                raise InputError(f"{where}: query {item.query_id} was {known!r} in an "
                                 f"earlier item, here {item.query!r}")
            if item.need:
                self.needs.setdefault(item.query_id, item.need)
            fields = {str(k): str(v) for k, v in item.fields.items() if v is not None}
            seen = self.shown.setdefault((item.query_id, item.doc_id), fields)
            if seen != fields:
                raise InputError(f"{where}: the same result given twice with other fields")

    def query_text(self, query_id: str) -> str | None:
        return self.queries.get(query_id)

    def query_need(self, query_id: str) -> str | None:
        return self.needs.get(query_id)

    def document(self, doc_id: str) -> Mapping[str, str] | None:
        return next((f for (_, d), f in self.shown.items() if d == doc_id), None)

    def pair_document(self, query_id: str, doc_id: str) -> Mapping[str, str] | None:
        return self.shown.get((query_id, doc_id))


def _grade(pair: Pair, row: Mapping[str, str] | None) -> LLMGrade:
    if row is None:
        return LLMGrade(pair.query_id, pair.doc_id, None, "not_reached",
                        "not asked: the budget was spent, or the endpoint stopped answering")

    def number(name: str) -> int | None:
        return int(row[name]) if row.get(name) else None

    def text(name: str) -> str | None:
        raw = row.get(name) or ""
        return json.loads('"' + raw + '"') if raw else None

    return LLMGrade(
        query_id=pair.query_id, doc_id=pair.doc_id,
        grade=float(row["grade"]) if row.get("grade") else None,
        status=row.get("status") or "graded", reason=row.get("reason") or "",
        answer=text("raw"), reasoning=text("reasoning"), votes=row.get("votes") or "",
        consistency=float(row["consistency"]) if row.get("consistency") else None,
        cached=row.get("cached") == "true", prompt_tokens=number("prompt_tokens"),
        completion_tokens=number("completion_tokens"),
    )


def _with_examples(spec: Any, items: Sequence[GradeItem],
                   examples: Sequence[tuple[GradeItem, float]]) -> Any:
    """The run's spec showing ``examples`` (graded results) before every item."""
    from rankscope.llm_judge.examples import Example

    graded = {(i.query_id, i.doc_id) for i in items}
    shown = []
    for n, (item, grade) in enumerate(examples, start=1):
        where = f"few-shot example {n} ({item.query_id}, {item.doc_id})"
        if (item.query_id, item.doc_id) in graded:
            raise InputError(f"{where} is also a result to grade: an example is never one")
        if not spec.scale.contains(float(grade)):
            raise InputError(f"{where}: grade {grade} is not on the scale")
        shown.append(Example(item.query_id, item.doc_id, float(grade)))
    return replace(spec, examples=tuple(shown))


async def grade_items_async(
    items: Sequence[GradeItem],
    judge: JudgeConfig,
    *,
    cache: AnswerCache | str | os.PathLike[str] | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    retry_unrateable: bool = False,
    sleep: Sleep | None = None,
    examples: Sequence[tuple[GradeItem, float]] = (),
) -> GradingResult:
    """The coroutine behind :func:`grade_items` (same parameters), for code in a loop."""
    spec = judge.spec()
    if examples:
        spec = _with_examples(spec, items, examples)
    texts = _ItemTexts([*items, *(item for item, _ in examples)])
    pairs = list(dict.fromkeys(Pair(i.query_id, i.doc_id) for i in items))
    results = ResultsFile(None)
    answers = AnswerCache(cache) if isinstance(cache, str | os.PathLike) else cache
    try:
        usage = await run(
            spec, pairs, texts, results, answers,
            {"api_key": judge.api_key, "auth_header": judge.auth_header,
             "timeout": judge.timeout, "max_retries": judge.max_retries, "rpm": judge.rpm,
             "outbound": judge.outbound},
            budget=Budget(max_calls, max_tokens), retry_unrateable=retry_unrateable,
            sleep=sleep,
        )
    finally:
        if answers is not None and answers is not cache:
            answers.close()
    rows = {(r["query_id"], r["doc_id"]): r for r in results.rows}
    grades = [_grade(Pair(i.query_id, i.doc_id), rows.get((i.query_id, i.doc_id)))
              for i in items]
    return GradingResult(
        rater=spec.rater, model=spec.model, endpoint=spec.endpoint,
        template_name=spec.template.name, template_sha256=spec.template.sha256,
        settings=dict(spec.settings), samples=spec.samples, scale=spec.scale, grades=grades,
        usage=usage,
    )


def grade_items(
    items: Sequence[GradeItem],
    judge: JudgeConfig,
    *,
    cache: AnswerCache | str | os.PathLike[str] | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    retry_unrateable: bool = False,
    sleep: Sleep | None = None,
    examples: Sequence[tuple[GradeItem, float]] = (),
) -> GradingResult:
    """Grade results with an LLM judge; one grade (or the reason for none) per item.

    Parameters
    ----------
    items : sequence of GradeItem
        The results to grade: query id and text, need, the result's display
        fields. An item repeated (same query and document) is asked once.
    judge : JudgeConfig
        The endpoint, model, prompt, guidelines and decoding settings.
    cache : AnswerCache or path, optional
        The answer cache (shared with ``rankscope judge --cache``): an
        answer found there is not asked again.
    max_calls, max_tokens : int, optional
        A budget: no request starts past it; the items left are ``not_reached``.
    retry_unrateable : bool, default False
        Pass over every cached answer that gives no grade: the endpoint is
        asked afresh and the new answer replaces it (a "re-ask").
    sleep : callable, optional
        An ``asyncio.sleep`` stand-in (tests).
    examples : sequence of (GradeItem, grade)
        Few-shot examples: results graded already, shown with their grade (in the
        prompt's answer form) before every item, in this order; part of every cache
        key. Never one of ``items``.

    Returns
    -------
    GradingResult
        The rater identity, prompt hash and settings, one :class:`LLMGrade`
        per item (in order), and the usage.

    Raises
    ------
    InputError
        One query id with two texts, or one result with two sets of fields; an
        example that is an item, or whose grade is off the scale.
    OptionError, JudgeError, FileAccessError
        A bad configuration or template; an endpoint that refuses every
        request (401, 403, 404) or cannot be used at all (the first request got
        no answer). A request that fails after its retries is not raised: its
        item has status ``failed``; items an endpoint that stopped answering
        left are ``not_reached`` (``usage.stopped`` says why).

    Examples
    --------
    >>> judge = JudgeConfig(endpoint="http://127.0.0.1:8080/v1", model="qwen2.5-7b")
    >>> item = GradeItem("q1", "d1", "cheap flights", {"title": "Flights from $49"})
    >>> result = grade_items([item], judge, cache="answers.sqlite")  # doctest: +SKIP
    >>> result.rater, result.grades[0].grade  # doctest: +SKIP
    ('llm:qwen2.5-7b', 2.0)
    """
    return run_blocking(grade_items_async(items, judge, cache=cache, max_calls=max_calls,
                                          max_tokens=max_tokens,
                                          retry_unrateable=retry_unrateable, sleep=sleep,
                                          examples=examples))
