"""The answer cache: never pay twice for the same question.

An answer is stored under the SHA-256 of the canonical JSON (sorted keys, no
spaces, UTF-8) of *everything that determines it*: the endpoint's identity
(its URL, normalised), the model, the full list of messages, the temperature
and every other decoding setting sent, and the sample number when one
question is asked several times. Changing any of them (another model, one
character of the prompt, a temperature of 0.1) is another key, so two models
can never share an answer. The answer's text, token counts, why it ended
(``finish_reason``: a cut-off answer stays cut off when read back) and the
reasoning the endpoint returned apart are kept, so a second run of the same
command costs nothing and the usage report can still say what the answers cost.

The cache is a store (:mod:`rankscope.store`): its table, ``llm_answers``
(:mod:`rankscope.store.llm_cache`), is built by the store's alembic migrations
like every other, so the ``judge`` extra brings the store's (SQLAlchemy,
alembic). A cache file made by an earlier version (its own ``answers``
table) is migrated in place, its answers kept, the first time it is opened
for writing. A read-only cache (:meth:`AnswerCache.open_read_only`, what a
dry run uses) reads either form as it is, changes nothing on disk and
creates no file.
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

from rankscope.errors import JudgeError, StoreError

__all__ = ["AnswerCache", "CachedAnswer", "cache_key", "endpoint_identity"]

def endpoint_identity(url: str, provider: str = "openai") -> str:
    """The URL that identifies an endpoint: the URL its requests are sent to (the
    provider's: ``.../chat/completions``, Ollama's ``.../api/chat``), with scheme and host
    lower-cased (``http://H/v1`` and ``http://h/v1/chat/completions`` are one endpoint).

    Examples
    --------
    >>> endpoint_identity("HTTP://Localhost:8080/v1/")
    'http://localhost:8080/v1/chat/completions'
    """
    from urllib.parse import urlsplit, urlunsplit

    from rankscope.llm_judge.client import chat_url

    parts = urlsplit(chat_url(url, provider))
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def cache_key(
    endpoint: str,
    model: str,
    messages: Sequence[Mapping[str, str]],
    settings: Mapping[str, Any],
    sample: int = 0,
    examples: Sequence[Sequence[Any]] | None = None,
    provider: str = "openai",
) -> str:
    """SHA-256 (hex) of the canonical JSON of everything that determines an answer.

    ``examples`` (few-shot: ``[query_id, doc_id, grade]`` each) are part of the
    messages already; they are named in the key as well when there are any.
    """
    payload: dict[str, Any] = {
        "endpoint": endpoint_identity(endpoint, provider),
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
    """Answers by :func:`cache_key`, in a store's ``llm_answers`` table (an SQLite file).

    One object may be shared by threads (a web app's workers; a call from inside
    a running event loop runs in a thread of its own): every use takes a lock.
    Several processes may share the file (the store's SQLite settings).

    Raises
    ------
    JudgeError
        The file is not an SQLite database or cannot be opened.
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.path = os.fspath(path)
        self.read_only = read_only
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._store: Any = None
        try:
            if read_only:
                from rankscope.store.llm_cache import read_only_rows

                self._reader = read_only_rows(self.path)
                self._db = self._reader.__enter__()
            else:
                from rankscope.store.db import open_store

                self._store = open_store(self.path)
        except (sqlite3.Error, StoreError) as exc:
            raise JudgeError(f"{self.path}: cannot use this file as the answer cache ({exc})") \
                from None

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
            if self._db is not None:
                row = self._db.execute(
                    "SELECT answer, prompt_tokens, completion_tokens, finish_reason, "
                    "reasoning FROM cached WHERE key = ?", (key,)).fetchone()
            else:
                from rankscope.store.llm_cache import get_answer

                with self._store.read() as session:
                    row = get_answer(session, key)
        return None if row is None else CachedAnswer(*row)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def put(self, key: str, model: str, answer: CachedAnswer) -> None:
        """Store an answer, replacing any under the same key (committed at once, so an
        interrupted run keeps it)."""
        if self.read_only:
            raise JudgeError(f"{self.path}: the answer cache is open for reading only")
        from sqlalchemy.exc import SQLAlchemyError

        from rankscope.store.llm_cache import put_answer

        values = {"answer": answer.answer, "prompt_tokens": answer.prompt_tokens,
                  "completion_tokens": answer.completion_tokens,
                  "finish_reason": answer.finish_reason, "reasoning": answer.reasoning}
        try:
            with self._lock:
                self._store.write(lambda session: put_answer(session, key, model, values,
                                                             time.time()))
        except SQLAlchemyError as exc:
            raise JudgeError(f"{self.path}: cannot write to the answer cache "
                             f"({str(getattr(exc, 'orig', exc)).splitlines()[0]})") from None

    def __len__(self) -> int:
        with self._lock:
            if self._db is not None:
                return int(self._db.execute("SELECT COUNT(*) FROM cached").fetchone()[0])
            from rankscope.store.llm_cache import count_answers

            with self._store.read() as session:
                return count_answers(session)

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            if self._db is not None:
                self._reader.__exit__(None, None, None)
                self._db = None
            if self._store is not None:
                self._store.close()
                self._store = None

    def __enter__(self) -> AnswerCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
