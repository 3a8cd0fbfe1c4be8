"""The C library's heap: glibc's allocator, reached once, for the settings and the hand-back.

numpy allocates from the C library's heap; polars from its own jemalloc.
The command line tunes glibc's heap for large inputs
(:func:`rankscope.cli.process.keep_freed_memory`) and the ranking hands its
free pages back before a large copy in polars' memory
(:func:`hand_back_free_pages`). Both go through :func:`glibc`, which is None
where the C library is not glibc (nothing is tuned there).
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

__all__ = ["glibc", "hand_back_free_pages"]


@cache
def glibc() -> Any | None:
    """The running glibc (``ctypes.CDLL(None)``), or None when the C library is another."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None
    except (ValueError, OSError):  # not glibc: no such name
        return None
    import ctypes  # 2 ms to import: only where glibc is asked for

    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def hand_back_free_pages() -> None:
    """Hand the heap's free whole pages back to the system (glibc's ``malloc_trim(0)``;
    nothing elsewhere).

    The command line keeps freed memory in glibc's heap for reuse; numpy's
    arrays reuse it, polars' allocator cannot. Called before a large copy in
    polars' memory, it keeps the two from adding up: the pages numpy needs
    again are faulted in again.
    """
    libc = glibc()
    trim = getattr(libc, "malloc_trim", None) if libc is not None else None
    if trim is not None:
        trim(0)
