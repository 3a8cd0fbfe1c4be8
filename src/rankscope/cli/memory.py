"""Process-wide memory settings for the command line (never applied by the library).

An evaluation allocates and frees arrays of tens of megabytes many times.
glibc serves each from a fresh ``mmap`` and unmaps it when freed, so every
such array costs one page fault per 4 kB page, which on virtual machines is
a large part of the run time. Telling glibc to serve large blocks from its
heap and to keep freed memory lets later arrays reuse pages already mapped.
Peak memory is unchanged: memory is kept, not added.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["keep_freed_memory"]

_M_TRIM_THRESHOLD = -1  # from glibc's malloc.h
_M_MMAP_MAX = -4


def keep_freed_memory() -> bool:
    """Ask glibc's allocator to reuse freed memory; False where that is not glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own symbols: its libc
    except (OSError, AttributeError):  # musl and others have no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # no mmap for large blocks, and never give the heap's top back to the system
    return bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, 2**31 - 1))
