"""The LLM answer cache's table (``llm_answers``), owned by the store's migrations.

An answer is kept under its key (the SHA-256 :func:`rankscope.llm_judge.cache.cache_key`
makes): the model, the answer's text, its token counts, when it was stored, why it
ended (``finish_reason``) and the reasoning returned apart. The table is built by
migration ``0006_platform_llm_cache``, which also takes in the rows of a cache file
made before the cache was part of the store (its own ``answers`` table, created by
``sqlite3``): such a file opened for writing becomes a store with the same answers.
Opened for reading only (a dry run), a file is read as it is, either form, and not
changed (:func:`read_only_rows`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Float, Integer, String, Text, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from rankscope.store.base import Base

__all__ = ["ANSWER_COLUMNS", "LlmAnswer", "count_answers", "get_answer", "put_answer",
           "read_only_rows"]

ANSWER_COLUMNS = ("answer", "prompt_tokens", "completion_tokens", "finish_reason", "reasoning")
"""What :func:`get_answer` returns, in this order."""

LEGACY_TABLE = "answers"
"""The table of a cache file made before the cache was part of the store."""


class LlmAnswer(Base):
    """One cached answer of an LLM endpoint."""

    __tablename__ = "llm_answers"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    model: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer)
    completion_tokens: Mapped[int | None] = mapped_column(Integer)
    created: Mapped[float] = mapped_column(Float)
    finish_reason: Mapped[str | None] = mapped_column(Text)
    reasoning: Mapped[str | None] = mapped_column(Text)


def get_answer(session: Session, key: str) -> tuple[Any, ...] | None:
    """The answer stored under ``key`` (:data:`ANSWER_COLUMNS`), or None."""
    row = session.execute(select(*(getattr(LlmAnswer, c) for c in ANSWER_COLUMNS))
                          .where(LlmAnswer.key == key)).first()
    return None if row is None else tuple(row)


def put_answer(session: Session, key: str, model: str, values: dict[str, Any],
               created: float) -> None:
    """Store an answer under ``key``, replacing any."""
    session.merge(LlmAnswer(key=key, model=model, created=created, **values))


def count_answers(session: Session) -> int:
    """How many answers are stored."""
    return int(session.scalar(select(func.count()).select_from(LlmAnswer)) or 0)


@contextmanager
def read_only_rows(path: str | os.PathLike[str]) -> Iterator[sqlite3.Connection]:
    """An SQLite file opened for reading only, with a view ``cached`` of its answers.

    The view reads ``llm_answers`` (a store) or the ``answers`` table of an older
    cache file (its two later columns as NULL when it lacks them); nothing on disk
    changes (the view is temporary).

    Raises
    ------
    sqlite3.Error
        The file is not SQLite, or holds no answer table.
    """
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, timeout=30.0,
                                 check_same_thread=False)) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        table = LlmAnswer.__tablename__ if LlmAnswer.__tablename__ in tables else LEGACY_TABLE
        if table not in tables:
            if "alembic_version" not in tables:
                raise sqlite3.DatabaseError("no answers table")
            db.execute("CREATE TEMP VIEW cached AS SELECT '' AS key, '' AS answer, "
                       "NULL AS prompt_tokens, NULL AS completion_tokens, "
                       "NULL AS finish_reason, NULL AS reasoning WHERE 0")
        else:
            have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
            picked = ", ".join(c if c in have else f"NULL AS {c}" for c in ANSWER_COLUMNS)
            db.execute(f"CREATE TEMP VIEW cached AS SELECT key, {picked} FROM {table}")
        yield db
