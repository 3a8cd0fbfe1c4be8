"""Several runs as one input: loading, unique names, per-query values aligned by query."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rankscope.data.tables import OnDuplicate, Run, as_run
from rankscope.errors import OptionError
from rankscope.result import EvaluationResult

__all__ = ["align", "load_runs", "name_candidates", "unique_names"]

FloatArray = npt.NDArray[np.float64]


def name_candidates(run: Run) -> list[str]:
    """Names to try, best first: the run tag, the file's name, its whole path."""
    out = [run.name]
    if not run.source.startswith("<"):
        out += [os.path.basename(run.source), run.source]
    return out


def unique_names(candidates: Sequence[Sequence[str]]) -> list[str]:
    """Pick one name per run: the first candidate unless it collides.

    A run whose name collides moves on to its next candidate (the file name
    after the tag, then the path); names still shared at the end get
    ``#1``, ``#2``... in input order.
    """
    chosen = [c[0] for c in candidates]
    level = [0] * len(candidates)
    while True:
        counts = Counter(chosen)
        moved = False
        for i, name in enumerate(chosen):
            if counts[name] > 1 and level[i] + 1 < len(candidates[i]):
                level[i] += 1
                chosen[i] = candidates[i][level[i]]
                moved = True
        if not moved:
            break
    counts = Counter(chosen)
    seen: Counter[str] = Counter()
    for i, name in enumerate(chosen):
        if counts[name] > 1:
            seen[name] += 1
            chosen[i] = f"{name}#{seen[name]}"
    return chosen


def load_runs(
    runs: Any,
    *,
    names: Sequence[str] | None = None,
    on_duplicate: OnDuplicate = "error",
) -> tuple[list[Run], list[str]]:
    """Turn the user's runs into tables and give each a unique name.

    Parameters
    ----------
    runs : sequence or mapping
        Runs (:class:`~rankscope.Run`, paths, DataFrames, dicts), or a mapping
        name -> run.
    names : sequence of str, optional
        Names overriding everything else, one per run.
    on_duplicate : {"error", "first", "max"}
        A document twice in one ranking, for runs read here.

    Returns
    -------
    runs, names
    """
    if isinstance(runs, Mapping):
        keyed = [str(k) for k in runs]
        tables = [as_run(v, name=k, on_duplicate=on_duplicate) for k, v in runs.items()]
    elif isinstance(runs, str | os.PathLike | Run) or not isinstance(runs, Iterable):
        raise OptionError("runs must be a list of runs (or a mapping name -> run)")
    else:
        keyed = []
        tables = [as_run(r, on_duplicate=on_duplicate) for r in list(runs)]
    if names is not None:
        chosen = [str(n) for n in names]
        if len(chosen) != len(tables):
            raise OptionError(f"{len(chosen)} names given for {len(tables)} runs")
        dup = sorted(n for n, c in Counter(chosen).items() if c > 1)
        if dup:
            raise OptionError(f"run names must be unique; repeated: {', '.join(dup)}")
    elif keyed:
        chosen = keyed
    else:
        chosen = unique_names([name_candidates(t) for t in tables])
    return tables, chosen


def align(results: Sequence[EvaluationResult]) -> tuple[list[str], FloatArray]:
    """Per-query values of several evaluations on one query axis.

    Returns the union of the evaluated queries (byte order) and an array of
    shape (n_runs, n_queries, n_metrics), NaN where a run has no value.
    """
    query_ids = sorted(set().union(*(r.query_ids for r in results)))
    index = {q: i for i, q in enumerate(query_ids)}
    n_metrics = len(results[0].labels) if results else 0
    out = np.full((len(results), len(query_ids), n_metrics), np.nan)
    for r, result in enumerate(results):
        rows = np.fromiter((index[q] for q in result.query_ids), dtype=np.int64,
                           count=len(result.query_ids))
        out[r, rows, :] = result.values
    return query_ids, out
