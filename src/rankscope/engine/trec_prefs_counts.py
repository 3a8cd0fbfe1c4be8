"""trec_eval's preference counting for one query (``form_prefs_counts``).

Judged documents get internal ids: those the run retrieved, in rank order
(0..NJR-1), then the others in document id order. Each judgment group (JG)
states preferences either as equivalence classes of equal level (one judgment
sub-group: "EC mode") or as a preference array closed under transitivity
(several sub-groups: "PA mode"). Preferences are counted as fulfilled or not,
among retrieved documents ("ret"), between a retrieved and an unretrieved one
("imp"), or between two unretrieved ones ("notoccur"); ``counts[i, j]`` sums,
over JGs, the preferences of document i over document j.

This runs one query at a time in Python with numpy inside: preference files
are small (the judging effort bounds them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

__all__ = ["JudgmentGroup", "PrefsError", "QueryPrefs", "count_prefs"]

IntMatrix = npt.NDArray[np.int64]


class PrefsError(Exception):
    """A preference file inconsistency, with trec_eval's text and exit status."""

    def __init__(self, text: str, status: int) -> None:
        super().__init__(text)
        self.text = text
        self.status = status


@dataclass
class JudgmentGroup:
    """Counts of one JG, plus what the ``Rnonrel`` measures need to recount."""

    ful_ret: int = 0
    poss_ret: int = 0
    ful_imp: int = 0
    poss_imp: int = 0
    notoccur: int = 0
    num_rel: int = 0
    num_rel_ret: int = 0
    num_nonrel: int = 0
    num_nonrel_ret: int = 0
    ecs: list[npt.NDArray[np.int64]] = field(default_factory=list)
    prefs: npt.NDArray[np.bool_] | None = None
    levels: npt.NDArray[np.float64] | None = None


@dataclass
class QueryPrefs:
    """All JGs of a query, the number of judged (NJ) and retrieved judged (NJR) ids."""

    groups: list[JudgmentGroup]
    n_judged: int
    n_judged_ret: int
    counts: IntMatrix


Line = tuple[str, str, str, float]  # jg, jsg, docno, level


def count_prefs(ranked_docs: list[str], lines: list[Line]) -> QueryPrefs:
    """Count one query's preferences (``lines`` in trec_eval's docno order)."""
    judged = sorted({line[2] for line in lines})
    judged_set = set(judged)
    retrieved = [d for d in ranked_docs if d in judged_set]
    ids = {d: i for i, d in enumerate(retrieved)}
    njr = len(retrieved)
    for d in judged:
        if d not in ids:
            ids[d] = len(ids)
    nj = len(ids)
    entries = sorted(
        ((jg, jsg, level, ids[doc], doc) for jg, jsg, doc, level in lines),
        key=lambda e: (e[0], e[1], -e[2], e[3]),
    )
    counts = np.zeros((nj, nj), dtype=np.int64)
    groups: list[JudgmentGroup] = []
    start = 0
    while start < len(entries):
        end = start
        while end < len(entries) and entries[end][0] == entries[start][0]:
            end += 1
        group = entries[start:end]
        if len({e[1] for e in group}) > 1:
            groups.append(_pa_group(group, nj, njr, counts))
        else:
            groups.append(_ec_group(group, njr, counts))
        start = end
    return QueryPrefs(groups, nj, njr, counts)


def _ec_group(group: list[tuple[str, str, float, int, str]], njr: int,
              counts: IntMatrix) -> JudgmentGroup:
    jg = JudgmentGroup()
    classes: list[list[int]] = []
    level_of: list[float] = []
    for _, _, level, ident, _ in group:
        if not level_of or level != level_of[-1]:
            classes.append([])
            level_of.append(level)
        classes[-1].append(ident)
    jg.ecs = [np.array(c, dtype=np.int64) for c in classes]
    for k, (ec, level) in enumerate(zip(jg.ecs, level_of, strict=True)):
        ret = int(np.count_nonzero(ec < njr))
        if level > 0.0:
            jg.num_rel_ret += ret
            jg.num_rel += ec.size
        else:
            jg.num_nonrel_ret += ret
            jg.num_nonrel += ec.size
        for other in jg.ecs[k + 1:]:
            d1 = np.repeat(ec, other.size)
            d2 = np.tile(other, ec.size)
            np.add.at(counts, (d1, d2), 1)
            same = np.flatnonzero(d1 == d2)
            if same.size:
                raise PrefsError(
                    "trec_eval.form_prefs_counts: Internal docid "
                    f"{int(d1[same[0]])} occurs with different rel_level in same jsg\n", 4)
            up = d1 < d2
            jg.ful_ret += int(np.count_nonzero(up & (d2 < njr)))
            jg.ful_imp += int(np.count_nonzero(up & (d2 >= njr) & (d1 < njr)))
            jg.notoccur += int(np.count_nonzero(up & (d1 >= njr)))
            jg.poss_ret += int(np.count_nonzero(~up & (d1 < njr)))
            jg.poss_imp += int(np.count_nonzero(~up & (d1 >= njr) & (d2 < njr)))
            jg.notoccur += int(np.count_nonzero(~up & (d1 >= njr) & (d2 >= njr)))
    jg.poss_ret += jg.ful_ret
    jg.poss_imp += jg.ful_imp
    return jg


def _pa_group(group: list[tuple[str, str, float, int, str]], nj: int, njr: int,
              counts: IntMatrix) -> JudgmentGroup:
    jg = JudgmentGroup()
    levels = np.full(nj, -1.0)
    prefs = np.zeros((nj, nj), dtype=bool)
    for i, (_, jsg, level, ident, doc) in enumerate(group):
        known = levels[ident]
        if (known > 0.0 and level == 0.0) or (known == 0.0 and level > 0.0):
            raise PrefsError(
                f"trec_eval.form_prefs_counts: doc '{doc}' has both 0 and non-0 "
                "rel_level assigned\n", 4)
        levels[ident] = level
        j = i + 1
        while j < len(group) and group[j][1] == jsg and group[j][2] == level:
            j += 1
        while j < len(group) and group[j][1] == jsg:
            prefs[ident, group[j][3]] = True
            j += 1
    prefs |= np.eye(nj, dtype=bool)
    while True:  # reflexive-transitive closure
        grown = (prefs.astype(np.int64) @ prefs.astype(np.int64)) > 0
        if (grown == prefs).all():
            break
        prefs = grown
    np.fill_diagonal(prefs, False)
    both = prefs & prefs.T
    if both.any():
        i, j = (int(x) for x in np.argwhere(both)[0])
        raise PrefsError(
            "trec_eval.form_prefs_counts: Pref inconsistency found\n"
            f"      internal rank {i} and internal rank {j} are conflicted\n", 134)
    jg.prefs, jg.levels = prefs, levels
    jg.num_rel_ret = int(np.count_nonzero(levels[:njr] > 0.0))
    jg.num_nonrel_ret = int(np.count_nonzero(levels[:njr] == 0.0))
    jg.num_rel = int(np.count_nonzero(levels > 0.0))
    jg.num_nonrel = int(np.count_nonzero(levels == 0.0))
    counts += prefs
    upper = np.triu(np.ones((nj, nj), dtype=bool), 1)
    ret, unret = slice(0, njr), slice(njr, nj)
    jg.ful_ret = int(np.count_nonzero(prefs[ret, ret] & upper[ret, ret]))
    jg.poss_ret = int(np.count_nonzero(prefs[ret, ret] & upper[ret, ret].T))
    jg.ful_imp = int(np.count_nonzero(prefs[ret, unret]))
    jg.poss_imp = int(np.count_nonzero(prefs[unret, ret]))
    jg.notoccur = int(np.count_nonzero(prefs[unret, unret]))
    jg.poss_ret += jg.ful_ret
    jg.poss_imp += jg.ful_imp
    return jg
