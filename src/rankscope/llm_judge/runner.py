"""A judging run: ask a model to grade pairs, cached, resumable, within a budget.

For each pair the prompt template renders the chat messages; each answer is
looked up in the cache first and asked only when missing (``samples`` answers
per pair when sampling repeatedly: majority vote, ties unresolved). Workers
(``concurrency`` of them, asyncio) take pairs in order; every result is
appended to the grades file as it arrives, so a run that is interrupted
continues where it stopped, and at the end the rows are put in the pairs'
order (by query, then rank), whatever the concurrency. Pairs recorded as
``failed`` are asked again only with ``retry_failed``; ``unrateable`` ones
only with ``retry_unrateable``, which also passes over every cached answer
that gives no grade (the endpoint is asked afresh and the cache entry
replaced). When the call or token budget is spent, no further request
starts; when the endpoint stops answering, the run stops; either way what
was done is saved, and :meth:`Usage.incomplete` says what is left and how to
continue.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from rankscope.errors import JudgeRequestError, JudgeUnreachableError
from rankscope.llm_judge.cache import AnswerCache, CachedAnswer
from rankscope.llm_judge.client import Budget, ChatClient, Completion, Sleep
from rankscope.llm_judge.inputs import Pair, TextSource
from rankscope.llm_judge.output import ResultsFile
from rankscope.llm_judge.parse import parse_grade
from rankscope.llm_judge.plan import Plan, check_resume, gives_no_grade, plan, todo
from rankscope.llm_judge.spec import Job, RunSpec, build_spec, estimate_tokens, render_jobs

__all__ = [
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

Progress = Callable[["Usage"], None]
"""Called with the usage so far when a run starts and after each pair it records."""


@dataclass
class Usage:
    """What a run did and what it cost (the report at the end).

    ``failed_earlier`` counts failed pairs of an earlier run not asked again;
    ``failed_left`` and ``unrateable_left`` the rater's failed and unrateable
    pairs of this selection in the grades file at the end (whatever run made
    them); ``stopped`` says why the run stopped early (a budget, an endpoint
    that stopped answering); ``repaired`` what was put right in the grades
    file before writing to it.
    """

    pairs: int = 0
    already_done: int = 0
    to_grade: int = 0
    graded: int = 0
    unrateable: int = 0
    no_majority: int = 0
    failed: int = 0
    not_reached: int = 0
    failed_earlier: int = 0
    failed_left: int = 0
    unrateable_left: int = 0
    cache_hits: int = 0
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    saved_tokens: int = 0
    seconds: float = 0.0
    peak_in_flight: int = 0
    stopped: str | None = None
    repaired: str | None = None
    last_failure: str | None = None
    statuses: dict[str, int] = field(default_factory=dict)
    consistency: list[float] = field(default_factory=list, repr=False)

    @property
    def self_consistency(self) -> float | None:
        """Mean share of a pair's answers that agree with its majority (samples > 1)."""
        return sum(self.consistency) / len(self.consistency) if self.consistency else None

    @property
    def finished(self) -> int:
        """Pairs this run recorded (graded, unrateable, no majority, failed)."""
        return self.graded + self.unrateable + self.no_majority + self.failed

    def incomplete(self) -> str | None:
        """What the run left undone and which option continues it; None when whole.

        Failed pairs (of this run or an earlier one, not asked again) and pairs
        not reached (a budget, an endpoint that stopped answering) make a run
        incomplete; unrateable pairs do not (the model answered).
        """
        parts = []
        if self.not_reached:
            why = f" ({self.stopped})" if self.stopped else ""
            parts.append(f"{self.not_reached} pair(s) not reached{why}: run the same command "
                         "again to continue (raise --max-calls / --max-tokens if a budget "
                         "stopped it)")
        if self.failed_left:
            parts.append(f"{self.failed_left} pair(s) failed: --retry-failed asks them again")
        return "; ".join(parts) or None

    def unusable(self) -> str | None:
        """Why the endpoint could not be used at all (requests sent, none answered with a
        completion, every pair this run recorded failed); None otherwise."""
        if not self.failed or self.failed != self.finished or self.statuses.get("200"):
            return None
        return (f"cannot use the endpoint: none of its {self.requests} answers was a "
                f"completion; every pair failed (last: {self.last_failure})")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = {k: v for k, v in self.__dict__.items() if k != "consistency"}
        out["self_consistency"] = self.self_consistency
        out["incomplete"] = self.incomplete()
        out["unusable"] = self.unusable()
        return out


def _escape(text: str | None) -> str:
    return "" if not text else json.dumps(text, ensure_ascii=False)[1:-1]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _vote(spec: RunSpec, answers: list[CachedAnswer]) -> dict[str, Any]:
    """The row fields for a pair's answers: grade by majority, votes, consistency."""
    parsed = [parse_grade(a.answer, spec.scale, mode=spec.parse, marker=spec.template.marker,
                          finish_reason=a.finish_reason) for a in answers]
    grades = [p.grade for p in parsed if p.grade is not None]
    votes = ",".join("?" if p.grade is None else f"{p.grade:g}" for p in parsed)
    first = answers[0]
    row: dict[str, Any] = {"samples": len(answers), "votes": votes,
                           "raw": _escape(first.answer), "reasoning": _escape(first.reasoning),
                           "finish_reason": first.finish_reason}
    if not grades:
        row.update(grade=None, status="unrateable", reason=_one_line(parsed[0].reason))
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


def _left(spec: RunSpec, pairs: Sequence[Pair], results: ResultsFile, status: str) -> int:
    now = results.status_of(spec.rater)
    return sum(now.get((p.query_id, p.doc_id)) == status for p in pairs)


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
    retry_unrateable: bool = False,
    sleep: Sleep | None = None,
    progress: Progress | None = None,
) -> Usage:
    """Grade the pairs; returns the usage report (rows go to ``results``).

    Raises
    ------
    OptionError
        The grades file holds this rater's grades made otherwise (:func:`check_resume`).
    JudgeError
        The endpoint cannot be used at all: the first request got no answer, or
        failed after its retries; 401, 403, 404.
    """
    started = time.monotonic()
    work = todo(spec, pairs, results, retry_failed=retry_failed,
                retry_unrateable=retry_unrateable)
    check_resume(spec, results, render_jobs(spec, pairs, texts, required=False))
    jobs = render_jobs(spec, work.ask, texts)  # every prompt first: a template error costs 0
    results.drop(spec.rater, [(p.query_id, p.doc_id)
                              for p in (*work.again_failed, *work.again_unrateable)])
    usage = Usage(pairs=len(pairs), already_done=work.done, to_grade=len(work.ask),
                  failed_earlier=work.failed_earlier, repaired=results.repaired)
    budget = budget or Budget()
    client = ChatClient(spec.endpoint, spec.model, budget=budget, sleep=sleep,
                        provider=spec.provider, **client_options)
    queue: asyncio.Queue[Job] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    halted: list[str] = []  # why the run stopped before its end (the endpoint went away)
    configuration = spec.configuration()

    def cached(key: str) -> CachedAnswer | None:
        hit = cache.get(key) if cache is not None else None
        if hit is not None and retry_unrateable and gives_no_grade(spec, hit):
            return None  # asked afresh; the new answer replaces this one
        return hit

    async def answer(job: Job, key: str) -> CachedAnswer | None:
        hit = cached(key)
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
        got = CachedAnswer(done_.text, done_.prompt_tokens, done_.completion_tokens,
                           done_.finish_reason, done_.reasoning)
        if cache is not None:
            cache.put(key, spec.model, got)
        return got

    def record(job: Job, fields: Mapping[str, Any], answers: list[CachedAnswer]) -> None:
        results.append({
            "query_id": job.pair.query_id, "doc_id": job.pair.doc_id, "rater": spec.rater,
            **configuration, "messages_sha256": job.sha256,
            "prompt_tokens": sum(a.prompt_tokens or 0 for a in answers) if answers else None,
            "completion_tokens": (sum(a.completion_tokens or 0 for a in answers)
                                  if answers else None),
            **fields,
        })
        if progress is not None:
            progress(usage)

    async def worker() -> None:
        while not halted:
            try:
                job = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if budget.exhausted is not None and not all(cached(k) for k in job.keys):
                continue  # the budget is spent: only answers already paid for are used
            answers: list[CachedAnswer] = []
            hits_before = usage.cache_hits
            try:
                for key in job.keys:
                    got = await answer(job, key)
                    if got is None:
                        break  # budget spent: this pair stays to do
                    answers.append(got)
            except JudgeUnreachableError as exc:
                halted.append(str(exc))
                return  # this pair stays to do, like every pair not taken yet
            except JudgeRequestError as exc:
                usage.failed += 1
                usage.last_failure = _one_line(str(exc))
                record(job, {"grade": None, "status": "failed", "reason": _one_line(str(exc)),
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

    if progress is not None:
        progress(usage)
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
        usage.peak_in_flight = client.stats.peak_in_flight
        usage.seconds = time.monotonic() - started
    usage.stopped = halted[0] if halted else budget.exhausted
    usage.not_reached = usage.to_grade - usage.finished
    results.order(spec.rater, {(p.query_id, p.doc_id): i for i, p in enumerate(pairs)})
    usage.failed_left = _left(spec, pairs, results, "failed")
    usage.unrateable_left = _left(spec, pairs, results, "unrateable")
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
