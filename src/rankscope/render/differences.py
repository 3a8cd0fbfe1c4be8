"""``rankscope explain-differences`` for people: what a conventions profile changes, and why."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankscope.render.tabular import format_value

if TYPE_CHECKING:
    from rankscope.engine.differences import DifferenceReport, MetricDifference

__all__ = ["render_differences"]


def _count(m: MetricDifference) -> str:
    text = str(len(m.queries_differing))
    extra = len(m.only_default) + len(m.only_tool)
    return text + (f" (+{extra} averaged on one side only)" if extra else "")


def render_differences(report: DifferenceReport) -> str:
    """A table of the differing metrics, then each one's reasons, then the unchanged ones."""
    lines = [f"defaults:    {report.default_info}", f"{report.conventions}: {report.tool_info}",
             ""]
    differing = report.differing
    if not differing:
        lines.append(f"no metric asked for differs between rankscope's defaults and "
                     f"{report.conventions}'s conventions on these inputs")
    else:
        header = ("metric", "default", report.conventions, "queries differing")
        rows = [(m.label, format_value(m.default_mean), format_value(m.tool_mean), _count(m))
                for m in differing]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(row, widths, strict=True))
                                   ).rstrip())
        lines.append("")
        for m in differing:
            lines.append(f"{m.label}: {m.default_metric} -> {m.tool_metric}")
            lines += [f"  - {reason}" for reason in m.reasons]
    same = [m.label for m in report.metrics if not m.differs]
    if same and differing:
        lines += ["", "the same under both: " + ", ".join(same)]
    return "\n".join(lines)
