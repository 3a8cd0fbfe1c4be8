"""Several runs as one input: loading them and giving each a unique name."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rankscope.data.read_ahead import ReadAhead
from rankscope.data.tables import OnDuplicate, Run, as_run
from rankscope.errors import OptionError

__all__ = ["RunInputs", "load_runs", "name_candidates", "unique_names"]


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


class RunInputs:
    """Runs as the user gives them, read one at a time when they are files.

    Runs already in memory (:class:`~rankscope.Run`, DataFrames, dicts) are
    made tables at once; a path is read when :meth:`tables` reaches it, the
    next one on a thread meanwhile (:class:`~rankscope.data.read_ahead.ReadAhead`),
    so a command over many run files holds two of them at a time, not all.
    A run's name may be its run tag, known once its file is read: the names
    come from :meth:`names` afterwards, unless given (``names``, or the keys
    of a mapping: :attr:`known_names`).

    Parameters
    ----------
    runs : sequence or mapping
        Runs (:class:`~rankscope.Run`, paths, DataFrames, dicts), or a mapping
        name -> run.
    names : sequence of str, optional
        Names overriding everything else, one per run.
    on_duplicate : {"error", "first", "max"}
        A document twice in one ranking, for runs read here.
    run_format : str, optional
        Format of the runs given as paths (default: from their names).
    defer_duplicates : bool, default False
        Leave the check for a document ranked twice (``on_duplicate="error"``)
        to the ranking step, which runs it beside the measures and raises the
        reader's error: only for runs that are evaluated before anything else
        reads them.

    Notes
    -----
    :meth:`start` begins reading the first file at once, so that work done
    before the runs are needed (reading the qrels, say) overlaps it; close
    the inputs (:meth:`close`, or a ``with`` block) when they may end up
    not being iterated.
    """

    def __init__(self, runs: Any, *, names: Sequence[str] | None = None,
                 on_duplicate: OnDuplicate = "error", run_format: str | None = None,
                 defer_duplicates: bool = False) -> None:
        self._on_duplicate: OnDuplicate = on_duplicate
        self._format = run_format
        self._defer = defer_duplicates
        keyed: list[str] = []
        given: list[tuple[Any, str | None]]
        if isinstance(runs, Mapping):
            keyed = [str(k) for k in runs]
            given = [(v, k) for k, v in runs.items()]
        elif isinstance(runs, str | os.PathLike | Run) or not isinstance(runs, Iterable):
            raise OptionError("runs must be a list of runs (or a mapping name -> run)")
        else:
            given = [(r, None) for r in list(runs)]
        self._items = given
        self.known_names: list[str] | None = None
        """The runs' names when known before reading them (given, or a mapping's keys)."""
        if names is not None:
            chosen = [str(n) for n in names]
            if len(chosen) != len(given):
                raise OptionError(f"{len(chosen)} names given for {len(given)} runs")
            dup = sorted(n for n, c in Counter(chosen).items() if c > 1)
            if dup:
                raise OptionError(f"run names must be unique; repeated: {', '.join(dup)}")
            self.known_names = chosen
        elif keyed:
            self.known_names = keyed
        self._started: ReadAhead[tuple[Any, str | None], Run] | None = None

    def __len__(self) -> int:
        return len(self._items)

    def start(self) -> RunInputs:
        """Begin reading the first file now (returns the inputs)."""
        if self._started is None:
            self._started = ReadAhead(self._items, self._table)
        return self

    def tables(self) -> ReadAhead[tuple[Any, str | None], Run]:
        """Each run as a table, in order, files read one ahead (iterate once)."""
        started, self._started = self._started, None
        return started if started is not None else ReadAhead(self._items, self._table)

    def close(self) -> None:
        """Stop a reading begun by :meth:`start` and not iterated (its result is dropped)."""
        started, self._started = self._started, None
        if started is not None:
            started.close()

    def __enter__(self) -> RunInputs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _table(self, item: tuple[Any, str | None]) -> Run:
        run, name = item
        if self._format is not None and isinstance(run, str | os.PathLike):
            return Run.read(run, format=self._format, name=name,
                            on_duplicate=self._on_duplicate,
                            _defer_duplicates="error" if self._defer else None)
        return as_run(run, name=name, on_duplicate=self._on_duplicate,
                      defer_duplicates=self._defer)

    def names(self, tables: Sequence[Run | Sequence[str]]) -> list[str]:
        """One unique name per run (see :func:`unique_names`), from the runs read or their
        :func:`name_candidates`."""
        if self.known_names is not None:
            return list(self.known_names)
        return unique_names([t if not isinstance(t, Run) else name_candidates(t)
                             for t in tables])


def load_runs(
    runs: Any,
    *,
    names: Sequence[str] | None = None,
    on_duplicate: OnDuplicate = "error",
    run_format: str | None = None,
) -> tuple[list[Run], list[str]]:
    """Turn the user's runs into tables and give each a unique name (every run read).

    Parameters
    ----------
    runs : sequence or mapping
        Runs (:class:`~rankscope.Run`, paths, DataFrames, dicts), or a mapping
        name -> run.
    names : sequence of str, optional
        Names overriding everything else, one per run.
    on_duplicate : {"error", "first", "max"}
        A document twice in one ranking, for runs read here.
    run_format : str, optional
        Format of the runs given as paths (default: from their names).

    Returns
    -------
    runs, names
    """
    inputs = RunInputs(runs, names=names, on_duplicate=on_duplicate, run_format=run_format)
    with inputs.tables() as reading:
        tables = list(reading)
    return tables, inputs.names(tables)

