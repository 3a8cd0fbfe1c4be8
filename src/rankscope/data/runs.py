"""Several runs as one input: loading them and giving each a unique name."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rankscope.data.tables import OnDuplicate, Run, as_run
from rankscope.errors import OptionError

__all__ = ["load_runs", "name_candidates", "unique_names"]


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
