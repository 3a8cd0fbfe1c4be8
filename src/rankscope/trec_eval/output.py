"""trec_eval's output lines, byte for byte.

A value line is ``printf("%-22s\\t%s\\t%6.4f\\n", name, qid, value)``; counts
print as ``%ld`` of the value truncated toward zero; with ``-Z`` every number
prints as ``%6.4f`` behind a ``Z``. Python's ``%6.4f`` rounds the exact binary
value like glibc's printf; only NaN differs (glibc prints ``-nan`` for the NaN
that 0/0 gives on x86-64, which is every NaN trec_eval produces).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["fixed", "long_text", "value_lines"]


def fixed(value: float) -> str:
    """``%6.4f`` as glibc prints it."""
    if value != value:
        return "  -nan"
    return f"{value:6.4f}"


def long_text(value: float) -> str:
    """``%ld`` of ``(long) value``."""
    if value != value or math.isinf(value):
        return str(-(2**63))  # what x86-64 gives for an out-of-range conversion
    return str(int(value))


def value_lines(
    name: str, qids: Sequence[str], values: Sequence[float], *, integer: bool, zscore: bool
) -> list[str]:
    """One output line per (qid, value) for one value name."""
    if zscore:
        head = f"Z{name:<22}\t"
        return [f"{head}{q}\t{fixed(v)}\n" for q, v in zip(qids, values, strict=True)]
    head = f"{name:<22}\t"
    if integer:
        return [f"{head}{q}\t{long_text(v)}\n" for q, v in zip(qids, values, strict=True)]
    return [f"{head}{q}\t{fixed(v)}\n" for q, v in zip(qids, values, strict=True)]
