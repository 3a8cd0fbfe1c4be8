"""A judging run: ask a model to grade pairs, cached, resumable, within a budget.

For each pair the prompt template renders the chat messages; each answer is
looked up in the cache first and asked only when missing (``samples`` answers
per pair when sampling repeatedly: majority vote, ties unresolved). Workers
(``concurrency`` of them, asyncio) take pairs in order; every result is
appended to the grades file as it arrives, so a run that is interrupted
continues where it stopped. Pairs recorded as ``failed`` are asked again only
with ``retry_failed``. When the call or token budget is spent, no further
request starts, and what was done is saved.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import time
from collections import Counter
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from rankscope.errors import InputError, JudgeRequestError, OptionError
from rankscope.judge.cache import AnswerCache, CachedAnswer, cache_key
from rankscope.judge.client import Budget, ChatClient, Completion, Sleep
from rankscope.judge.inputs import Pair, TextSource, document_fields, query_need
from rankscope.judge.output import DONE, ResultsFile
from rankscope.judge.parse import parse_grade
from rankscope.judge.prompts import Message, PromptTemplate
from rankscope.judgments.scales import Scale

__all__ = [
    "ANSWER_TOKENS",
    "Plan",
    "RunSpec",
    "Usage",
    "build_spec",
    "estimate_tokens",
    "plan",
    "run",
    "run_blocking",
]

T = TypeVar("T")

ANSWER_TOKENS = 16
"""Tokens expected in one answer (``{"grade": 2}``) when no ``max_tokens`` caps it."""


def estimate_tokens(messages: Sequence[Message]) -> int:
    """About four characters a token, plus a few for each message's framing."""
    return sum(math.ceil(len(m["content"]) / 4) + 4 for m in messages)


@dataclass(frozen=True)
class RunSpec:
    """Everything a judging run needs, resolved."""

    endpoint: str
    model: str
    rater: str
    scale: Scale
    template: PromptTemplate
    settings: Mapping[str, Any]
    samples: int = 1
    guidelines: str = ""
    max_doc_chars: int | None = 6000
    concurrency: int = 8

    @property
    def settings_json(self) -> str:
        """The settings as canonical JSON (recorded with every grade)."""
        return json.dumps(dict(self.settings), sort_keys=True, separators=(",", ":"))

    @property
    def answer_tokens(self) -> int:
        cap = self.settings.get("max_tokens", self.settings.get("max_completion_tokens"))
        return int(cap) if isinstance(cap, int) and cap > 0 else ANSWER_TOKENS


def build_spec(
    *,
    endpoint: str,
    model: str,
    scale: Scale | str = "graded",
    prompt: PromptTemplate | str | os.PathLike[str] | None = None,
    rater: str | None = None,
    temperature: float = 0.0,
    settings: Mapping[str, Any] | None = None,
    samples: int = 1,
    guidelines: str = "",
    max_doc_chars: int | None = 6000,
    concurrency: int = 8,
) -> RunSpec:
    """A checked :class:`RunSpec` (the settings sent are the temperature plus ``settings``).

    Raises
    ------
    OptionError
        ``samples`` or ``concurrency`` below 1, an empty endpoint or model.
    JudgeError, FileAccessError
        The prompt template cannot be read or compiled.
    """
    from rankscope.judge.prompts import load_template
    from rankscope.judgments.scales import GRADED, get_scale

    if not endpoint or not model:
        raise OptionError("an endpoint URL and a model name are both needed")
    if samples < 1:
        raise OptionError(f"samples must be >= 1, not {samples}")
    if concurrency < 1:
        raise OptionError(f"concurrency must be >= 1, not {concurrency}")
    sc = get_scale(scale) or GRADED
    return RunSpec(
        endpoint=endpoint, model=model, rater=rater or f"llm:{model}", scale=sc,
        template=load_template(prompt, sc),
        settings={"temperature": temperature, **(settings or {})}, samples=samples,
        guidelines=guidelines, max_doc_chars=max_doc_chars, concurrency=concurrency,
    )


@dataclass(frozen=True)
class Plan:
    """What a run would do (the dry run's report)."""

    pairs: int
    already_done: int
    to_grade: int
    answers: int
    cache_hits: int
    calls: int
    prompt_tokens: int
    completion_tokens: int

    def to_dict(self) -> dict[str, int]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


@dataclass
class Usage:
    """What a run did and what it cost (the report at the end)."""

    pairs: int = 0
    already_done: int = 0
    to_grade: int = 0
    graded: int = 0
    unrateable: int = 0
    no_majority: int = 0
    failed: int = 0
    not_reached: int = 0
    cache_hits: int = 0
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    saved_tokens: int = 0
    seconds: float = 0.0
    stopped: str | None = None
    statuses: dict[str, int] = field(default_factory=dict)
    consistency: list[float] = field(default_factory=list, repr=False)

    @property
    def self_consistency(self) -> float | None:
        """Mean share of a pair's answers that agree with its majority (samples > 1)."""
        return sum(self.consistency) / len(self.consistency) if self.consistency else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = {k: v for k, v in self.__dict__.items() if k != "consistency"}
        out["self_consistency"] = self.self_consistency
        return out


@dataclass(frozen=True)
class _Job:
    pair: Pair
    messages: list[Message]
    keys: list[str]


def _jobs(spec: RunSpec, pairs: Sequence[Pair], texts: TextSource) -> list[_Job]:
    missing_q = [p.query_id for p in pairs if texts.query_text(p.query_id) is None]
    shown = {p: document_fields(texts, p) for p in pairs}
    missing_d = [p.doc_id for p in pairs if shown[p] is None]
    for what, ids in (("query", missing_q), ("document", missing_d)):
        if ids:
            distinct = list(dict.fromkeys(ids))
            raise InputError(
                f"no text for {len(distinct)} {what}(s) to grade, e.g. {distinct[0]!r}; "
                "check the queries / documents files"
            )
    jobs = []
    for p in pairs:
        messages = spec.template.render(
            query_id=p.query_id, query=texts.query_text(p.query_id) or "", doc_id=p.doc_id,
            fields=shown[p] or {}, scale=spec.scale, guidelines=spec.guidelines,
            max_doc_chars=spec.max_doc_chars, need=query_need(texts, p.query_id),
        )
        keys = [cache_key(spec.endpoint, spec.model, messages, spec.settings, sample=s)
                for s in range(spec.samples)]
        jobs.append(_Job(p, messages, keys))
    return jobs


def _todo(
    spec: RunSpec, pairs: Sequence[Pair], results: ResultsFile, retry_failed: bool
) -> tuple[list[Pair], int, list[Pair]]:
    """(pairs to ask, how many are done already, failed pairs to ask again).

    Raises
    ------
    OptionError
        The file holds grades by this rater made with another model, prompt or
        settings: resuming would mix them (a new file or another rater name will do).
    """
    mine = (spec.model, spec.template.sha256, spec.settings_json)
    others = {c for c in results.configurations(spec.rater) if c != mine}
    if others:
        model, sha, settings = sorted(others)[0]
        raise OptionError(
            f"{results.path} already holds grades by {spec.rater} made with another model, "
            f"prompt or settings (model {model or '?'}, template {sha[:12] or '?'}, settings "
            f"{settings or '?'}); write to a new file or name another rater"
        )
    status = results.status_of(spec.rater)
    todo, done, again = [], 0, []
    for p in pairs:
        s = status.get((p.query_id, p.doc_id))
        if s is None:
            todo.append(p)
        elif s in DONE or not retry_failed:
            done += 1
        else:
            todo.append(p)
            again.append(p)
    return todo, done, again


def plan(
    spec: RunSpec, pairs: Sequence[Pair], texts: TextSource, results: ResultsFile,
    cache: AnswerCache | None, *, retry_failed: bool = False,
) -> Plan:
    """Count pairs, cache hits, calls and tokens; sends nothing."""
    todo, done, _ = _todo(spec, pairs, results, retry_failed)
    jobs = _jobs(spec, todo, texts)
    hits = calls = prompt_tokens = 0
    for job in jobs:
        for key in job.keys:
            if cache is not None and key in cache:
                hits += 1
            else:
                calls += 1
                prompt_tokens += estimate_tokens(job.messages)
    return Plan(
        pairs=len(pairs), already_done=done, to_grade=len(todo),
        answers=len(jobs) * spec.samples, cache_hits=hits, calls=calls,
        prompt_tokens=prompt_tokens, completion_tokens=calls * spec.answer_tokens,
    )


def _vote(spec: RunSpec, answers: list[CachedAnswer]) -> dict[str, Any]:
    """The row fields for a pair's answers: grade by majority, votes, consistency."""
    parsed = [parse_grade(a.answer, spec.scale) for a in answers]
    grades = [p.grade for p in parsed if p.grade is not None]
    votes = ",".join("?" if p.grade is None else f"{p.grade:g}" for p in parsed)
    row: dict[str, Any] = {"samples": len(answers), "votes": votes}
    if not grades:
        first = parsed[0]
        row.update(grade=None, status="unrateable", reason=first.reason,
                   raw=_escape(answers[0].answer))
        return row
    counts = Counter(grades).most_common()
    top = counts[0][1]
    winners = [g for g, c in counts if c == top]
    row["consistency"] = top / len(answers)
    if len(winners) > 1:
        shown = " / ".join(f"{g:g}" for g in sorted(winners))
        row.update(grade=None, status="no_majority", reason=f"tied votes ({shown})")
    else:
        row.update(grade=winners[0], status="graded", reason="")
    return row


def _escape(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


async def run(
    spec: RunSpec,
    pairs: Sequence[Pair],
    texts: TextSource,
    results: ResultsFile,
    cache: AnswerCache | None,
    client_options: Mapping[str, Any],
    *,
    budget: Budget | None = None,
    retry_failed: bool = False,
    sleep: Sleep | None = None,
) -> Usage:
    """Grade the pairs; returns the usage report (rows go to ``results``)."""
    started = time.monotonic()
    todo, done, again = _todo(spec, pairs, results, retry_failed)
    jobs = _jobs(spec, todo, texts)  # renders every prompt first: a template error costs nothing
    results.drop(spec.rater, [(p.query_id, p.doc_id) for p in again])
    usage = Usage(pairs=len(pairs), already_done=done, to_grade=len(todo))
    budget = budget or Budget()
    client = ChatClient(spec.endpoint, spec.model, budget=budget, sleep=sleep, **client_options)
    queue: asyncio.Queue[_Job] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)

    async def answer(job: _Job, key: str) -> CachedAnswer | None:
        hit = cache.get(key) if cache is not None else None
        if hit is not None:
            usage.cache_hits += 1
            usage.saved_tokens += (hit.prompt_tokens or 0) + (hit.completion_tokens or 0)
            return hit
        estimate = estimate_tokens(job.messages) + spec.answer_tokens
        done_: Completion | None = await client.complete(job.messages, spec.settings,
                                                         estimate=estimate)
        if done_ is None:
            return None
        usage.prompt_tokens += done_.prompt_tokens or 0
        usage.completion_tokens += done_.completion_tokens or 0
        got = CachedAnswer(done_.text, done_.prompt_tokens, done_.completion_tokens)
        if cache is not None:
            cache.put(key, spec.model, got)
        return got

    def record(job: _Job, fields: Mapping[str, Any], answers: list[CachedAnswer]) -> None:
        results.append({
            "query_id": job.pair.query_id, "doc_id": job.pair.doc_id, "rater": spec.rater,
            "model": spec.model, "template_sha256": spec.template.sha256,
            "settings": spec.settings_json,
            "prompt_tokens": sum(a.prompt_tokens or 0 for a in answers) if answers else None,
            "completion_tokens": (sum(a.completion_tokens or 0 for a in answers)
                                  if answers else None),
            **fields,
        })

    async def worker() -> None:
        while True:
            try:
                job = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if budget.exhausted is not None and not (
                cache is not None and all(k in cache for k in job.keys)
            ):
                continue  # the budget is spent: only answers already paid for are used
            answers: list[CachedAnswer] = []
            hits_before = usage.cache_hits
            try:
                for key in job.keys:
                    got = await answer(job, key)
                    if got is None:
                        break  # budget spent: this pair stays to do
                    answers.append(got)
            except JudgeRequestError as exc:
                usage.failed += 1
                record(job, {"grade": None, "status": "failed", "reason": str(exc),
                             "samples": spec.samples}, answers)
                continue
            if len(answers) < len(job.keys):
                continue
            fields = _vote(spec, answers)
            fields["cached"] = usage.cache_hits - hits_before == len(job.keys)
            status = fields["status"]
            setattr(usage, status, getattr(usage, status) + 1)
            if spec.samples > 1 and "consistency" in fields:
                usage.consistency.append(fields["consistency"])
            record(job, fields, answers)

    try:
        workers = [asyncio.create_task(worker()) for _ in range(max(1, spec.concurrency))]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
    finally:
        await client.aclose()
        usage.requests = client.stats.requests
        usage.retries = client.stats.retries
        usage.statuses = dict(client.stats.statuses or {})
        usage.seconds = time.monotonic() - started
    usage.stopped = budget.exhausted
    usage.not_reached = usage.to_grade - (usage.graded + usage.unrateable + usage.no_majority
                                          + usage.failed)
    return usage


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end from synchronous code, even inside a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    # Called from inside a running loop (a notebook, a web handler): a thread of our own.
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
