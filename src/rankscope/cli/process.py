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

Memory polars frees: polars allocates with its own jemalloc, built to keep
freed pages 0.5 s ("dirty") and then to mark them free for the kernel to take
when it needs them ("muzzy", ``MADV_FREE``) for another second. Both still
count as the process's resident memory, and reading ten million lines frees
hundreds of megabytes of polars' temporaries shortly before the ranking's
peak: on 10,000 x 1,000 ``trec_eval -m all_trec`` runs the peak was
840-1,050 MB with polars' defaults and 770-815 MB with freed pages handed
back after 0.2 s, the CPU time the same; handing them back at once cost
0.1-0.3 s of system time more (:data:`POLARS_FREED_MEMORY`, set from the
same input size as glibc's settings; a user's ``_RJEM_MALLOC_CONF`` wins).

The environment settings must be made before numpy and polars are imported,
and the allocator's before any thread allocates, so the command line calls
:func:`prepare_process` first.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["LARGE_INPUT_BYTES", "POLARS_FREED_MEMORY", "input_bytes", "keep_freed_memory",
           "no_huge_page_requests", "polars_hands_back_freed_memory", "prepare_process",
           "single_threaded_blas"]

LARGE_INPUT_BYTES = 16 << 20
"""Input size (bytes of the files named) from which freed memory is kept for reuse."""

POLARS_FREED_MEMORY = "dirty_decay_ms:200,muzzy_decay_ms:0"
"""polars' jemalloc settings for large inputs: freed pages handed back to the kernel
after 0.2 s, none kept marked "free when needed" (still counted as resident)."""

_POLARS_ALLOCATOR_CONF = "_RJEM_MALLOC_CONF"
"""The variable polars' jemalloc reads its settings from (its symbols' prefix)."""

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
    from rankscope.c_heap import glibc

    libc = glibc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    # the arena count first: threads that allocated before keep theirs
    return bool(mallopt(_M_ARENA_MAX, 1) and mallopt(_M_MMAP_MAX, 0)
                and mallopt(_M_TRIM_THRESHOLD, 1 << 30))


def polars_hands_back_freed_memory() -> bool:
    """Set :data:`POLARS_FREED_MEMORY` for polars' allocator, unless the user chose.

    Effective only before polars is imported (its allocator reads the variable
    once); returns whether it was set.
    """
    if _POLARS_ALLOCATOR_CONF in os.environ or "polars" in sys.modules:
        return False
    os.environ[_POLARS_ALLOCATOR_CONF] = POLARS_FREED_MEMORY
    return True


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
        polars_hands_back_freed_memory()
        keep_freed_memory()
