"""Process-wide settings for the command line (never applied by the library).

Huge pages: numpy asks the kernel for transparent huge pages on every large
array. Where the kernel then compacts memory to find them (the default
"defrag=madvise" policy), an 80 MB array can take a quarter of a second to
appear; measured on a 2-core VM, a 10,000 x 1,000 ``trec_eval -m all_trec``
went from 2.98 s to 2.49 s (median of 7) without them. numpy's own switch
(``NUMPY_MADVISE_HUGEPAGE``) turns this off; a user's value wins.

Threads: OpenBLAS starts one thread per core when numpy is imported, and
those threads poll for work that never comes (rankscope does no linear
algebra on large matrices), taking CPU time from the threads that evaluate.

Freed memory: glibc hands each large block (from 128 kB up) back to the
kernel when it is freed, and gives each thread an arena of its own; the next
array of that size then costs a page fault per 4 kB page again. Evaluating
ten million lines allocates and frees gigabytes of temporaries this way: on a
100,000 x 100 ``trec_eval -m all_trec`` (2-core VM) half of the CPU time was
the kernel's (4.3 s system against 8.5 s user, 2.1 million page faults). With
one arena that keeps what is freed for reuse, the same run took 2.1 s system
time, 0.9 million faults, 22 % less wall time and a lower peak. The setting
only pays on large inputs (importing ``ctypes`` alone costs 2 ms), so it is
made when the files named on the command line add up to
:data:`LARGE_INPUT_BYTES`, and only where the C library is glibc.

Both environment settings must be made before numpy is imported, and the
allocator's before any thread allocates, so the command line calls
:func:`prepare_process` first.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

__all__ = ["LARGE_INPUT_BYTES", "input_bytes", "keep_freed_memory", "no_huge_page_requests",
           "prepare_process", "single_threaded_blas"]

LARGE_INPUT_BYTES = 16 << 20
"""Input size (bytes of the files named) from which freed memory is kept for reuse."""

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_M_ARENA_MAX = -8


def single_threaded_blas() -> None:
    """One OpenBLAS thread, unless the user chose; effective only before numpy is imported."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if name in os.environ:
            return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


def no_huge_page_requests() -> None:
    """Keep numpy from asking for huge pages, unless the user chose (before numpy's import)."""
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def keep_freed_memory() -> bool:
    """glibc only: one arena, large blocks from it, freed memory kept for reuse.

    Returns whether the C library took the settings.
    """
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
    except (ValueError, OSError):  # not glibc: no such name
        return False
    import ctypes

    mallopt = ctypes.CDLL(None).mallopt
    # the arena count first: threads that allocated before keep theirs
    return bool(mallopt(_M_ARENA_MAX, 1) and mallopt(_M_MMAP_MAX, 0)
                and mallopt(_M_TRIM_THRESHOLD, 1 << 30))


def input_bytes(argv: Sequence[str]) -> int:
    """The total size of the regular files among ``argv`` (other words count 0)."""
    total = 0
    for word in argv:
        if word.startswith("-"):
            continue
        try:
            st = os.stat(word)
        except (OSError, ValueError):  # not a path, or not there
            continue
        if st.st_mode & 0o170000 == 0o100000:  # a regular file (a FIFO is read once)
            total += st.st_size
    return total


def prepare_process(argv: Sequence[str] = ()) -> None:
    """The settings above, for a command about to run in this process on ``argv``."""
    single_threaded_blas()
    no_huge_page_requests()
    if input_bytes(argv) >= LARGE_INPUT_BYTES:
        keep_freed_memory()
