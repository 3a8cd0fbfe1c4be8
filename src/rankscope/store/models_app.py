"""The judging app's tables (SQLAlchemy 2), beside the snapshots' (models.py).

::

    users ─< user_sessions          users ─< api_tokens
    users ─< memberships >─ projects
    raters (a person's, an import's, an LLM judge's) ── users (optional)
    projects ─< evaluations >─ query_sets, endpoints
    evaluations ─< evaluation_snapshots >─ snapshots
    evaluations.frozen_at: its numbers are those of the grades as of that moment
    projects ─< items (query x document, shared by every evaluation of the project)
    items ─< grades >─ raters      (superseded_by: undo and adjudication history; never deleted)
    evaluations ─< tasks >─ items  tasks ─< leases, deferrals (judge later) >─ raters
    items ─< adjudications          raters ─< grade_batches (idempotent API batches)
    evaluations ─< llm_judges ── raters (kind llm: an LLM judge is one more grader)
    evaluations ─< tries (numbered changes of the endpoint, one query or the whole set)

Only the SHA-256 of a session or API token is stored. A grade's value is
null only with a reason (the grader could not tell). The grades of an item
are reused by every evaluation of the project on the same scale, which is
what makes grading once count everywhere. A rater whose ``counts`` is false
(an LLM judge a curator keeps apart) grades without filling a slot of the
grades wanted and without entering the aggregated grades; its grades are
shown beside the others' and compared with them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from rankscope.store.base import Base, JSONType, UTCDateTime, utcnow

__all__ = [
    "EVALUATION_STATUSES",
    "FREEZE_KINDS",
    "GRADE_SOURCES",
    "JUDGE_STATUSES",
    "RATER_KINDS",
    "ROLES",
    "TASK_ORIGINS",
    "TRY_SCOPES",
    "TRY_STATUSES",
    "Adjudication",
    "ApiToken",
    "Deferral",
    "Evaluation",
    "EvaluationSnapshot",
    "Grade",
    "GradeBatch",
    "Item",
    "LLMJudge",
    "Lease",
    "Membership",
    "Rater",
    "Task",
    "Try",
    "User",
    "UserSession",
]

ROLES = ("admin", "curator", "judge")
EVALUATION_STATUSES = ("draft", "running", "ready", "failed")
FREEZE_KINDS = ("explicit", "complete")
JUDGE_STATUSES = ("idle", "running", "done", "failed")
RATER_KINDS = ("person", "import", "llm")
GRADE_SOURCES = ("app", "api", "import", "adjudication", "llm")
TASK_ORIGINS = ("snapshot", "try", "hand")
TRY_STATUSES = ("running", "done", "failed")
TRY_SCOPES = ("query", "all")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN (" + ", ".join(f"'{v}'" for v in values) + ")"


class User(Base):
    """A person who signs in: a name, an argon2 hash, a role."""

    __tablename__ = "users"
    __table_args__ = (CheckConstraint(_in("role", ROLES), name="role"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    password_hash: Mapped[str | None] = mapped_column(Text)
    role: Mapped[str] = mapped_column(String(16))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class UserSession(Base):
    """A signed-in browser: the SHA-256 of its cookie's random token, and when it ends."""

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ApiToken(Base):
    """A token for the JSON API (``Authorization: Bearer``): its SHA-256, revocable."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Membership(Base):
    """Who may see a project, and as what (a user sees only the projects they belong to)."""

    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("user_id", "project_id"),
                      CheckConstraint(_in("role", ROLES), name="role"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"),
                                            index=True)
    role: Mapped[str] = mapped_column(String(16))


class Rater(Base):
    """Whoever gives grades: a person (a user), the raters of an imported file, an LLM judge."""

    __tablename__ = "raters"
    __table_args__ = (CheckConstraint(_in("kind", RATER_KINDS), name="kind"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"),
                                                unique=True)
    counts: Mapped[bool] = mapped_column(Boolean, default=True, server_default=text("true"))
    """Whether its grades fill grades-wanted slots and enter the aggregated grades."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Evaluation(Base):
    """A query set sent to an endpoint, graded on one scale by N graders per result."""

    __tablename__ = "evaluations"
    __table_args__ = (
        CheckConstraint(_in("status", EVALUATION_STATUSES), name="status"),
        CheckConstraint("grades_wanted >= 1", name="grades_wanted"),
        CheckConstraint("depth >= 1", name="depth"),
        CheckConstraint("frozen_how IS NULL OR " + _in("frozen_how", FREEZE_KINDS),
                        name="frozen_how"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"),
                                            index=True)
    name: Mapped[str] = mapped_column(Text)
    query_set_id: Mapped[int] = mapped_column(ForeignKey("query_sets.id", ondelete="CASCADE"),
                                              index=True)
    endpoint_id: Mapped[int] = mapped_column(ForeignKey("endpoints.id", ondelete="CASCADE"),
                                             index=True)
    scale: Mapped[str] = mapped_column(Text)
    grades_wanted: Mapped[int] = mapped_column(Integer, default=1)
    strategy: Mapped[str] = mapped_column(Text)
    metrics: Mapped[list[str]] = mapped_column(JSONType)
    transforms: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict)
    null_rules: Mapped[bool] = mapped_column(Boolean, default=True)
    depth: Mapped[int] = mapped_column(Integer, default=10)
    guidelines: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(16), default="draft")
    error: Mapped[str | None] = mapped_column(Text)
    baseline_id: Mapped[int | None] = mapped_column(
        ForeignKey("evaluations.id", ondelete="SET NULL"))
    annotation: Mapped[str] = mapped_column(Text, default="")
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    frozen_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    """When its numbers were frozen: they are computed on the grades as of this moment."""
    frozen_how: Mapped[str | None] = mapped_column(String(16))
    """``explicit`` (a curator froze it) or ``complete`` (its grading was complete)."""
    frozen_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    frozen_grades: Mapped[int | None] = mapped_column(Integer)
    """The counted grades (values and can't tell) its frozen numbers rest on."""
    frozen_apart: Mapped[list[int] | None] = mapped_column(JSONType)
    """The raters whose grades did not count when it was frozen (they still do not, there)."""
    explain: Mapped[bool] = mapped_column(Boolean, default=False,
                                          server_default=text("false"))
    """Whether its snapshot records why each result is there (the engine's explanation)."""


class EvaluationSnapshot(Base):
    """Which snapshot serves an evaluation (the latest run's is the one graded)."""

    __tablename__ = "evaluation_snapshots"
    __table_args__ = (UniqueConstraint("evaluation_id", "snapshot_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    evaluation_id: Mapped[int] = mapped_column(
        ForeignKey("evaluations.id", ondelete="CASCADE"), index=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id", ondelete="CASCADE"),
                                             index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Item(Base):
    """One (query, document) of a project: what is graded, shared by its evaluations.

    ``query_key`` is the query text with white space collapsed and case folded
    (plus its template parameters, when it has some).
    """

    __tablename__ = "items"
    __table_args__ = (UniqueConstraint("project_id", "query_key", "doc_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"),
                                            index=True)
    query_key: Mapped[str] = mapped_column(Text)
    query_text: Mapped[str] = mapped_column(Text)
    doc_id: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Grade(Base):
    """One rater's grade of an item on a scale; rows are superseded, never deleted.

    ``active`` is true for the grade that counts; undo sets ``retracted_at``,
    a regrade or an adjudication sets ``superseded_by``.
    """

    __tablename__ = "grades"
    __table_args__ = (
        CheckConstraint("value IS NOT NULL OR reason IS NOT NULL", name="null_has_reason"),
        CheckConstraint(_in("source", GRADE_SOURCES), name="source"),
        Index("ix_grades_active_rater", "item_id", "rater_id", "scale", unique=True,
              sqlite_where=text("active"), postgresql_where=text("active")),
        Index("ix_grades_item_id_scale", "item_id", "scale"),
        Index("ix_grades_rater_evaluation", "rater_id", "evaluation_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"))
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id", ondelete="CASCADE"))
    scale: Mapped[str] = mapped_column(Text)
    value: Mapped[float | None] = mapped_column(Float)
    reason: Mapped[str | None] = mapped_column(Text)
    """Why there is no value ("can't tell"), when there is none."""
    explanation: Mapped[str | None] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(16), default="app")
    evaluation_id: Mapped[int | None] = mapped_column(
        ForeignKey("evaluations.id", ondelete="SET NULL"), index=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    retracted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    superseded_by: Mapped[int | None] = mapped_column(
        ForeignKey("grades.id", ondelete="SET NULL"))


class Task(Base):
    """A result to grade in an evaluation: its item, its best rank, grades wanted.

    Most come from the evaluation's snapshot; a curator adds others to a
    query's judged pool: a result of a try graded in place (``origin`` try),
    or a document found with other words (``hand``, added by hand). Those
    keep what a grader sees of them in ``shown``.

    ``grades_counted`` is kept by the database (migration 0005_grading's
    triggers), never written by rankscope: the grades that fill the task's
    slots (active, on the evaluation's scale, of a rater that counts).
    ``ix_tasks_assignment`` is the order results are handed out in.
    """

    __tablename__ = "tasks"
    __table_args__ = (UniqueConstraint("evaluation_id", "item_id"),
                      CheckConstraint("grades_wanted >= 1", name="grades_wanted"),
                      CheckConstraint(_in("origin", TASK_ORIGINS), name="origin"),
                      Index("ix_tasks_assignment", "evaluation_id", "grades_counted", "position",
                            "id", "grades_wanted"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    evaluation_id: Mapped[int] = mapped_column(
        ForeignKey("evaluations.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    query_row_id: Mapped[int] = mapped_column(ForeignKey("queries.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    grades_wanted: Mapped[int] = mapped_column(Integer)
    grades_counted: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    origin: Mapped[str] = mapped_column(String(16), default="snapshot",
                                        server_default=text("'snapshot'"))
    added_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    shown: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    """Title, snippet, URL, image, fields of a result that is not in the snapshot."""


class Lease(Base):
    """A grader holds a task until ``expires_at``; then it returns to the pool."""

    __tablename__ = "leases"
    __table_args__ = (UniqueConstraint("task_id", "rater_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id", ondelete="CASCADE"))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Deferral(Base):
    """A grader said "judge later": the task comes back to them after the others."""

    __tablename__ = "deferrals"
    __table_args__ = (UniqueConstraint("task_id", "rater_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Adjudication(Base):
    """A curator settled a disagreement: the grade that now stands for the item."""

    __tablename__ = "adjudications"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("items.id", ondelete="CASCADE"), index=True)
    evaluation_id: Mapped[int | None] = mapped_column(
        ForeignKey("evaluations.id", ondelete="SET NULL"))
    curator_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    grade_id: Mapped[int] = mapped_column(ForeignKey("grades.id", ondelete="CASCADE"))
    scale: Mapped[str] = mapped_column(Text)
    value: Mapped[float] = mapped_column(Float)
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class GradeBatch(Base):
    """An API batch of grades, by the client's id: a retried batch gets the first answer."""

    __tablename__ = "grade_batches"
    __table_args__ = (UniqueConstraint("rater_id", "batch_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id", ondelete="CASCADE"))
    batch_key: Mapped[str] = mapped_column(Text)
    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluations.id", ondelete="CASCADE"))
    response: Mapped[dict[str, Any]] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LLMJudge(Base):
    """An LLM judge a curator attached to an evaluation: where to ask, which model, a budget.

    The API key is never stored: ``api_key_env`` names the environment
    variable of the server that holds it. Its grades are given under its own
    rater (kind ``llm``); ``last_run`` keeps what the latest run did.
    """

    __tablename__ = "llm_judges"
    __table_args__ = (CheckConstraint(_in("status", JUDGE_STATUSES), name="status"),
                      CheckConstraint("max_calls >= 1", name="max_calls"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    evaluation_id: Mapped[int] = mapped_column(
        ForeignKey("evaluations.id", ondelete="CASCADE"), index=True)
    rater_id: Mapped[int] = mapped_column(ForeignKey("raters.id", ondelete="CASCADE"))
    endpoint: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(Text)
    api_key_env: Mapped[str | None] = mapped_column(Text)
    max_calls: Mapped[int] = mapped_column(Integer)
    provider: Mapped[str] = mapped_column(String(64), default="openai",
                                          server_default=text("'openai'"))
    parse: Mapped[str] = mapped_column(String(16), default="strict",
                                       server_default=text("'strict'"))
    prompt: Mapped[str | None] = mapped_column(String(64))
    few_shot: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    """Graded results of the evaluation shown to the model as examples (0: none)."""
    status: Mapped[str] = mapped_column(String(16), default="idle")
    error: Mapped[str | None] = mapped_column(Text)
    last_run: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Try(Base):
    """A curator's change of an evaluation's endpoint, run on one query or the whole set.

    Numbered per evaluation and kept with its ``changes`` (dotted key, value)
    and the whole configuration they made; the endpoint itself is never
    changed. One query's answer is kept in ``results``; a whole set's is a
    snapshot of the store, which can become an evaluation.
    """

    __tablename__ = "tries"
    __table_args__ = (UniqueConstraint("evaluation_id", "number"),
                      CheckConstraint(_in("status", TRY_STATUSES), name="status"),
                      CheckConstraint(_in("scope", TRY_SCOPES), name="scope"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    evaluation_id: Mapped[int] = mapped_column(
        ForeignKey("evaluations.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    changes: Mapped[list[Any]] = mapped_column(JSONType)
    """``[[dotted key, value], ...]`` as the curator gave them."""
    config: Mapped[dict[str, Any]] = mapped_column(JSONType)
    config_hash: Mapped[str] = mapped_column(String(64))
    scope: Mapped[str] = mapped_column(String(16))
    query_row_id: Mapped[int | None] = mapped_column(
        ForeignKey("queries.id", ondelete="CASCADE"))
    snapshot_id: Mapped[int | None] = mapped_column(
        ForeignKey("snapshots.id", ondelete="SET NULL"))
    results: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    """One query's answer: ``request``, ``latency_ms``, ``total_hits`` and its ``hits``."""
    status: Mapped[str] = mapped_column(String(16), default="running")
    error: Mapped[str | None] = mapped_column(Text)
    made_evaluation_id: Mapped[int | None] = mapped_column(
        ForeignKey("evaluations.id", ondelete="SET NULL"))
    """The evaluation this try became (a whole set's try, in one click)."""
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
