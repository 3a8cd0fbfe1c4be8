"""Before a judging run: which pairs are left to ask, whether the grades file may be
resumed by this run, and what the run would cost (the dry run's report).

A pair is *done* when the grades file holds a ``graded``, ``no_majority`` or
``unrateable`` row for it by the run's rater; ``unrateable`` ones are asked
again with ``retry_unrateable``. A ``failed`` pair is never done: it is
asked again with ``retry_failed``, and counted apart otherwise.

A resume must match the run it resumes: every row of the rater must have
been made with the same model, endpoint, scale, prompt template, settings,
number of samples and answer reader, and each pair already done with the
same messages (a hash of the prompt as rendered: guidelines, need, document,
few-shot examples). Anything else is refused, naming the difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rankscope.errors import OptionError
from rankscope.llm_judge.cache import AnswerCache, CachedAnswer
from rankscope.llm_judge.inputs import Pair, TextSource
from rankscope.llm_judge.output import CONFIGURATION, ResultsFile
from rankscope.llm_judge.parse import parse_grade
from rankscope.llm_judge.spec import Job, RunSpec, estimate_tokens, render_jobs

__all__ = ["Plan", "Todo", "check_resume", "gives_no_grade", "plan", "todo"]

_WHAT = {"model": "model", "endpoint": "endpoint", "scale": "scale",
         "template_sha256": "prompt template (SHA-256)", "settings": "decoding settings",
         "samples": "number of samples", "parse": "answer reader (--parse)"}


@dataclass(frozen=True)
class Todo:
    """The pairs of a run, sorted out against the grades file."""

    ask: list[Pair]
    """Pairs to ask (never asked, or asked again)."""
    done: int
    """Pairs done already (graded, no majority, unrateable not asked again)."""
    again_failed: list[Pair] = field(default_factory=list)
    again_unrateable: list[Pair] = field(default_factory=list)
    failed_earlier: int = 0
    """Failed pairs left as they are (``retry_failed`` asks them again)."""


def todo(spec: RunSpec, pairs: Sequence[Pair], results: ResultsFile, *,
         retry_failed: bool = False, retry_unrateable: bool = False) -> Todo:
    """Sort the pairs into those to ask, those done, and those failed earlier."""
    status = results.status_of(spec.rater)
    ask: list[Pair] = []
    done = failed_earlier = 0
    again_failed: list[Pair] = []
    again_unrateable: list[Pair] = []
    for p in pairs:
        s = status.get((p.query_id, p.doc_id))
        if s is None:
            ask.append(p)
        elif s == "failed":
            if retry_failed:
                ask.append(p)
                again_failed.append(p)
            else:
                failed_earlier += 1
        elif s == "unrateable" and retry_unrateable:
            ask.append(p)
            again_unrateable.append(p)
        else:
            done += 1
    return Todo(ask, done, again_failed, again_unrateable, failed_earlier)


def check_resume(spec: RunSpec, results: ResultsFile, jobs: Sequence[Job]) -> None:
    """Refuse to add to a grades file whose rows by this rater were made otherwise.

    ``jobs`` are this run's rendered pairs (those the file holds are compared
    by the hash of their messages). Rows of an earlier version, without a
    column, are not compared on it.

    Raises
    ------
    OptionError
        A difference, named (the first found), with what to do instead.
    """
    mine = [r for r in results.rows if r.get("rater") == spec.rater]
    if not mine:
        return
    where = f"{results.path or 'the grades'} already holds grades by {spec.rater}"
    fix = "write to a new file (-o) or name another rater (--rater)"
    expected = spec.configuration()
    for column in CONFIGURATION:
        now = expected[column]
        for row in mine:
            was = row.get(column, "")
            if was and was != now:
                raise OptionError(f"{where} made with another {_WHAT[column]} ({was!r}; "
                                  f"this run: {now!r}): {fix}")
    hashes = {(r["query_id"], r["doc_id"]): r.get("messages_sha256", "") for r in mine}
    changed = [j.pair for j in jobs
               if hashes.get((j.pair.query_id, j.pair.doc_id)) not in (None, "", j.sha256)]
    if changed:
        first = changed[0]
        raise OptionError(
            f"{where} made with other messages for {len(changed)} of its pairs (e.g. "
            f"{first.query_id} {first.doc_id}): other guidelines, needs, documents, few-shot "
            f"examples or prompt; {fix}")


def gives_no_grade(spec: RunSpec, answer: CachedAnswer) -> bool:
    """Whether a (cached) answer gives no grade as this run reads it."""
    return parse_grade(answer.answer, spec.scale, mode=spec.parse,
                       marker=spec.template.marker,
                       finish_reason=answer.finish_reason).grade is None


@dataclass(frozen=True)
class Plan:
    """What a run would do (the dry run's report).

    ``calls`` and the token estimates stop where ``max_calls`` or
    ``max_tokens`` would stop the run; ``not_reached`` counts the pairs it
    would leave unasked and ``stopped_by`` names the budget.
    """

    pairs: int
    already_done: int
    to_grade: int
    answers: int
    cache_hits: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    failed_earlier: int = 0
    not_reached: int = 0
    stopped_by: str | None = None

    def to_dict(self) -> dict[str, int | str | None]:
        """A JSON-ready dict."""
        return dict(self.__dict__)


def plan(
    spec: RunSpec, pairs: Sequence[Pair], texts: TextSource, results: ResultsFile,
    cache: AnswerCache | None, *, retry_failed: bool = False, retry_unrateable: bool = False,
    max_calls: int | None = None, max_tokens: int | None = None,
) -> Plan:
    """Count pairs, cache hits, calls and tokens within the budget; sends nothing.

    Raises
    ------
    OptionError
        The grades file cannot be resumed by this run (:func:`check_resume`).
    InputError
        A pair to ask has no text.
    """
    work = todo(spec, pairs, results, retry_failed=retry_failed,
                retry_unrateable=retry_unrateable)
    check_resume(spec, results, render_jobs(spec, pairs, texts, required=False))
    jobs = render_jobs(spec, work.ask, texts)
    hits = calls = prompt_tokens = answered = 0
    stopped: str | None = None
    for job in jobs:
        needed = []
        for key in job.keys:
            hit = cache.get(key) if cache is not None else None
            if hit is not None and not (retry_unrateable and gives_no_grade(spec, hit)):
                hits += 1
            else:
                needed.append(key)
        estimate = estimate_tokens(job.messages)
        cost = len(needed) * (estimate + spec.answer_tokens)
        if stopped is None and max_calls is not None and calls + len(needed) > max_calls:
            stopped = f"the call budget ({max_calls})"
        spent = prompt_tokens + calls * spec.answer_tokens
        if stopped is None and max_tokens is not None and needed and spent + cost > max_tokens:
            stopped = f"the token budget ({max_tokens})"
        if stopped is not None and needed:
            continue  # a pair the budget leaves out (one whose answers are cached is not)
        calls += len(needed)
        prompt_tokens += len(needed) * estimate
        answered += 1
    return Plan(
        pairs=len(pairs), already_done=work.done, to_grade=len(jobs),
        answers=len(jobs) * spec.samples, cache_hits=hits, calls=calls,
        prompt_tokens=prompt_tokens, completion_tokens=calls * spec.answer_tokens,
        failed_earlier=work.failed_earlier, not_reached=len(jobs) - answered,
        stopped_by=stopped,
    )
