"""The answer cache: never pay twice for the same question.

An answer is stored under the SHA-256 of the canonical JSON (sorted keys, no
spaces, UTF-8) of *everything that determines it*: the endpoint's identity
(its URL, normalised), the model, the full list of messages, the temperature
and every other decoding setting sent, and the sample number when one
question is asked several times. Changing any of them (another model, one
character of the prompt, a temperature of 0.1) is another key, so two models
can never share an answer. The answer's text, token counts, why it ended
(``finish_reason``: a cut-off answer stays cut off when read back) and the
reasoning the endpoint returned apart are kept in SQLite (stdlib
``sqlite3``), so a second run of the same command costs nothing and the
usage report can still say what the answers cost.

The file's table is created here (and the two later columns added to a file
made by an earlier version) rather than by the store's alembic migrations:
the ``judge`` extra does not need SQLAlchemy. A read-only cache
(:meth:`AnswerCache.open_read_only`, what a dry run uses) changes nothing on
disk and creates no file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rankscope.errors import JudgeError

__all__ = ["AnswerCache", "CachedAnswer", "cache_key", "endpoint_identity"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    answer TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created REAL NOT NULL,
    finish_reason TEXT,
    reasoning TEXT
)
"""
_LATER_COLUMNS = (("finish_reason", "TEXT"), ("reasoning", "TEXT"))
"""Columns added after the first version: added to an older file when it is opened."""


def endpoint_identity(url: str) -> str:
    """The URL that identifies an endpoint: the chat-completions URL it is sent to, with
    scheme and host lower-cased (``http://H/v1`` and ``http://h/v1/chat/completions``
    are one endpoint).

    Examples
    --------
    >>> endpoint_identity("HTTP://Localhost:8080/v1/")
    'http://localhost:8080/v1/chat/completions'
    """
    from urllib.parse import urlsplit, urlunsplit

    from rankscope.judge.client import chat_url

    parts = urlsplit(chat_url(url))
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def cache_key(
    endpoint: str,
    model: str,
    messages: Sequence[Mapping[str, str]],
    settings: Mapping[str, Any],
    sample: int = 0,
    examples: Sequence[Sequence[Any]] | None = None,
) -> str:
    """SHA-256 (hex) of the canonical JSON of everything that determines an answer.

    ``examples`` (few-shot: ``[query_id, doc_id, grade]`` each) are part of the
    messages already; they are named in the key as well when there are any.
    """
    payload: dict[str, Any] = {
        "endpoint": endpoint_identity(endpoint),
        "model": model,
        "messages": [dict(m) for m in messages],
        "settings": dict(settings),
        "sample": sample,
    }
    if examples:
        payload["examples"] = [list(e) for e in examples]
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedAnswer:
    """An answer, what it cost (token counts as the endpoint reported them), why it
    ended (``finish_reason``) and the reasoning returned apart from it."""

    answer: str
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None = None
    reasoning: str | None = None


class AnswerCache:
    """Answers by :func:`cache_key`, in an SQLite file (``":memory:"`` for none on disk).

    One object may be shared by threads (a web app's workers; a call from inside
    a running event loop runs in a thread of its own): every use takes a lock.
    Several processes may share the file (WAL journal, a busy timeout).

    Raises
    ------
    JudgeError
        The file is not an SQLite database or cannot be opened.
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.path = os.fspath(path)
        self.read_only = read_only
        self._lock = threading.Lock()
        try:
            if read_only:
                from pathlib import Path

                uri = Path(self.path).resolve().as_uri() + "?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, timeout=30.0,
                                           check_same_thread=False)
            else:
                self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
                if self.path != ":memory:":
                    self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(_SCHEMA)
            have = {row[1] for row in self._db.execute("PRAGMA table_info(answers)")}
            if not have:
                raise sqlite3.DatabaseError("no answers table")
            for name, kind in _LATER_COLUMNS:
                if name not in have and not read_only:
                    self._db.execute(f"ALTER TABLE answers ADD COLUMN {name} {kind}")
                    have.add(name)
            self._db.commit()
        except sqlite3.Error as exc:
            raise JudgeError(f"{self.path}: cannot use this file as the answer cache ({exc})") \
                from None
        later = ", ".join(n if n in have else "NULL" for n, _ in _LATER_COLUMNS)
        self._select = ("SELECT answer, prompt_tokens, completion_tokens, " + later
                        + " FROM answers WHERE key = ?")

    @classmethod
    def open_read_only(cls, path: str | os.PathLike[str]) -> AnswerCache | None:
        """The cache at ``path`` opened for reading only; None when there is no such file.

        Raises
        ------
        JudgeError
            The file is not an answer cache.
        """
        if not os.path.exists(path):
            return None
        return cls(path, read_only=True)

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer, or None."""
        with self._lock:
            row = self._db.execute(self._select, (key,)).fetchone()
        return None if row is None else CachedAnswer(*row)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        with self._lock:
            return self._db.execute(
                "SELECT 1 FROM answers WHERE key = ?", (key,)
            ).fetchone() is not None

    def put(self, key: str, model: str, answer: CachedAnswer) -> None:
        """Store an answer, replacing any under the same key (committed at once, so an
        interrupted run keeps it)."""
        if self.read_only:
            raise JudgeError(f"{self.path}: the answer cache is open for reading only")
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO answers (key, model, answer, prompt_tokens, "
                    "completion_tokens, created, finish_reason, reasoning) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (key, model, answer.answer, answer.prompt_tokens,
                     answer.completion_tokens, time.time(), answer.finish_reason,
                     answer.reasoning),
                )
                self._db.commit()
        except sqlite3.Error as exc:
            raise JudgeError(f"{self.path}: cannot write to the answer cache ({exc})") from None

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
