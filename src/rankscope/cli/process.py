"""Process-wide settings for the command line (never applied by the library).

Memory: an evaluation allocates and frees arrays of tens of megabytes many times.
glibc serves each from a fresh ``mmap`` and unmaps it when freed, so every
such array costs one page fault per 4 kB page, which on virtual machines is
a large part of the run time. Telling glibc to serve large blocks from its
heap and to keep freed memory lets later arrays reuse pages already mapped.
Peak memory is unchanged: memory is kept, not added.

Huge pages: numpy asks the kernel for transparent huge pages on every large
array. Where the kernel then compacts memory to find them (the default
"defrag=madvise" policy), an 80 MB array can take a quarter of a second to
appear; measured on a 2-core VM, a 10,000 x 1,000 ``trec_eval -m all_trec``
went from 2.98 s to 2.49 s (median of 7) without them. numpy's own switch
(``NUMPY_MADVISE_HUGEPAGE``) turns this off; a user's value wins.

Threads: OpenBLAS starts one thread per core when numpy is imported, and
those threads poll for work that never comes (rankscope does no linear
algebra on large matrices), taking CPU time from the threads that evaluate.
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = [
    "keep_freed_memory", "no_huge_page_requests", "prepare_process", "single_threaded_blas",
]

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


def single_threaded_blas() -> None:
    """One OpenBLAS thread, unless the user chose; effective only before numpy is imported."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if name in os.environ:
            return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


def no_huge_page_requests() -> None:
    """Keep numpy from asking for huge pages, unless the user chose (before numpy's import)."""
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def prepare_process() -> None:
    """The settings above, for a command about to run in this process."""
    single_threaded_blas()
    no_huge_page_requests()
    keep_freed_memory()
