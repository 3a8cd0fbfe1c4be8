"""LLM judges as one more grader of an evaluation.

A curator attaches a judge to an evaluation (:func:`attach_judge`): an
OpenAI-compatible endpoint, a model, the *name* of the server's environment
variable that holds the API key (the key itself is never stored), a budget
of calls, and whether its grades count. The server's
:class:`~rankscope.services.boundary.Boundary` decides which variables may
be named and which hosts reached, when the judge is attached and again when
it runs. The judge gets its own rater, of
kind ``llm``. Running it (:func:`run_judge`) takes the evaluation's open
tasks as that rater would be offered them (results that still want grades,
never one it graded), asks the model through
:func:`rankscope.llm_judge.grading.grade_items` (the query, the need, the
result's display fields, the evaluation's scale and guidelines; answers
cached like ``rankscope judge --cache``), and records the grades with
:func:`rankscope.services.grading.submit_batch` (``source="llm"``), in one
transaction, idempotently.

With ``few_shot`` examples the model is shown, before every result, that many
results of the evaluation the people graded already, each with its grade: the
counted grades of people (never an LLM's), one per result by their majority (a
tied vote is no example), never a result the run grades, chosen in a fixed order
that takes the grades in turn (as ``rankscope judge --few-shot`` does; see
:mod:`rankscope.llm_judge.examples`). A run without enough such results fails,
saying how many it found.

When the judge does not count (the default) its grades fill no slot of the
grades wanted and are left out of the aggregated grades, the metrics and
the exports; they are shown beside the people's and compared with them on
the agreement page. When it counts it is a grader like any other.

A run's outcome is what the page shows (``outcome`` of :func:`get_judge`):
``failed`` when the run could not be made (an endpoint that cannot be
reached or used at all, a missing key) or every request failed; ``incomplete``
when some results failed or were not reached (the budget, an endpoint that
stopped answering); ``done`` otherwise. Results whose answer gave no grade
(*unrateable*) stay open tasks; ``run_judge(..., retry_unrateable=True)``
asks the endpoint again for exactly those of the last run, past the answer
cache.
"""

from __future__ import annotations

import os
import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl
from sqlalchemy import select

from rankscope.errors import (
    ConflictError,
    InputError,
    JudgeError,
    NotFoundError,
    OptionError,
    RankscopeError,
)
from rankscope.search.credentials import check_url_credentials
from rankscope.services.assignment import MAX_BATCH
from rankscope.services.campaigns import evaluation_row
from rankscope.services.limits import MAX_NAME, MAX_URL, check_spec, spec_field
from rankscope.store.models import utcnow
from rankscope.store.models_app import LLMJudge, Rater

if TYPE_CHECKING:
    from pathlib import Path

    from sqlalchemy.orm import Session

    from rankscope.llm_judge.client import Sleep
    from rankscope.services.accounts import Actor
    from rankscope.services.boundary import Boundary
    from rankscope.store.db import Store

__all__ = [
    "MAX_CALLS",
    "MAX_FEW_SHOT",
    "JudgeSpec",
    "attach_judge",
    "get_judge",
    "list_judges",
    "recover_interrupted_judges",
    "run_judge",
    "set_counts",
]

MAX_CALLS = 100_000
MAX_FEW_SHOT = 10
"""Few-shot examples a judge of the app shows at most (each one is in every request)."""
BATCH = MAX_BATCH
"""Grades sent to the grading service at once (its batch limit)."""
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class JudgeSpec:
    """What a curator gives to attach an LLM judge.

    Each field's meaning and limits are written once, here (``spec_field``): the
    service checks them and the API's input model is derived from them.
    """

    endpoint: str = spec_field(
        doc="The OpenAI-compatible API base (http://127.0.0.1:8080/v1).", limit=MAX_URL,
        label="the endpoint")
    model: str = spec_field(doc="The model's name.", limit=MAX_NAME, label="the model")
    api_key_env: str | None = spec_field(
        None, doc="The server's environment variable holding the API key (never the key).",
        limit=MAX_NAME, label="the API key's variable")
    max_calls: int = spec_field(200, doc=f"Requests one run may make at most (1 to {MAX_CALLS:,}).")
    counts: bool = spec_field(False, doc="Whether its grades fill grades-wanted slots and enter "
                              "the aggregated grades.")
    name: str | None = spec_field(None, doc="The rater's name (default llm:MODEL; made unique).",
                                  limit=MAX_NAME, label="the name")
    provider: str = spec_field(
        "openai", doc="How requests are written and answers read: openai (chat completions, "
        "what vLLM, llama.cpp and LM Studio answer) or ollama (Ollama's own /api/chat).",
        limit=MAX_NAME, label="the provider")
    parse: str = spec_field(
        "strict", doc="How a grade is read from an answer: strict (the prompt's answer form "
        "only) or lenient (also a lone grade in the text).", limit=MAX_NAME,
        label="the answer reading")
    prompt: str | None = spec_field(
        None, doc="A built-in prompt: graded, binary, detail, generic or assessor (the TREC "
        "assessor prompt); none: the evaluation's scale's own.", limit=MAX_NAME,
        label="the prompt")
    few_shot: int = spec_field(
        0, doc=f"Results of the evaluation graded by people shown to the model as examples, "
        f"with their grade, before every result (0 to {MAX_FEW_SHOT}; 0: none).")


def _check(spec: JudgeSpec, boundary: Boundary) -> None:
    from rankscope.llm_judge.client import check_endpoint
    check_spec(spec)
    # credentials first: a key pasted by mistake is refused without being repeated, even
    # in a URL the judge's own rule (check_endpoint, the one URL rule) would refuse
    check_url_credentials("the endpoint", spec.endpoint.strip(), advice="name the server's "
                          "environment variable that holds the key in api_key_env instead")
    check_endpoint(spec.endpoint)
    if not spec.model.strip():
        raise OptionError("an LLM judge needs a model name")
    if spec.api_key_env and not _ENV_NAME.match(spec.api_key_env):
        raise OptionError("the API key is named by an environment variable (letters, digits, "
                          "_), not by the key itself")
    if spec.api_key_env:
        boundary.check_env(spec.api_key_env, "the API key")
    boundary.check_url(spec.endpoint.strip(), "the endpoint")
    if isinstance(spec.max_calls, bool) or not isinstance(spec.max_calls, int) or not (
            1 <= spec.max_calls <= MAX_CALLS):
        raise OptionError(f"max calls must be 1 to {MAX_CALLS}, not {spec.max_calls!r}")
    if isinstance(spec.few_shot, bool) or not isinstance(spec.few_shot, int) or not (
            0 <= spec.few_shot <= MAX_FEW_SHOT):
        raise OptionError(f"few-shot examples must be 0 to {MAX_FEW_SHOT}, "
                          f"not {spec.few_shot!r}")
    _check_options(spec.provider, spec.parse, spec.prompt)


def _check_options(provider: str, parse: str, prompt: str | None) -> None:
    """The provider registered, the answer reading known, the prompt a built-in one (never a
    path: a web user names no file of the server)."""
    from rankscope.llm_judge.parse import PARSE_MODES
    from rankscope.llm_judge.prompts import BUILTIN_TEMPLATES
    from rankscope.llm_judge.providers import PROVIDERS

    if provider not in PROVIDERS:
        raise OptionError(f"the provider is one of {', '.join(sorted(PROVIDERS))}, "
                          f"not {provider[:40]!r}")
    if parse not in PARSE_MODES:
        raise OptionError(f"the answer reading is {' or '.join(PARSE_MODES)}, not {parse[:40]!r}")
    if prompt is not None and prompt not in BUILTIN_TEMPLATES:
        raise OptionError(f"the prompt is one of {', '.join(BUILTIN_TEMPLATES)}, "
                          f"not {prompt[:40]!r}")


def _check_prompt(prompt: str | None, scale: Any) -> None:
    """The prompt fits the evaluation's scale (the assessor prompt grades 0-3)."""
    from rankscope.llm_judge.prompts import load_template

    try:
        load_template(prompt, scale)
    except JudgeError as exc:
        raise OptionError(str(exc)) from None


def _outcome(status: str, last_run: dict[str, Any] | None) -> str:
    """What the page says of the judge: running, failed, incomplete, done or idle."""
    if status != "done" or not last_run:
        return status
    statuses = last_run.get("statuses") or {}
    if statuses.get("failed") or statuses.get("not_reached"):
        return "incomplete"
    return "done"


def _view(session: Session, judge: LLMJudge) -> dict[str, Any]:
    rater = session.get(Rater, judge.rater_id)
    last = judge.last_run
    return {"id": judge.id, "evaluation_id": judge.evaluation_id,
            "rater": rater.name if rater else "?", "rater_id": judge.rater_id,
            "counts": bool(rater.counts) if rater else False, "endpoint": judge.endpoint,
            "model": judge.model, "api_key_env": judge.api_key_env,
            "max_calls": judge.max_calls, "provider": judge.provider, "parse": judge.parse,
            "prompt": judge.prompt, "few_shot": judge.few_shot, "status": judge.status,
            "error": judge.error,
            "outcome": _outcome(judge.status, last),
            "unrateable": len((last or {}).get("unrateable_tasks") or []),
            "last_run": last, "created_at": judge.created_at.isoformat()}


def attach_judge(store: Store, actor: Actor, evaluation_id: int, spec: JudgeSpec, *,
                 boundary: Boundary) -> dict[str, Any]:
    """Attach an LLM judge to the evaluation (curators); its rater is made, of kind ``llm``.

    Raises
    ------
    OptionError
        A bad value (the endpoint not an http(s) URL with a host), an
        environment variable the ``boundary`` does not allow.
    ConfigError
        A credential in the URL (refused without being repeated).
    OutboundError
        A host the boundary does not allow.
    """
    _check(spec, boundary)

    def work(session: Session) -> dict[str, Any]:
        from rankscope.services.assignment import scale_of

        ev = evaluation_row(session, actor, evaluation_id, "curator")
        _check_prompt(spec.prompt, scale_of(ev))
        base = (spec.name or f"llm:{spec.model.strip()}").strip()
        name, n = base, 1
        while session.scalar(select(Rater.id).where(Rater.name == name)) is not None:
            n += 1
            name = f"{base} #{n}"
        rater = Rater(name=name, kind="llm", counts=bool(spec.counts), created_at=utcnow())
        session.add(rater)
        session.flush()
        judge = LLMJudge(evaluation_id=ev.id, rater_id=rater.id, endpoint=spec.endpoint.strip(),
                         model=spec.model.strip(), api_key_env=spec.api_key_env or None,
                         max_calls=spec.max_calls, provider=spec.provider, parse=spec.parse,
                         prompt=spec.prompt, few_shot=spec.few_shot, status="idle",
                         created_by=actor.user_id,
                         created_at=utcnow())
        session.add(judge)
        session.flush()
        return _view(session, judge)

    return store.write(work)


def _judge_row(session: Session, actor: Actor, judge_id: int) -> LLMJudge:
    judge = session.get(LLMJudge, judge_id)
    if judge is None:
        raise NotFoundError(f"no LLM judge #{judge_id}")
    evaluation_row(session, actor, judge.evaluation_id, "curator")
    return judge


def list_judges(store: Store, actor: Actor, evaluation_id: int) -> list[dict[str, Any]]:
    """The evaluation's LLM judges (curators)."""
    with store.read() as session:
        evaluation_row(session, actor, evaluation_id, "curator")
        return [_view(session, j) for j in session.scalars(
            select(LLMJudge).where(LLMJudge.evaluation_id == evaluation_id)
            .order_by(LLMJudge.id))]


def get_judge(store: Store, actor: Actor, judge_id: int) -> dict[str, Any]:
    """One LLM judge (curators of its evaluation; NotFoundError otherwise)."""
    with store.read() as session:
        return _view(session, _judge_row(session, actor, judge_id))


def set_counts(store: Store, actor: Actor, judge_id: int, counts: bool) -> dict[str, Any]:
    """Let the judge's grades count toward the grades wanted (and the metrics), or not."""

    def work(session: Session) -> dict[str, Any]:
        judge = _judge_row(session, actor, judge_id)
        rater = session.get(Rater, judge.rater_id)
        if rater is not None:
            rater.counts = bool(counts)
        return _view(session, judge)

    return store.write(work)


def recover_interrupted_judges(store: Store) -> list[int]:
    """Mark ``failed`` the judge runs a stopped server left ``running`` (before serving)."""

    def work(session: Session) -> list[int]:
        stuck = list(session.scalars(select(LLMJudge).where(LLMJudge.status == "running")))
        for judge in stuck:
            judge.status, judge.error = "failed", "the server stopped during the run"
        return [j.id for j in stuck]

    return store.write(work)


def _set_status(store: Store, judge_id: int, status: str, error: str | None,
                last_run: dict[str, Any] | None = None) -> None:
    def work(session: Session) -> None:
        judge = session.get(LLMJudge, judge_id)
        if judge is not None:
            judge.status, judge.error = status, error
            if last_run is not None:
                judge.last_run = last_run

    store.write(work)


def _fields(view: Any) -> dict[str, str]:
    shown = {"title": view.title, "snippet": view.snippet, "url": view.url}
    shown.update({str(k): str(v) for k, v in view.fields.items() if k not in shown})
    return {k: str(v) for k, v in shown.items() if v not in (None, "")}


def _examples(session: Session, ev: Any, n: int, grading: set[int]
              ) -> list[tuple[Any, float]]:
    """``n`` results of ``ev`` people graded, with their grade, none of the tasks ``grading``
    (see the module's docstring)."""
    from rankscope.llm_judge.examples import example_order, pick_examples
    from rankscope.llm_judge.grading import GradeItem
    from rankscope.services.assignment import scale_of
    from rankscope.services.task_views import task_views
    from rankscope.store.models_app import Grade, Task

    rows = session.execute(
        select(Task.id, Rater.name, Grade.value)
        .join(Grade, Grade.item_id == Task.item_id).join(Rater, Grade.rater_id == Rater.id)
        .where(Task.evaluation_id == ev.id, Grade.scale == ev.scale, Grade.active.is_(True),
               Grade.value.is_not(None), Rater.kind != "llm", Rater.counts.is_(True))).all()
    # a task is one result of the evaluation: its id stands for the pair while choosing
    judged = pl.DataFrame([(str(t), "-", r, float(v)) for t, r, v in rows
                           if t not in grading and v is not None],
                          schema={"query_id": pl.String, "doc_id": pl.String,
                                  "rater": pl.String, "grade": pl.Float64}, orient="row")
    order = example_order(judged, scale_of(ev))
    wanted = [int(e.query_id) for e in order[:20 * n]]
    shown = {str(v.task_id): v for v in task_views(session, ev, wanted, None)}
    chosen = pick_examples(order, n, lambda pair: pair.query_id in shown)
    return [(GradeItem(v.query_id, v.doc_id, v.query_text, _fields(v), need=v.need), e.grade)
            for e in chosen for v in [shown[e.query_id]]]


def run_judge(store: Store, actor: Actor, judge_id: int, *, boundary: Boundary,
              cache: str | Path | None = None, sleep: Sleep | None = None,
              retry_unrateable: bool = False) -> dict[str, Any]:
    """Grade the evaluation's open tasks with the judge; what the run did.

    Returns the run's summary (also kept as the judge's ``last_run``):
    ``items`` asked, ``accepted`` grades, ``refused`` (a result filled in
    the meantime), the judge's statuses (``graded``, ``unrateable``,
    ``failed``, ``not_reached``), ``unrateable_tasks`` (the tasks whose
    answer gave no grade), ``failure`` (the last failed
    request's error), ``stopped`` (why the run stopped early), ``requests``,
    ``cache_hits``, tokens, the prompt template and its SHA-256. With
    ``retry_unrateable`` only the last run's unrateable results that are
    still open are asked, and their cached answers are passed over.

    Raises
    ------
    ConflictError
        The judge is running already, or the evaluation is not ready.
    OptionError
        The API key's environment variable is not set on the server, or not
        allowed by ``boundary`` (checked again, as its host is).
    JudgeError
        The endpoint refuses every request, cannot be reached, or answered no
        request with a completion (the judge is then ``failed``, with the summary);
        its host is refused.
    """
    from rankscope.llm_judge.grading import GradeItem, JudgeConfig, grade_items
    from rankscope.services.assignment import open_tasks, require_ready, scale_of, view
    from rankscope.services.grading import GradeInput, submit_batch

    def start(session: Session) -> tuple[dict[str, Any], list[tuple[int, GradeItem]], Any, str]:
        judge = _judge_row(session, actor, judge_id)
        session.execute(select(LLMJudge.id).where(LLMJudge.id == judge.id).with_for_update())
        session.refresh(judge)
        if judge.status == "running":
            raise ConflictError(f"LLM judge #{judge_id} is running already")
        ev = evaluation_row(session, actor, judge.evaluation_id, "curator")
        require_ready(ev)
        rater = session.get(Rater, judge.rater_id)
        if rater is None:
            raise NotFoundError(f"LLM judge #{judge_id} lost its rater")
        items = []
        tasks = open_tasks(session, ev, rater)
        if retry_unrateable:
            again = set((judge.last_run or {}).get("unrateable_tasks") or [])
            tasks = [t for t in tasks if t.id in again]
        tasks = tasks[:judge.max_calls]
        for task in tasks:
            shown = view(session, ev, task, rater, None)
            items.append((task.id, GradeItem(shown.query_id, shown.doc_id, shown.query_text,
                                             _fields(shown), need=shown.need)))
        examples = _examples(session, ev, judge.few_shot, {t.id for t in tasks}) \
            if judge.few_shot else []
        settings = {"endpoint": judge.endpoint, "model": judge.model, "rater": rater.name,
                    "key_env": judge.api_key_env, "max_calls": judge.max_calls,
                    "evaluation_id": ev.id, "rater_id": rater.id, "provider": judge.provider,
                    "parse": judge.parse, "prompt": judge.prompt, "examples": examples}
        judge.status, judge.error = "running", None
        return settings, items, scale_of(ev), ev.guidelines

    try:
        settings, items, scale, guidelines = store.write(start)
    except InputError as exc:  # too few graded results for its examples: the run fails
        _set_status(store, judge_id, "failed", str(exc))
        raise
    started = utcnow()
    try:
        boundary.check_url(settings["endpoint"], "the endpoint")
        key = None
        if settings["key_env"]:
            boundary.check_env(settings["key_env"], "the API key")
            key = os.environ.get(settings["key_env"])
            if not key:
                raise OptionError(f"the environment variable {settings['key_env']} (the judge's "
                                  "API key) is not set on the server")
        config = JudgeConfig(endpoint=settings["endpoint"], model=settings["model"], api_key=key,
                             rater=settings["rater"], scale=scale, guidelines=guidelines,
                             outbound=boundary.hosts, provider=settings["provider"],
                             parse=settings["parse"], prompt=settings["prompt"])
        result = grade_items([i for _, i in items], config, cache=cache,
                             max_calls=settings["max_calls"], sleep=sleep,
                             retry_unrateable=retry_unrateable, examples=settings["examples"])
        task_of = {(i.query_id, i.doc_id): t for t, i in items}
        given = [GradeInput(task_of[(g.query_id, g.doc_id)], g.grade)
                 for g in result.grades if g.status == "graded" and g.grade is not None]
        accepted, refused = 0, 0
        # a batch holds at most MAX_BATCH grades: a run over more results sends several
        # (each written whole, each id new), never one the grading service refuses whole
        for first in range(0, len(given), BATCH):
            chunk = given[first:first + BATCH]
            answer = submit_batch(store, actor, settings["evaluation_id"],
                                  f"llm-{judge_id}-{uuid.uuid4().hex}", chunk, source="llm",
                                  as_rater=settings["rater_id"])
            accepted += int(answer["accepted"])
            refused += len(chunk) - int(answer["accepted"])
        statuses: dict[str, int] = {}
        for g in result.grades:
            statuses[g.status] = statuses.get(g.status, 0) + 1
        usage = result.usage
        failures = [g.reason for g in result.grades if g.status == "failed"]
        summary = {"items": len(items), "accepted": accepted, "refused": refused,
                   "statuses": statuses, "retry_unrateable": retry_unrateable,
                   "unrateable_tasks": [task_of[(g.query_id, g.doc_id)] for g in result.grades
                                        if g.status == "unrateable"],
                   "failure": failures[-1] if failures else None, "requests": usage.requests,
                   "cache_hits": usage.cache_hits, "retries": usage.retries,
                   "prompt_tokens": usage.prompt_tokens,
                   "completion_tokens": usage.completion_tokens,
                   "stopped": usage.stopped, "template": result.template_name,
                   "template_sha256": result.template_sha256, "model": result.model,
                   "endpoint": result.endpoint, "provider": settings["provider"],
                   "parse": settings["parse"],
                   "examples": [[i.query_id, i.doc_id, g] for i, g in settings["examples"]],
                   "started_at": started.isoformat(),
                   "finished_at": utcnow().isoformat()}
    except Exception as exc:
        message = str(exc) if isinstance(exc, RankscopeError) else \
            f"{type(exc).__name__}: {exc}"
        _set_status(store, judge_id, "failed", message)
        raise
    unusable = usage.unusable()
    if unusable:
        _set_status(store, judge_id, "failed", unusable, summary)
        raise JudgeError(unusable)
    _set_status(store, judge_id, "done", None, summary)
    return summary
