"""rankscope side by side with trec_eval, pytrec_eval, ranx and ir_measures: the matrix.

    python benchmarks/run.py --quick              # 10^4-10^5 lines, under two minutes
    python benchmarks/run.py --matrix             # every cell (hours: 10^7-line cells)
    python benchmarks/run.py --matrix --only '^1e6/' --tools rankscope,trec_eval
    python benchmarks/run.py --from-json benchmarks/results.json --readme

The cells are listed in ``benchmarks/matrix.py``; the data (seeded) is
generated once under ``benchmarks/data/`` by ``benchmarks/datagen.py``. Every
tool runs in a fresh process (``benchmarks/workers.py``):

* ``e2e``: files in, numbers out, process start to exit: wall time from the
  parent, CPU (user + system, all threads) and peak RSS from ``wait4``; the
  input files are read once before every run (untimed), so no tool reads
  them from disk;
* ``objects`` / ``frames``: the data already loaded (each tool's own objects;
  or pandas / polars frames), only the evaluation timed inside the process
  after one warm-up call, peak RSS during the call (loaded data included).

Metric sets: ``cut`` (nDCG@10, P@10, R@100, AP@100), ``nocut`` (AP, RR,
nDCG, bpref: every rank counts) and ``all_trec`` (trec_eval's ``-m
all_trec``: ``rankscope trec_eval``, the binary, pytrec_eval with every
measure it supports). Each tool's means are checked against rankscope's;
``all_trec`` compares every summary line with the binary's. With
``--repeat N`` the tools of a cell run in turn N times (A B C A B C ...) and
each keeps its fastest run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import matrix  # noqa: E402
from datagen import BASE, Shape, ensure_data  # noqa: E402
from workers import LABELS, METRICS  # noqa: E402

TOLERANCE = 1e-4  # trec_eval prints four decimals


GNU_TIME = "/usr/bin/time"


def run_timed(cmd: list[str], timeout: float) -> dict[str, Any]:
    """Run ``cmd``: wall time from here; CPU (user+system) and peak RSS of the command.

    The peak comes from GNU time's report on its own child when it is installed:
    a child forked from this (large) process inherits its resident pages until it
    execs, and the kernel counts them in the child's peak, so wait4's figure is
    never below this process's size.
    """
    out_path = HERE / "data" / ".stdout"
    err_path = HERE / "data" / ".stderr"
    usage_path = HERE / "data" / ".usage"
    out_path.parent.mkdir(exist_ok=True)
    gnu_time = Path(GNU_TIME).is_file()
    if gnu_time:
        cmd = [GNU_TIME, "-o", str(usage_path), "-f", "%U %S %M", *cmd]
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                return {"error": f"timed out after {timeout:.0f} s"}
            time.sleep(0.001)
        wall = time.perf_counter() - start
    returncode = os.waitstatus_to_exitcode(status)
    cpu, peak_mb = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
    if gnu_time:
        user, system, peak_kb = usage_path.read_text().split()[-3:]
        cpu, peak_mb = float(user) + float(system), int(peak_kb) / 1024
    return {
        "wall": wall,
        "cpu": cpu,
        "peak_mb": peak_mb,
        "returncode": returncode,
        "stdout": out_path.read_text(errors="replace"),
        "stderr": err_path.read_text(errors="replace")[-2000:],
    }


# -- commands ---------------------------------------------------------------------------------


def rankscope_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("rankscope")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "rankscope.cli.main"]


def e2e_command(tool: str, metric_set: str, qrels: Path, run: Path,
                trec_eval: str | None) -> list[str] | None:
    if tool == "rankscope":
        if metric_set == "all_trec":
            return [*rankscope_cmd(), "trec_eval", "-m", "all_trec", str(qrels), str(run)]
        metrics = [a for m in METRICS[metric_set]["rankscope"] for a in ("-m", m)]
        # --ci never: the other tools compute no interval; rankscope's default adds a bootstrap
        return [*rankscope_cmd(), "evaluate", str(qrels), str(run), *metrics, "-f", "json",
                "--quiet", "--ci", "never"]
    if tool == "trec_eval":
        if trec_eval is None:
            return None
        metrics = (["-m", "all_trec"] if metric_set == "all_trec" else
                   [a for m in METRICS[metric_set]["trec_eval"] for a in ("-m", m)])
        return [trec_eval, *metrics, str(qrels), str(run)]
    if metric_set == "all_trec" and tool != "pytrec_eval":
        return None  # ranx and ir_measures have no all_trec
    return [sys.executable, str(HERE / "workers.py"), tool, "e2e", metric_set, str(qrels),
            str(run)]


def parse_means(tool: str, metric_set: str, stdout: str) -> dict[str, float] | None:
    if metric_set == "all_trec":
        return _trec_lines(stdout) if tool in ("rankscope", "trec_eval") else None
    if tool == "rankscope":
        means = json.loads(stdout)["mean"]
        return {lab: means[k] for lab, k in zip(LABELS[metric_set],
                                                 METRICS[metric_set]["rankscope"], strict=True)}
    if tool == "trec_eval":
        lines = _trec_lines(stdout)
        names = [m.replace(".", "_") for m in METRICS[metric_set]["trec_eval"]]
        return {lab: lines[n] for lab, n in zip(LABELS[metric_set], names, strict=True)}
    return _last_json(stdout)["means"]  # type: ignore[no-any-return]


def _last_json(stdout: str) -> dict[str, Any]:
    return json.loads(stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _trec_lines(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "all":
            try:
                out[parts[0]] = float(parts[2])
            except ValueError:
                continue
    return out


def agreement(reference: dict[str, float] | None, other: dict[str, float] | None,
              metric_set: str) -> str:
    if reference is None or other is None:
        return "-"
    if metric_set == "all_trec":
        common = sorted(set(reference) & set(other) - {"runid"})
        bad = [k for k in common if abs(reference[k] - other[k]) > TOLERANCE]
        missing = sorted(set(other) - set(reference) - {"runid"})
        text = f"{len(common) - len(bad)}/{len(common)} equal"
        if bad:
            text += f" (differ: {', '.join(bad[:6])})"
        if missing:
            text += f" ({len(missing)} missing)"
        return text
    bad = [f"{lab} {other[lab]:.4f} vs {reference[lab]:.4f}" for lab in LABELS[metric_set]
           if abs(reference[lab] - other[lab]) > TOLERANCE]
    return "equal" if not bad else "differ: " + "; ".join(bad)


# -- measuring --------------------------------------------------------------------------------


def _one_run(tool: str, mode: str, cell: matrix.Cell, qrels: Path, run: Path,
             trec_eval: str | None, timeout: float) -> dict[str, Any] | None:
    if mode == "e2e":
        cmd = e2e_command(tool, cell.metric_set, qrels, run, trec_eval)
        if cmd is None:
            return None
        result = run_timed(cmd, timeout)
    else:
        worker_tool, _, worker_mode = tool.partition(":")
        cmd = [sys.executable, str(HERE / "workers.py"), worker_tool, worker_mode,
               cell.metric_set, str(qrels), str(run)]
        result = run_timed(cmd, timeout)
        if "error" not in result and result["returncode"] == 0:
            inner = _last_json(result["stdout"])
            result.update({k: inner[k] for k in ("wall", "cpu", "peak_mb")})
    if "error" in result:
        return {"error": result["error"]}
    if result["returncode"] != 0:
        return {"error": f"exit {result['returncode']}: {result['stderr'][-300:]}"}
    try:
        result["means"] = (parse_means(tool, cell.metric_set, result["stdout"])
                           if mode == "e2e" else _last_json(result["stdout"])["means"])
    except (ValueError, KeyError, IndexError) as exc:
        result["means"] = None
        result["parse_error"] = str(exc)
    del result["stdout"], result["stderr"]
    return result


def worker_tools(cell: matrix.Cell, tools: list[str]) -> list[str]:
    """Tools as measured: in-memory modes name the worker's mode (``ranx:objects``)."""
    if cell.mode == "e2e":
        return tools
    if cell.mode == "objects":
        return [f"{t}:objects" for t in tools]
    out = []
    for t in tools:  # frames: rankscope from both libraries, the others from pandas
        out += ([f"{t}:polars", f"{t}:pandas"] if t == "rankscope" else [f"{t}:pandas"])
    return out


def warm_page_cache(*paths: Path) -> None:
    """Read the input files once, untimed, so that no tool pays for reading them from disk.

    Without it the first tool of a cell (always rankscope) read its files from
    disk whenever an earlier run had pushed them out of the page cache (ranx
    peaks at 19 GB on URL ids), which cost up to a second against the
    binary's warm read that followed. Done before every run: a run using most
    of the memory evicts the files for the next one too.
    """
    for path in paths:
        with open(path, "rb") as handle:
            while handle.read(1 << 24):
                pass


def measure(cell: matrix.Cell, tools: list[str], trec_eval: str | None,
            args: argparse.Namespace) -> list[dict[str, Any]]:
    n_q, depth = matrix.SIZES[cell.size]
    qrels, run = ensure_data(HERE / "data", n_q, depth, args.seed, cell.shape)
    best: dict[str, dict[str, Any]] = {}
    # In memory the call is timed inside a warm process: one run is steady enough.
    repeat = args.repeat if cell.mode == "e2e" or args.repeat_memory else 1
    for _ in range(max(1, repeat)):
        for tool in worker_tools(cell, tools):
            if "error" in best.get(tool, {}):
                continue
            warm_page_cache(qrels, run)
            result = _one_run(tool, cell.mode, cell, qrels, run, trec_eval, args.timeout)
            if result is None:
                continue
            if tool not in best or "error" in result or result["wall"] < best[tool]["wall"]:
                best[tool] = result
    rows = []
    reference = next((r.get("means") for t, r in best.items() if t.startswith("rankscope")),
                     None)
    if cell.metric_set == "all_trec":  # the binary is the reference for all_trec
        reference = best.get("trec_eval", {}).get("means")
    for tool, result in best.items():
        row = {"cell": cell.key, "size": cell.size, "shape": cell.shape.key,
               "set": cell.metric_set, "mode": cell.mode, "tool": tool, **result}
        if "error" not in row:
            ref_tool = "trec_eval" if cell.metric_set == "all_trec" else "rankscope"
            row["agreement"] = ("reference" if tool.split(":")[0] == ref_tool else
                                agreement(reference, row.get("means"), cell.metric_set))
        rows.append(row)
    return rows


# -- reporting --------------------------------------------------------------------------------


def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    versions = {}
    from importlib.metadata import PackageNotFoundError, version

    for package in ("rankscope", "polars", "numpy", "pandas", "pytrec_eval", "ranx",
                    "ir_measures"):
        name = "pytrec-eval-terrier" if package == "pytrec_eval" else package
        try:
            versions[package] = version(name)
        except PackageNotFoundError:
            versions[package] = "not installed"
    return {"cpu": cpu, "cores": str(os.cpu_count()), "memory": mem,
            "os": platform.platform(), "python": platform.python_version(), **versions}


STARTUP = ("rankscope --help", "import rankscope", "python -c pass")


def start_times(repeat: int = 7) -> dict[str, str]:
    """Median wall time of ``rankscope --help`` and of ``python -c 'import rankscope'``."""
    out = {}
    for label, cmd in (("rankscope --help", [*rankscope_cmd(), "--help"]),
                       ("import rankscope", [sys.executable, "-c", "import rankscope"]),
                       ("python -c pass", [sys.executable, "-c", "pass"])):
        times = [run_timed(cmd, 30)["wall"] for _ in range(repeat)]
        out[f"{label} (median of {repeat})"] = f"{statistics.median(times):.3f} s"
    return out


def _compile_rankscope() -> None:
    """Byte-compile rankscope once, as an installed package is.

    With PYTHONDONTWRITEBYTECODE set (as on some CI machines) every run would
    otherwise recompile the package's sources at start-up, which is not what a
    user's installation pays.
    """
    import compileall

    import rankscope

    compileall.compile_dir(str(Path(rankscope.__file__).parent), quiet=1)


def _shape_of(key: str) -> Shape:
    judged, ids, ties, order = key.split("-")
    return Shape(int(judged[1:]), ids, int(ties[1:]), order)


def _ours(group: list[dict[str, Any]]) -> dict[str, Any] | None:
    """rankscope's row of a cell (the slower of its two frame rows)."""
    mine = [r for r in group if r["tool"].startswith("rankscope") and "error" not in r]
    return max(mine, key=lambda r: r["wall"]) if mine else None


def _find(group: list[dict[str, Any]], tool: str) -> dict[str, Any] | None:
    for r in group:
        if r["tool"].split(":")[0] == tool and "error" not in r:
            return r
    return None


def cell_targets(group: list[dict[str, Any]]) -> list[tuple[str, float, float, bool]]:
    """The issue's targets that apply to one cell: (what, wall ratio, CPU ratio, met).

    A ratio is rankscope's over the other tool's; met is judged on wall time.
    """
    first = group[0]
    size, metric_set, mode = first["size"], first["set"], first["mode"]
    lines = matrix.LINES[size]
    ours = _ours(group)
    out: list[tuple[str, float, float, bool]] = []
    if ours is None:
        return out

    def ratio(tool: str, limit: float, what: str, key: str = "wall") -> None:
        theirs = _find(group, tool)
        if theirs is None:
            return
        wall = ours[key] / theirs[key]
        cpu = ours["cpu"] / theirs["cpu"] if key == "wall" else wall
        out.append((what, wall, cpu, wall <= limit))

    if mode == "e2e" and metric_set != "all_trec":
        if lines == 10**5:
            ratio("trec_eval", 1.5, "<= 1.5 x trec_eval")
            ratio("pytrec_eval", 0.5, "<= 0.5 x pytrec_eval")
        elif lines == 10**6:
            ratio("trec_eval", 0.2, "<= 0.2 x trec_eval")
            ratio("trec_eval", 2.0, "memory <= 2 x trec_eval", "peak_mb")
        elif lines >= 10**7:
            ratio("trec_eval", 0.1, "<= 0.1 x trec_eval")
            ratio("trec_eval", 1.0, "memory <= trec_eval", "peak_mb")
    elif mode == "e2e" and lines >= 10**6:
        ratio("trec_eval", 0.2, "all_trec <= 0.2 x trec_eval")
    elif mode != "e2e":
        ratio("ranx", 1.0, "< ranx (warm)")
        ratio("pytrec_eval", 0.2, "<= 0.2 x pytrec_eval")
    return out


def _groups(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    order: list[str] = []
    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["cell"] not in by:
            order.append(r["cell"])
            by[r["cell"]] = []
        by[r["cell"]].append(r)
    return [by[k] for k in order]


def targets_table(rows: list[dict[str, Any]], info: dict[str, str]) -> str:
    met: dict[str, list[bool]] = {}
    worst: dict[str, tuple[float, str]] = {}
    for group in _groups(rows):
        for what, wall, _, ok in cell_targets(group):
            exponent = len(str(matrix.LINES[group[0]["size"]])) - 1
            label = f"10^{exponent} lines, end to end: {what}"
            if group[0]["mode"] != "e2e":
                label = f"in memory: {what}"
            met.setdefault(label, []).append(ok)
            if label not in worst or wall > worst[label][0]:
                worst[label] = (wall, group[0]["cell"])
    lines = ["| target | cells met | worst ratio (cell) |", "| --- | ---: | --- |"]
    for label, oks in met.items():
        wall, cell = worst[label]
        lines.append(f"| {label} | {sum(oks)}/{len(oks)} | {wall:.3f} ({cell}) |")
    for key, value in info.items():
        if key.startswith(("rankscope --help", "import rankscope")):
            seconds = float(value.split()[0])
            lines.append(f"| {key.split(' (')[0]} < 0.1 s | {'1/1' if seconds < 0.1 else '0/1'}"
                         f" | {seconds:.3f} s |")
    return "\n".join(lines)


def matrix_table(rows: list[dict[str, Any]]) -> str:
    """One row per cell: rankscope's time, then its ratio to each tool, values checked."""
    tools = ["trec_eval", "pytrec_eval", "ranx", "ir_measures"]
    head = ("| size | shape | set | mode | rankscope s (CPU s, MB) | "
            + " | ".join(f"/ {t}" for t in tools) + " | targets | values |")
    out = [head, "|" + " --- |" * (7 + len(tools) - 1)]
    for group in _groups(rows):
        first = group[0]
        ours = _ours(group)
        mine = (f"{ours['wall']:.3f} ({ours['cpu']:.2f}, {ours['peak_mb']:.0f})"
                if ours else next((r["error"][:60] for r in group
                                   if r["tool"].startswith("rankscope")), "-"))
        ratios = []
        for tool in tools:
            theirs = _find(group, tool)
            err = next((r["error"][:40] for r in group
                        if r["tool"].split(":")[0] == tool and "error" in r), None)
            if ours and theirs:
                ratios.append(f"{ours['wall'] / theirs['wall']:.2f} "
                              f"(mem {ours['peak_mb'] / theirs['peak_mb']:.1f})")
            else:
                ratios.append(err or "-")
        verdicts = cell_targets(group)
        target = ", ".join(("met" if ok else "MISSED") + f" {what}"
                           for what, _, _, ok in verdicts) or "-"
        values = "; ".join(f"{r['tool'].split(':')[0]}: {r['agreement']}" for r in group
                           if r.get("agreement") not in (None, "reference"))
        out.append(f"| {first['size']} | {_shape_of(first['shape']).differs()} | "
                   f"{first['set']} | {first['mode']} | {mine} | " + " | ".join(ratios)
                   + f" | {target} | {values} |")
    return "\n".join(out)


def report(info: dict[str, str], rows: list[dict[str, Any]], readme: bool) -> int:
    text = "\n".join(
        ["### Machine", "", *[f"- {k}: {v}" for k, v in info.items()], "",
         "### Targets", "", targets_table(rows, info), "",
         "### The matrix", "",
         "Ratios are rankscope's wall time over the tool's (below 1: rankscope is faster);",
         "mem: the same for peak memory. In-memory rows time the call only.", "",
         matrix_table(rows)]
    )
    print("\n" + text)
    if readme:
        path = HERE / "README.md"
        page = path.read_text()
        start, end = "<!-- results -->", "<!-- /results -->"
        head, _, rest = page.partition(start)
        _, _, tail = rest.partition(end)
        path.write_text(f"{head}{start}\n{text}\n{end}{tail}")
    return 0


def _line(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"{row['cell']:40} {row['tool']:20} {row['error'][:200]}"
    return (f"{row['cell']:40} {row['tool']:20} wall {row['wall']:8.3f} s  "
            f"cpu {row['cpu']:8.3f} s  peak {row['peak_mb']:7.0f} MB  {row['agreement']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--matrix", action="store_true", help="every cell (the default)")
    which.add_argument("--quick", action="store_true", help="the quick subset (< 2 minutes)")
    parser.add_argument("--only", default=None,
                        help="regular expression on cell keys (size/shape/set/mode)")
    parser.add_argument("--list", action="store_true", help="list the cells; run nothing")
    parser.add_argument("--tools", default=None, help="comma-separated subset of tools")
    parser.add_argument("--trec-eval", default=None, help="trec_eval binary (default: PATH)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs per tool and cell, best kept (default 2 quick, 1 matrix)")
    parser.add_argument("--repeat-memory", action="store_true",
                        help="repeat in-memory cells too (default: end-to-end cells only)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", default=str(HERE / "results.json"), help="results file")
    parser.add_argument("--readme", action="store_true",
                        help="also write the results into benchmarks/README.md")
    parser.add_argument("--from-json", default=None,
                        help="render (and with --readme, record) saved results, several "
                        "files comma-separated; run nothing")
    args = parser.parse_args()
    if args.from_json:  # several files (comma-separated): one table, each run's machine notes
        parts = [json.loads(Path(p).read_text()) for p in args.from_json.split(",")]
        info = dict(parts[0]["machine"])
        for i, part in enumerate(parts[1:], 2):
            info.update({f"{k} (part {i})": v for k, v in part["machine"].items()
                         if k.startswith(("command", "load average", "measuring"))})
            for k, v in part["machine"].items():  # start-up: the quietest part's median
                if k.startswith(STARTUP) and float(v.split()[0]) < float(info[k].split()[0]):
                    info[k] = v
        merged: dict[tuple[str, str], dict[str, Any]] = {}  # a later file's row of a cell wins
        for part in parts:
            merged.update({(r["cell"], r["tool"]): r for r in part["rows"]})
        return report(info, list(merged.values()), args.readme)
    cells = matrix.quick() if args.quick else matrix.full()
    if args.only:
        cells = [c for c in cells if re.search(args.only, c.key)]
    if args.list:
        print("\n".join(c.key for c in cells))
        print(f"{len(cells)} cells")
        return 0
    if args.repeat is None:
        args.repeat = 2 if args.quick else 1
    _compile_rankscope()
    trec_eval = args.trec_eval or shutil.which("trec_eval")
    for candidate in ("/work/tools/trec_eval", "/work/tools/bin/trec_eval"):
        if trec_eval is None and Path(candidate).is_file():
            trec_eval = candidate
    chosen = args.tools.split(",") if args.tools else None
    info = machine()
    info["trec_eval"] = trec_eval or "not found (skipped)"
    info["command"] = "python benchmarks/run.py " + " ".join(sys.argv[1:])
    info["load average (1, 5, 15 min) at start"] = ", ".join(
        f"{x:.2f}" for x in os.getloadavg())
    info.update(start_times())
    print("# machine\n" + "\n".join(f"- {k}: {v}" for k, v in info.items()), flush=True)
    if chosen is None or "ranx" in chosen:  # warm numba's on-disk cache once
        q0, r0 = ensure_data(HERE / "data", 50, 10, args.seed, BASE)
        for metric_set in ("cut", "nocut"):
            subprocess.run([sys.executable, str(HERE / "workers.py"), "ranx", "e2e", metric_set,
                            str(q0), str(r0)], capture_output=True)
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for cell in cells:
        tools = matrix.tools_for(cell, args.quick)
        if chosen is not None:
            tools = [t for t in tools if t in chosen]
        for row in measure(cell, tools, trec_eval, args):
            rows.append(row)
            print(_line(row), flush=True)
    info["load average (1, 5, 15 min) at end"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    info["measuring took"] = f"{time.perf_counter() - started:.0f} s"
    Path(args.json).write_text(json.dumps({"machine": info, "rows": rows}, indent=1))
    return report(info, rows, args.readme)


if __name__ == "__main__":
    sys.exit(main())
