"""``--ci {auto,always,never}``: whether a command prints the bootstrap interval of each mean.

The interval's cost grows as resamples x queries (about 1 s at 10,000 queries,
10 s at 100,000), so by default (``auto``) it is computed only up to
:data:`rankscope.result.AUTO_INTERVAL_QUERIES` queries per metric. Above that
the interval columns stay, shown as '-' (null in JSON, with the reason), and
one line on stderr says so.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankscope.result import EvaluationResult

__all__ = ["add_interval_option", "say_skipped_intervals"]


def add_interval_option(p: Any) -> None:
    """Add ``--ci`` (default ``auto``)."""
    from rankscope.result import AUTO_INTERVAL_QUERIES, INTERVAL_CHOICES

    p.add_argument("--ci", choices=INTERVAL_CHOICES, default="auto",
                   help=f"95%% bootstrap interval of each mean: auto (default) computes it up to "
                        f"{AUTO_INTERVAL_QUERIES:,} queries per metric and above that shows '-' "
                        f"and says so on stderr (it would take about 1 s per 10,000 queries); "
                        f"always; never")


def say_skipped_intervals(command: str, results: list[tuple[str, EvaluationResult]]) -> None:
    """One stderr line per run whose intervals ``auto`` left out (none under ``never``)."""
    for name, result in results:
        if result.show_interval != "auto":
            continue  # never: the user asked, nothing to explain
        reason = result.interval_skipped()
        if reason is None:
            continue
        run = f"run {name!r}: " if len(results) > 1 else ""
        sys.stderr.write(f"rankscope {command}: {run}{reason}: --ci always to compute them\n")
