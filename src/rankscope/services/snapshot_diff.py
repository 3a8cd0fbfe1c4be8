"""How snapshots differ: RBO, Jaccard@k, churn and rank moves; the holes in the judgments.

A *ranking* is a snapshot from the store or a run file, reduced to each
query's documents in rank order: a snapshot in the engine's order (whatever
its scores say: a sort by a field, equal scores, no scores), a run file in
evaluation order (by score, ties as ``--ties`` says). Rank similarity,
metrics and holes all use that one order (:meth:`Ranking.ordered_run`), so a
metric here equals what ``rankscope evaluate`` prints for the run
``rankscope snapshot -o`` writes (its scores decrease strictly in the
engine's order) or for the run file with the same ``--ties``. Each later
ranking is compared with the first (the baseline), per query and overall:

- **RBO**: rank-biased overlap, seed 000's extrapolated form (``RBO_EXT``)
  over the whole lists, computed by :func:`rankscope.compare.rank_similarity.rbo_values`;
- **Jaccard@k**: shared documents of the two top k over their union;
- **churn**: documents that entered the top k and documents that left it;
- **moves**: documents in both top k at a different rank (and their mean
  absolute move, over the documents that moved).

Two rankings that measured different things (a depth 3 and a depth 10
snapshot, snapshots of different query sets) would show every difference as
a change: :func:`align` refuses them, or with ``allow`` compares what they
share and says so.

:func:`holes` lists, for each ranking, the documents of its top k that the
qrels do not grade (the next batch to grade), with
:func:`rankscope.judgments.coverage.coverage`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from rankscope.compare.rank_similarity import jaccard_values, pair_rankings, rbo_values
from rankscope.data.tables import Qrels, Run
from rankscope.errors import OptionError, StoreError

if TYPE_CHECKING:
    from rankscope.judgments.coverage import Coverage
    from rankscope.store.db import Store

__all__ = [
    "PairDiff",
    "Ranking",
    "align",
    "diff_rankings",
    "holes",
    "load_ranking",
    "mismatches",
    "ranking_from_run",
    "ranking_from_store",
    "snapshot_run",
]

_DISPLAY = ("title", "url", "snippet")


@dataclass(frozen=True)
class Ranking:
    """Each query's documents in rank order, from a snapshot or a run file.

    Attributes
    ----------
    label : str
        How it is shown (``#3 demo-baseline`` for a snapshot, the run's name).
    frame : polars.DataFrame
        ``query_id, doc_id, rank, score`` (rank from 1 in the engine's order;
        score as in the run file), plus ``title, url, snippet`` for a snapshot.
    query_ids : list of str
        Every query it answers, in order (with those that returned nothing).
    texts : dict
        Query id -> query text, where known.
    notes : list of str
        What a reader of its numbers should know (a snapshot's partial answers).
    depth : int, optional
        A snapshot's depth (None for a run file: its longest ranking stands in).
    query_set : str, optional
        A snapshot's query set (the SHA-256 of its content; None for a run file).
    """

    label: str
    frame: pl.DataFrame
    query_ids: list[str]
    texts: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    depth: int | None = None
    query_set: str | None = None

    @property
    def effective_depth(self) -> int:
        """The depth: a snapshot's own, a run file's longest ranking."""
        if self.depth is not None:
            return self.depth
        longest = self.frame.get_column("rank").max()
        return int(longest) if longest is not None else 0  # type: ignore[arg-type]

    def restricted(self, depth: int, query_ids: list[str]) -> Ranking:
        """The same ranking cut at ``depth`` and kept to ``query_ids`` (in that order)."""
        keep = set(query_ids)
        frame = self.frame.filter((pl.col("rank") <= depth)
                                  & pl.col("query_id").is_in(list(keep)))
        return Ranking(label=self.label, frame=frame,
                       query_ids=[q for q in query_ids if q in set(self.query_ids)],
                       texts=self.texts, notes=self.notes,
                       depth=min(depth, self.effective_depth), query_set=self.query_set)

    def ordered_run(self) -> Run:
        """A :class:`~rankscope.Run` whose scores (``-rank``) keep exactly this order.

        What every metric of a ranking is computed on: no tie is left for an
        evaluation to break its own way.
        """
        frame = self.frame.select("query_id", "doc_id",
                                  (-pl.col("rank").cast(pl.Float64)).alias("score"))
        return Run(frame, name=self.label, source=self.label)


def ranking_from_store(store: Store, ref: str, *, allow_partial: bool = False) -> Ranking:
    """A snapshot of the store (by id or name) as a ranking.

    Raises
    ------
    StoreError
        No such snapshot, or it is not complete (unless ``allow_partial``).
    """
    from rankscope.services.snapshots import run_scores
    from rankscope.store.snapshots import read_snapshot

    contents = read_snapshot(store, ref)
    info, records = contents.info, contents.queries
    if not contents.whole and not allow_partial:
        raise StoreError(
            f"snapshot #{info.id} ({info.name}) is {info.status} ({info.n_done} of "
            f"{info.n_queries} queries): it is not compared as if whole; take it again")
    answered = [r for r in records if r.status == "ok"]
    rows = [hit for hits in contents.hits.values() for hit in hits]
    scores = [s for hits in contents.hits.values()
              for s in run_scores([h["score"] for h in hits], info.depth)]
    frame = pl.DataFrame(
        {"query_id": [r["query_id"] for r in rows], "doc_id": [r["doc_id"] for r in rows],
         "rank": [r["rank"] for r in rows], "score": scores,
         **{k: [r[k] for r in rows] for k in _DISPLAY}},
        schema={"query_id": pl.String, "doc_id": pl.String, "rank": pl.Int64,
                "score": pl.Float64, **dict.fromkeys(_DISPLAY, pl.String)})
    notes = []
    if info.n_partial or info.n_short:
        notes.append(f"snapshot #{info.id} ({info.name}): {info.n_partial} of {info.n_done} "
                     f"answers partial (the engine timed out or lost shards), {info.n_short} "
                     "short of the depth although the engine matched more: their results may "
                     "miss documents")
    return Ranking(label=f"#{info.id} {info.name}", frame=frame,
                   query_ids=[r.query_id for r in answered],
                   texts={r.query_id: r.text for r in records}, notes=notes,
                   depth=info.depth, query_set=info.query_set_sha256)


def ranking_from_run(path: str | Path, *, ties: str = "trec") -> Ranking:
    """A run file as a ranking (ordered by score; ties as in evaluation)."""
    from rankscope.judgments.coverage import ranked_top_k

    run = Run.read(path)
    ranked = ranked_top_k(run, None, ties=ties)  # type: ignore[arg-type]
    # ranked_top_k keeps the file's row order within equal scores; attach each row's score
    frame = ranked.join(run.frame, on=["query_id", "doc_id"], how="left").sort(
        "query_id", "rank")
    ids = frame.get_column("query_id").unique(maintain_order=True).to_list()
    return Ranking(label=run.name, frame=frame, query_ids=[str(q) for q in ids])


def snapshot_run(store: Store, ref: str) -> tuple[Run, list[str]]:
    """A complete snapshot of the store as a run scored in the engine's order, and notes.

    The notes say what a reader of its numbers should know (queries whose
    answer was partial or short).
    """
    ranking = ranking_from_store(store, ref)
    return ranking.ordered_run(), list(ranking.notes)


def load_ranking(ref: str, store: Store | None, *, ties: str = "trec",
                 allow_partial: bool = False) -> Ranking:
    """A run file when ``ref`` is an existing file, else a snapshot of ``store``."""
    if Path(ref).is_file():
        return ranking_from_run(ref, ties=ties)
    if store is None:
        raise OptionError(f"{ref!r} is not a file; to name a snapshot, give --store DB")
    return ranking_from_store(store, ref, allow_partial=allow_partial)


def _is_snapshot(ranking: Ranking) -> bool:
    return ranking.query_set is not None


def mismatches(rankings: Sequence[Ranking]) -> list[str]:
    """How the rankings differ in what they measured (depth, query set), in words.

    Depths: a snapshot's own, a run file's longest ranking. Query sets:
    snapshots of different query sets (other ids, or the same ids with other
    texts or parameters); run files cannot list a query that returned
    nothing, so a query only in some of them is not a difference (it counts
    as an empty ranking where it is missing), unless they share none.
    """
    base = rankings[0]
    out: list[str] = []
    for other in rankings[1:]:
        a, b = base.effective_depth, other.effective_depth
        if a != b:
            how = "" if _is_snapshot(base) and _is_snapshot(other) else \
                " (a run file's depth: its longest ranking)"
            out.append(f"{other.label} has depth {b}, {base.label} depth {a}{how}")
        ids_a, ids_b = set(base.query_ids), set(other.query_ids)
        if _is_snapshot(base) and _is_snapshot(other):
            only_a, only_b = len(ids_a - ids_b), len(ids_b - ids_a)
            if only_a or only_b:
                out.append(f"{other.label} and {base.label} answer different queries "
                           f"({only_a} only in {base.label}, {only_b} only in {other.label})")
            elif base.query_set != other.query_set:
                out.append(f"{other.label} and {base.label} were taken over different query "
                           "sets (the same ids with other texts, parameters or needs)")
        elif ids_a and ids_b and not ids_a & ids_b:
            out.append(f"{other.label} and {base.label} share no query")
    return out


def align(rankings: Sequence[Ranking], *, allow: bool = False) -> tuple[list[Ranking],
                                                                          list[str]]:
    """The rankings made comparable, and what was done to them.

    When they differ (:func:`mismatches`): an
    :class:`~rankscope.errors.OptionError` naming the differences, or with
    ``allow`` every ranking cut at the smallest depth and kept to the queries
    all of them answer, with warnings saying so. Otherwise they are returned
    as they are, with no warning.
    """
    found = mismatches(rankings)
    if not found:
        return list(rankings), []
    if not allow:
        raise OptionError("the snapshots measured different things, so every difference "
                          "would count as a change: " + "; ".join(found) + " (add "
                          "--allow-mismatch to compare what they share: the smallest depth, "
                          "the queries all answer)")
    depth = min(r.effective_depth for r in rankings)
    shared = [q for q in rankings[0].query_ids
              if all(q in set(r.query_ids) for r in rankings[1:])]
    if not all(_is_snapshot(r) for r in rankings):
        shared = list(dict.fromkeys(q for r in rankings for q in r.query_ids))
    kept = [r.restricted(depth, shared) for r in rankings]
    dropped = len(set().union(*(set(r.query_ids) for r in rankings))) - len(shared)
    said = [*found, f"compared at depth {depth} on {len(shared)} queries"
            + (f" ({dropped} left out)" if dropped else "")]
    return kept, said


@dataclass(frozen=True)
class PairDiff:
    """One ranking against the baseline.

    Attributes
    ----------
    baseline, other : str
        Their labels.
    k : int
        The cut-off of Jaccard, churn and moves.
    p : float
        RBO's persistence.
    per_query : polars.DataFrame
        ``query_id, rbo, jaccard, entered, left, moved, mean_abs_move`` for
        every query either ranking answers (RBO and Jaccard null when both
        lists are empty; ``mean_abs_move``, the mean absolute move of the
        documents that moved, null when none did).
    entered, left : polars.DataFrame
        ``query_id, doc_id, rank`` of documents that entered the other's top
        k (its rank there) / left the baseline's top k (its rank there).
    moves : polars.DataFrame
        ``query_id, doc_id, rank_baseline, rank_other`` of documents in both
        top k at different ranks.
    """

    baseline: str
    other: str
    k: int
    p: float
    per_query: pl.DataFrame
    entered: pl.DataFrame
    left: pl.DataFrame
    moves: pl.DataFrame

    def _mean(self, column: str) -> float | None:
        value = self.per_query.get_column(column).drop_nulls().drop_nans().mean()
        return None if value is None else float(value)  # type: ignore[arg-type]

    @property
    def rbo(self) -> float | None:
        """Mean RBO over queries with a value."""
        return self._mean("rbo")

    @property
    def jaccard(self) -> float | None:
        """Mean Jaccard@k over queries with a value."""
        return self._mean("jaccard")

    @property
    def changed(self) -> int:
        """Queries whose top k differs (a document in or out, or a move)."""
        pq = self.per_query
        return int(((pq["entered"] > 0) | (pq["left"] > 0) | (pq["moved"] > 0)).sum())

    def summary(self) -> dict[str, Any]:
        """The overall numbers."""
        return {
            "baseline": self.baseline, "other": self.other, "k": self.k, "p": self.p,
            "queries": self.per_query.height, "queries_changed": self.changed,
            "rbo": self.rbo, "jaccard": self.jaccard,
            "entered": int(self.per_query["entered"].sum()),
            "left": int(self.per_query["left"].sum()),
            "moved": int(self.per_query["moved"].sum()),
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the summary and every query's details."""

        def clean(value: Any) -> Any:
            return None if isinstance(value, float) and np.isnan(value) else value

        per_query: dict[str, Any] = {}
        for row in self.per_query.iter_rows(named=True):
            q = row.pop("query_id")
            per_query[q] = {k: clean(v) for k, v in row.items()}
            per_query[q]["entered_docs"] = self.entered.filter(pl.col("query_id") == q).select(
                "doc_id", "rank").to_dicts()
            per_query[q]["left_docs"] = self.left.filter(pl.col("query_id") == q).select(
                "doc_id", "rank").to_dicts()
            per_query[q]["moves"] = self.moves.filter(pl.col("query_id") == q).drop(
                "query_id").to_dicts()
        return {**self.summary(), "per_query": per_query}


def _diff_pair(base: Ranking, other: Ranking, k: int, p: float) -> PairDiff:
    pairs, _, _ = pair_rankings(base.ordered_run(), other.ordered_run(), ties="trec",
                                queries="union")
    rbo = rbo_values(pairs, p, "ext")
    jaccard = jaccard_values(pairs.cut(k))
    scores = pl.DataFrame({"query_id": pairs.query_ids, "rbo": rbo, "jaccard": jaccard},
                          schema={"query_id": pl.String, "rbo": pl.Float64,
                                  "jaccard": pl.Float64})
    top_a = base.frame.filter(pl.col("rank") <= k).select("query_id", "doc_id", "rank")
    top_b = other.frame.filter(pl.col("rank") <= k).select("query_id", "doc_id", "rank")
    entered = top_b.join(top_a, on=["query_id", "doc_id"], how="anti").sort("query_id", "rank")
    left = top_a.join(top_b, on=["query_id", "doc_id"], how="anti").sort("query_id", "rank")
    both = top_a.join(top_b, on=["query_id", "doc_id"], how="inner", suffix="_other").rename(
        {"rank": "rank_baseline"})
    moves = both.filter(pl.col("rank_baseline") != pl.col("rank_other")).sort(
        "query_id", "rank_baseline")
    order = list(dict.fromkeys([*base.query_ids, *other.query_ids]))
    queries = pl.DataFrame({"query_id": order, "_order": np.arange(len(order))},
                           schema={"query_id": pl.String, "_order": pl.Int64})

    def count(frame: pl.DataFrame, name: str) -> pl.DataFrame:
        return frame.group_by("query_id").agg(pl.len().cast(pl.Int64).alias(name))

    move_size = moves.group_by("query_id").agg(  # over the documents that moved
        (pl.col("rank_baseline") - pl.col("rank_other")).abs().mean().alias("mean_abs_move"))
    per_query = (
        queries.join(scores, on="query_id", how="left")
        .join(count(entered, "entered"), on="query_id", how="left")
        .join(count(left, "left"), on="query_id", how="left")
        .join(count(moves, "moved"), on="query_id", how="left")
        .join(move_size, on="query_id", how="left")
        .with_columns(pl.col("entered", "left", "moved").fill_null(0))
        .sort("_order").drop("_order")
        .select("query_id", "rbo", "jaccard", "entered", "left", "moved", "mean_abs_move")
    )
    return PairDiff(baseline=base.label, other=other.label, k=k, p=p, per_query=per_query,
                    entered=entered, left=left, moves=moves)


def diff_rankings(rankings: Sequence[Ranking], *, k: int = 10, p: float = 0.9) -> list[PairDiff]:
    """Compare every ranking after the first with the first.

    Parameters
    ----------
    rankings : sequence of Ranking
        Two or more; the first is the baseline.
    k : int, default 10
        Cut-off of Jaccard, churn and moves.
    p : float, default 0.9
        RBO's persistence, in (0, 1).

    Returns
    -------
    list of PairDiff
    """
    if len(rankings) < 2:
        raise OptionError("a diff needs two or more snapshots or runs")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise OptionError(f"k must be a whole number >= 1, not {k!r}")
    if not 0 < p < 1:
        raise OptionError(f"p must be in (0, 1), not {p!r}")
    return [_diff_pair(rankings[0], other, k, p) for other in rankings[1:]]


def holes(rankings: Sequence[Ranking], qrels: Qrels, k: int) -> tuple[list[Coverage],
                                                                      pl.DataFrame]:
    """Each ranking's coverage of its top k by the qrels, and the ungraded pairs of all.

    Returns
    -------
    coverages : list of Coverage
        One per ranking (``ungraded`` = its holes).
    batch : polars.DataFrame
        ``query_id, doc_id, rank, query_text, title, url, found_in, grade``:
        every ungraded (query, document) of any ranking's top k, once (its best
        rank; ``found_in`` names the rankings), ``grade`` empty: the next batch
        to grade, readable back as judgments once filled in.
    """
    from rankscope.judgments.coverage import coverage

    coverages = [coverage(qrels, r.ordered_run(), k) for r in rankings]
    parts = []
    for ranking, cov in zip(rankings, coverages, strict=True):
        shown = ranking.frame.select("query_id", "doc_id",
                                     *[c for c in ("title", "url") if c in ranking.frame.columns])
        parts.append(cov.ungraded.join(shown, on=["query_id", "doc_id"], how="left")
                     .with_columns(pl.lit(ranking.label).alias("found_in"),
                                   pl.col("query_id").replace_strict(
                                       ranking.texts, default=None, return_dtype=pl.String)
                                   .alias("query_text")))
    columns = ["query_id", "doc_id", "rank", "query_text", "title", "url", "found_in"]
    aligned = [part.with_columns([pl.lit(None, pl.String).alias(c) for c in columns
                                  if c not in part.columns]).select(columns) for part in parts]
    every = pl.concat(aligned) if aligned else pl.DataFrame(
        schema={c: pl.Int64 if c == "rank" else pl.String for c in columns})
    batch = (every.group_by("query_id", "doc_id", maintain_order=True)
             .agg(pl.col("rank").min(), pl.col("query_text").drop_nulls().first(),
                  pl.col("title").drop_nulls().first(), pl.col("url").drop_nulls().first(),
                  pl.col("found_in").unique(maintain_order=True).str.join("; "))
             .sort("query_id", "rank", "doc_id")
             .with_columns(pl.lit(None, pl.Float64).alias("grade")))
    return coverages, batch
