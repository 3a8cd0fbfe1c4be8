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

Both must be set before numpy is imported, so the command line calls
:func:`prepare_process` first.
"""

from __future__ import annotations

import os

__all__ = ["no_huge_page_requests", "prepare_process", "single_threaded_blas"]


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
