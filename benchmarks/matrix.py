"""The benchmark matrix: which (size, shape, metric set, mode) cells are measured.

Not every combination: every size gets the base shape with every metric set
and mode; every factor (judgments per query, id format, tie rate, file order)
is varied one at a time from the base at every size; a few shapes combine
several factors at 10^6 and 10^7 lines. ``--quick`` keeps 10^4 and 10^5 lines
and fewer tools, to run in under two minutes.
"""

from __future__ import annotations

from dataclasses import dataclass

from datagen import BASE, Shape

# label -> (queries, depth)
SIZES: dict[str, tuple[int, int]] = {
    "1e4": (100, 100),
    "1e5": (100, 1000),
    "1e6": (1000, 1000),
    "1e7": (10000, 1000),
    "1e5q": (100000, 100),
}
SIZE_TEXT = {
    "1e4": "10^4 lines (100 q x 100)",
    "1e5": "10^5 lines (100 q x 1,000)",
    "1e6": "10^6 lines (1,000 q x 1,000)",
    "1e7": "10^7 lines (10,000 q x 1,000)",
    "1e5q": "10^7 lines (100,000 q x 100)",
}
LINES = {"1e4": 10**4, "1e5": 10**5, "1e6": 10**6, "1e7": 10**7, "1e5q": 10**7}

ONE_FACTOR = [
    Shape(judged=10), Shape(judged=1000),
    Shape(ids="num"), Shape(ids="url"), Shape(ids="msmarco"),
    Shape(ties=0), Shape(ties=90),
    Shape(order="shuffled"),
]
INTERACTIONS = [
    Shape(judged=1000, ids="url", order="shuffled"),
    Shape(ids="msmarco", ties=90, order="shuffled"),
    Shape(judged=10, ids="num", ties=0),
]

E2E_TOOLS = ["rankscope", "trec_eval", "pytrec_eval", "ranx", "ir_measures"]
MEMORY_TOOLS = ["rankscope", "pytrec_eval", "ranx", "ir_measures"]


@dataclass(frozen=True)
class Cell:
    size: str
    shape: Shape
    metric_set: str  # cut | nocut | all_trec
    mode: str  # e2e | objects | frames

    @property
    def key(self) -> str:
        return f"{self.size}/{self.shape.key}/{self.metric_set}/{self.mode}"


def full() -> list[Cell]:
    cells: list[Cell] = []
    for size in SIZES:
        big = LINES[size] >= 10**6
        for metric_set in ("cut", "nocut", "all_trec"):
            cells.append(Cell(size, BASE, metric_set, "e2e"))
        for metric_set in ("cut", "nocut"):
            cells.append(Cell(size, BASE, metric_set, "objects"))
            cells.append(Cell(size, BASE, metric_set, "frames"))
        variants = list(ONE_FACTOR)
        if size in ("1e6", "1e7"):
            variants += INTERACTIONS
        if size == "1e5q":  # 10^7 lines again: the factors that change the most
            variants = [Shape(ties=0), Shape(ids="msmarco"), Shape(order="shuffled")]
        for shape in variants:
            sets = ("cut", "nocut", "all_trec") if big else ("cut", "nocut")
            cells.extend(Cell(size, shape, s, "e2e") for s in sets)
            cells.append(Cell(size, shape, "nocut", "objects"))
    return cells


def quick() -> list[Cell]:
    cells = [Cell("1e5", BASE, s, "e2e") for s in ("cut", "nocut", "all_trec")]
    cells += [Cell("1e5", BASE, "nocut", "objects"), Cell("1e5", BASE, "cut", "frames"),
              Cell("1e4", BASE, "nocut", "e2e"), Cell("1e4", BASE, "cut", "objects")]
    cells += [Cell("1e5", shape, "nocut", "e2e") for shape in ONE_FACTOR]
    return cells


def tools_for(cell: Cell, quick_run: bool) -> list[str]:
    if cell.metric_set == "all_trec":
        return ["rankscope", "trec_eval", "pytrec_eval"]
    if cell.mode == "e2e":
        if quick_run:
            return ["rankscope", "trec_eval", "pytrec_eval"] + (
                ["ir_measures"] if cell.shape == BASE else [])
        return list(E2E_TOOLS)
    return list(MEMORY_TOOLS)
