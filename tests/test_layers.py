"""The package's layers point one way, and the registries are whole on import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "rankscope"

# A module of the left-hand package may not import the right-hand ones.
FORBIDDEN = {
    "errors": ("data", "metrics", "engine", "trec_eval", "cli", "judgments", "compare"),
    "data": ("metrics", "engine", "trec_eval", "cli", "judgments", "compare"),
    "metrics": ("engine", "trec_eval", "cli", "judgments", "compare"),
    "engine": ("trec_eval", "cli", "judgments", "compare"),
}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_lower_layers_never_import_upper_ones():
    bad = []
    for layer, above in FORBIDDEN.items():
        files = [PACKAGE / "errors.py"] if layer == "errors" else sorted(
            (PACKAGE / layer).rglob("*.py"))
        for path in files:
            for name in _imports(path):
                parts = name.split(".")
                if parts[0] == "rankscope" and len(parts) > 1 and parts[1] in above:
                    bad.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert bad == []


def test_registries_are_complete_once_metrics_is_imported():
    # A fresh interpreter: nothing parsed yet, the trec_eval command never imported.
    code = (
        "import sys, rankscope.metrics, rankscope.engine.kernels as k\n"
        "from rankscope.metrics import make_metric\n"
        "from rankscope.metrics.base import FAMILIES\n"
        "m = make_metric('infAP')\n"
        "assert 'infAP' in FAMILIES and 'infAP' in k.KERNELS and 'gm_map' in k.KERNELS\n"
        "assert 'P' in k.NULL_KERNELS\n"
        "assert not any(n.startswith('rankscope.trec_eval') for n in sys.modules), 'trec_eval'\n"
        "print(m.name)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "infAP"


def test_every_qrels_measure_of_trec_eval_has_a_computation():
    # each value trec_eval prints for a qrels measure is a metric of the one kernel table
    from rankscope.data.trec_catalog import MEASURES
    from rankscope.engine.kernels import KERNELS
    from rankscope.trec_eval.catalog import bind, metrics_of

    wanted = [m for m in MEASURES if m.source == "qrels" and m.value != "string"]
    for measure in wanted:
        metrics = metrics_of(bind(measure, None), 1, 0)
        assert metrics, measure.name
        assert all(m.family in KERNELS for m in metrics), measure.name
