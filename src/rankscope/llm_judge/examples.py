"""Few-shot examples: pairs the team graded already, shown to the model with their grades.

The examples come from judgments given to the run (``--few-shot-from``):
one grade per pair (a majority vote when several people graded it; a tied
vote is no example), on the run's scale, never a pair the run grades. The
selection is fixed by a seed: the candidates are put in a seeded order that
takes the grades in turn (a 0, a 1, a 2, a 3, then again), so a handful of
examples covers the scale rather than its most common grade; the first
``n`` whose query and document texts are known are the examples, shown in
a seeded order. The same judgments, seed and ``n`` give the same examples
on every run, and they are part of every cache key (see
:func:`rankscope.llm_judge.cache.cache_key`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from rankscope.errors import InputError, OptionError
from rankscope.judgments.scales import Scale
from rankscope.llm_judge.inputs import Pair, read_judged

__all__ = ["Example", "example_order", "pick_examples"]


@dataclass(frozen=True)
class Example:
    """A graded pair shown to the model as an example."""

    query_id: str
    doc_id: str
    grade: float

    @property
    def pair(self) -> Pair:
        return Pair(self.query_id, self.doc_id)

    def key(self) -> list[Any]:
        """``[query_id, doc_id, grade]``, as the cache key names it."""
        return [self.query_id, self.doc_id, self.grade]


def _one_grade_each(judged: Any, scale: Scale) -> pl.DataFrame:
    from rankscope.data.tables import Qrels
    from rankscope.judgments.aggregate import aggregate

    table = read_judged(judged)
    frame = table.frame if isinstance(table, Qrels) else aggregate(
        table, "majority", scale=scale).frame
    return frame.filter(pl.col("grade").is_not_null()).select("query_id", "doc_id", "grade")


def example_order(
    judged: Any, scale: Scale, *, exclude: Iterable[Pair] = (), seed: int = 0
) -> list[Example]:
    """Every candidate example, in the seeded order that takes the grades in turn.

    Parameters
    ----------
    judged : qrels or judgments (path or table)
        Where the examples come from.
    scale : Scale
        Grades off it are no example.
    exclude : iterable of Pair
        Pairs that must not be examples (the pairs being graded).
    seed : int, default 0
        The seed of the order.

    Examples
    --------
    >>> from rankscope.judgments import GRADED
    >>> qrels = {"q1": {"a": 0, "b": 3, "c": 3}, "q2": {"d": 1}}
    >>> [e.grade for e in example_order(qrels, GRADED, exclude=[Pair("q1", "c")])]
    [0.0, 1.0, 3.0]
    """
    skip = set(exclude)
    by_grade: dict[float, list[Example]] = {}
    for q, d, g in _one_grade_each(judged, scale).sort("query_id", "doc_id").iter_rows():
        if scale.contains(float(g)) and Pair(str(q), str(d)) not in skip:
            by_grade.setdefault(float(g), []).append(Example(str(q), str(d), float(g)))
    rng = random.Random(seed)
    for grade in sorted(by_grade):
        rng.shuffle(by_grade[grade])
    order: list[Example] = []
    queues = [by_grade[g] for g in sorted(by_grade)]
    for i in range(max((len(q) for q in queues), default=0)):
        order += [q[i] for q in queues if i < len(q)]
    return order


def pick_examples(
    order: Sequence[Example], n: int, has_text: Callable[[Pair], bool], *, seed: int = 0
) -> list[Example]:
    """The first ``n`` candidates whose texts are known, in a seeded order.

    Raises
    ------
    OptionError
        ``n`` below 1.
    InputError
        Fewer than ``n`` candidates with texts.
    """
    if n < 1:
        raise OptionError(f"the number of few-shot examples must be >= 1, not {n}")
    chosen = [e for e in order if has_text(e.pair)][:n]
    if len(chosen) < n:
        raise InputError(f"only {len(chosen)} graded pair(s) with known texts for {n} "
                         "few-shot examples (pairs being graded are never examples)")
    random.Random(seed).shuffle(chosen)
    return chosen
