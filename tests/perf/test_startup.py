"""Start-up: `import rankscope` and `rankscope --help` import only what they need.

Timing a start-up on a shared machine is noise; what it costs is decided by
what gets imported, which is exact: each check runs a fresh interpreter and
lists the modules it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("polars", "numpy", "pandas", "asyncio", "ssl", "scipy", "pyarrow")


def _modules_after(code: str) -> tuple[list[str], str]:
    probe = (f"import sys, io, contextlib\nout = io.StringIO()\n"
             f"with contextlib.redirect_stdout(out):\n"
             f"    try:\n{''.join('        ' + line + chr(10) for line in code.splitlines())}"
             f"    except SystemExit:\n        pass\n"
             f"print(__import__('json').dumps([sorted(sys.modules), out.getvalue()]))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    modules, printed = json.loads(done.stdout.strip().splitlines()[-1])
    return modules, printed


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in HEAVY]


def test_import_rankscope_loads_no_heavy_library() -> None:
    modules, _ = _modules_after("import rankscope")
    assert _heavy(modules) == []


def test_help_imports_no_command_module_and_lists_every_command() -> None:
    from rankscope.cli.main import COMMANDS

    modules, printed = _modules_after("from rankscope.cli.main import main\nmain(['--help'])")
    assert _heavy(modules) == []
    loaded = [m for m in modules if m.startswith("rankscope.cli.")]
    assert set(loaded) <= {"rankscope.cli.main", "rankscope.cli.parsing"}, loaded
    for name, (_, help_text) in COMMANDS.items():
        assert name in printed
        assert help_text.split()[0] in printed


def test_evaluate_with_trec_qrels_skips_the_judgments_package(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    run.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    modules, printed = _modules_after(
        "from rankscope.cli.main import main\n"
        f"main(['evaluate', {str(qrels)!r}, {str(run)!r}, '-m', 'P@1', '-f', 'json'])")
    assert json.loads(printed)["mean"]["P@1"] == 1.0  # d1 is relevant and ranked first
    assert not [m for m in modules if m.startswith("rankscope.judgments")]


def test_evaluate_compare_and_report_read_the_first_run_while_their_engine_loads(
        tmp_path: Path) -> None:
    """The first run file's reading begins before the modules that measure and compare
    are imported (they load beside it); which comes first is exact, not timed: a module
    finder notes, when each is looked for, whether the reading thread exists."""
    qrels, a, b = tmp_path / "qrels", tmp_path / "a", tmp_path / "b"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    a.write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n")
    b.write_text("1 Q0 b 1 2.0 s\n1 Q0 a 2 1.0 s\n")
    page = tmp_path / "report.html"
    # report with its default metrics (no -m): they are known before the page's module loads
    for command, module, extra in (
            ("evaluate", "rankscope.engine.evaluate", ["-m", "P@1", "-f", "json"]),
            ("compare", "rankscope.compare.comparison", ["-m", "P@1", "-f", "json"]),
            ("report", "rankscope.render.html_report", ["-o", str(page)])):
        code = (
            "import importlib.abc, threading, warnings\n"
            "warnings.simplefilter('ignore')\n"
            "seen = []\n"
            "class Finder(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            f"        if name == {module!r}:\n"
            "            seen.append(any(t.name.startswith('rankscope-read')\n"
            "                            for t in threading.enumerate()))\n"
            "sys.meta_path.insert(0, Finder())\n"
            "from rankscope.cli.main import main\n"
            f"status = main([{command!r}, {str(qrels)!r}, {str(a)!r}, {str(b)!r}, *{extra!r}])\n"
            "sys.stderr.write(f'{status} {seen}')\n"
        )
        probe = f"import sys\n{code}"
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              check=False, timeout=60)
        assert done.stderr.splitlines()[-1] == "0 [True]", (command, done.stderr)


def test_compare_imports_neither_the_collections_module_nor_difflib(tmp_path: Path) -> None:
    # asked of every input path, whether it names an ir_datasets collection is answered
    # without importing rankscope.data.irds; "did you mean" hints import difflib when needed
    qrels, run1, run2 = tmp_path / "qrels.txt", tmp_path / "a.txt", tmp_path / "b.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    run1.write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n")
    run2.write_text("q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\n")
    modules, printed = _modules_after(
        "from rankscope.cli.main import main\n"
        f"main(['compare', {str(qrels)!r}, {str(run1)!r}, {str(run2)!r}, '-m', 'P@1',"
        " '-f', 'json'])")
    runs = json.loads(printed)["runs"]
    # a ranks the relevant d1 first, b the non-relevant d2
    assert (runs["a"]["mean"]["P@1"], runs["b"]["mean"]["P@1"]) == (1.0, 0.0)
    assert "rankscope.data.irds" not in modules
    assert "difflib" not in modules
    help_modules, _ = _modules_after("from rankscope.cli.main import main\nmain(['--help'])")
    assert "difflib" not in help_modules


def test_a_usage_error_still_suggests_the_close_choice() -> None:
    _, printed = _modules_after(
        "import sys\nsys.stderr = sys.stdout\nfrom rankscope.cli.main import main\n"
        "main(['evaluate', 'q', 'r', '--ci', 'nevr'])")
    assert "did you mean 'never'?" in printed


def test_report_without_plots_loads_no_svg_writer(tmp_path: Path) -> None:
    # the SVG writer (and its box plots' statistics) is loaded only where a figure is
    # drawn: `report --no-plots` writes tables alone (issue 30 section 3: its start-up)
    qrels, run1, run2 = tmp_path / "qrels.txt", tmp_path / "a.txt", tmp_path / "b.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    run1.write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n")
    run2.write_text("q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\n")
    pages = {}
    for flags in (["--no-plots"], []):
        page = tmp_path / f"report{len(flags)}.html"
        modules, _ = _modules_after(
            "from rankscope.cli.main import main\n"
            f"main(['report', {str(qrels)!r}, {str(run1)!r}, {str(run2)!r}, '-m', 'P@1',"
            f" '-o', {str(page)!r}, *{flags!r}])")
        svg = {"rankscope.render.svg", "rankscope.render.box_stats"} & set(modules)
        pages[bool(flags)] = (svg, page.read_text())
    svg, text = pages[True]
    assert svg == set(), svg
    assert "<svg" not in text and "1.0000" in text  # a's P@1 in the tables
    svg, text = pages[False]  # with plots the writer is loaded and draws
    assert svg == {"rankscope.render.svg", "rankscope.render.box_stats"}
    assert "<svg" in text
