"""The answer cache: never pay twice for the same question.

An answer is stored under the SHA-256 of the canonical JSON (sorted keys, no
spaces, UTF-8) of *everything that determines it*: the endpoint's identity
(its URL, normalised), the model, the full list of messages, the temperature
and every other decoding setting sent, and the sample number when one
question is asked several times. Changing any of them (another model, one
character of the prompt, a temperature of 0.1) is another key, so two models
can never share an answer. The answer's text and token counts are kept in
SQLite (stdlib ``sqlite3``), so a second run of the same command costs
nothing and the usage report can still say what the answers cost.
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
    created REAL NOT NULL
)
"""


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
) -> str:
    """SHA-256 (hex) of the canonical JSON of everything that determines an answer."""
    payload = {
        "endpoint": endpoint_identity(endpoint),
        "model": model,
        "messages": [dict(m) for m in messages],
        "settings": dict(settings),
        "sample": sample,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedAnswer:
    """An answer and what it cost (token counts as the endpoint reported them)."""

    answer: str
    prompt_tokens: int | None
    completion_tokens: int | None


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

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            if self.path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.Error as exc:
            raise JudgeError(f"{self.path}: cannot use this file as the answer cache ({exc})") \
                from None

    def get(self, key: str) -> CachedAnswer | None:
        """The stored answer, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT answer, prompt_tokens, completion_tokens FROM answers WHERE key = ?",
                (key,),
            ).fetchone()
        return None if row is None else CachedAnswer(row[0], row[1], row[2])

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        with self._lock:
            return self._db.execute(
                "SELECT 1 FROM answers WHERE key = ?", (key,)
            ).fetchone() is not None

    def put(self, key: str, model: str, answer: CachedAnswer) -> None:
        """Store an answer (committed at once, so an interrupted run keeps it)."""
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?)",
                    (key, model, answer.answer, answer.prompt_tokens,
                     answer.completion_tokens, time.time()),
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
