"""Threads kept for the work a call hands off beside its own (one pool a process).

The engine ranks a run while a thread matches its judgments, checks its
duplicates on another, and ``compare`` works out its intervals on two more.
Each of these started threads of its own, per run: ``Thread.start`` waits
until the new thread runs, so the calling thread (the critical path of a
many-run command) waited for the scheduler each time, up to a time slice
when both cores are busy (the real-time round robin's is 100 ms). Here the
threads are started once and reused: a task goes to an idle thread, a new one
is started only when none is idle, so a task never waits behind another (a
task may hand off work and wait for it). Idle threads wait on a queue and cost
nothing; a forked child starts afresh.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["submit"]

_T = TypeVar("_T")

_MAX_WORKERS = 256
"""More than can ever be busy at once (a few a run: never reached, so never queued)."""

_pool: ThreadPoolExecutor | None = None


def submit(fn: Callable[..., _T], /, *args: Any) -> Future[_T]:
    """``fn(*args)`` on a thread of the process's pool: an idle one, else a new one."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(_MAX_WORKERS, thread_name_prefix="rankscope-worker")
    return _pool.submit(fn, *args)


def _forget() -> None:
    # a forked child has none of the parent's threads: its pool would count them idle
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)
