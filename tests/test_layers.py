"""The package's layers point one way, nothing imports in a circle, and the registries are
whole on import.

The order is :data:`LAYERS`, written once here and shown in docs/architecture.md (checked
below). Every import counts: at module level, inside a function (run time), and under
``TYPE_CHECKING`` (a type named from above is still a dependency on it; such imports are
left out only of the cycle check, as they never run).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "rankscope"

LAYERS: list[tuple[str, ...]] = [
    ("__main__", "judge"),
    ("cli",),
    ("app",),
    ("services",),
    ("render",),
    ("llm_judge", "spark", "trec_eval"),
    ("store",),
    ("search",),
    ("compare",),
    ("fusion",),
    ("judgments",),
    ("engine",),
    ("result",),
    ("metrics",),
    ("data",),
    ("c_heap", "display", "outbound", "progress", "retry", "spread", "workers", "_aliases",
     "_lazy", "_version"),
    ("errors",),
]
"""Top first. A module may import its own package and the packages of lower lines only
(not a sibling on its own line). ``rankscope/__init__.py``, the public facade, is above
them all and imported by none of them."""

DOOR = "rankscope.display"
"""The one door up: result objects show themselves (``repr``, ``_repr_html_``,
``render()``, ``plot_*()``) through this module, whose functions import ``render/`` when
called. It may import ``render`` at run time, inside its functions only, and name the
types it hands over for type checking; nothing else below ``render/`` imports it."""

@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported module (a package's __init__ when a name of it is imported)
    where: str  # "module", "function" or "typing"
    line: int


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _existing(name: str) -> str | None:
    """``name`` or its closest enclosing module of the package."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _typing_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _walk(node: ast.AST, where: str) -> Iterator[tuple[ast.AST, str]]:
    for child in ast.iter_child_nodes(node):
        inner = where
        if _typing_block(child):
            inner = "typing"
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and \
                where == "module":
            inner = "function"
        yield child, inner
        yield from _walk(child, inner)


def _imports_of(module: str) -> list[Import]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node, where in _walk(ast.parse(path.read_text()), "module"):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.append(submodule if submodule in MODULES else base)
        for target in targets:
            if target == "rankscope" or target.startswith("rankscope."):
                resolved = target if target == "rankscope" else _existing(target)
                if resolved is not None and resolved != module:
                    found.append(Import(module, resolved, where, node.lineno))
    return found


IMPORTS: list[Import] = [imp for module in MODULES for imp in _imports_of(module)]


def _layer(module: str) -> str | None:
    """The entry of LAYERS a module belongs to (None: the facade, ``rankscope`` itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


RANK = {name: i for i, line in enumerate(LAYERS) for name in line}


def _where(imp: Import) -> str:
    return f"{imp.source} imports {imp.target} ({imp.where}, line {imp.line})"


def test_every_package_and_top_module_has_a_place_in_the_order():
    placed = {_layer(m) for m in MODULES} - {None}
    assert sorted(placed - set(RANK)) == [], "add it to LAYERS (and docs/architecture.md)"
    assert sorted(set(RANK) - placed) == [], "LAYERS names something that no longer exists"


def test_imports_point_down_the_layers():
    bad = []
    for imp in IMPORTS:
        mine, theirs = _layer(imp.source), _layer(imp.target)
        if mine is None or mine == theirs:
            continue
        if theirs is None:
            bad.append(f"{_where(imp)}: the public facade; import the defining module")
        elif imp.source == DOOR and ((theirs == "render" and imp.where == "function")
                                     or imp.where == "typing"):
            continue
        elif RANK[theirs] <= RANK[mine]:
            kind = "a sibling on its own line" if RANK[theirs] == RANK[mine] else "upward"
            bad.append(f"{_where(imp)}: {kind}")
    assert bad == []


def test_the_door_up_to_render_is_one_module_of_thin_functions():
    # Nothing but the door reaches render/ from below; each of its functions imports
    # render/ and hands the object over, without formatting anything itself.
    below = {name for line in LAYERS[RANK["render"] + 1:] for name in line}
    reaching = {imp.source for imp in IMPORTS if _layer(imp.target) == "render"
                and _layer(imp.source) in below and imp.where != "typing"}
    assert reaching == {DOOR}
    tree = ast.parse(MODULES[DOOR].read_text())
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert functions
    for fn in functions:
        body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) else fn.body  # the docstring
        assert isinstance(body[0], ast.ImportFrom), fn.name
        assert body[0].module is not None and body[0].module.startswith("rankscope.render.")
        assert len(body) <= 4, f"{fn.name}: a door delegates, render/ formats"


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.add(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(frozenset(members))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _run_time_graph(key: object) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for imp in IMPORTS:
        if imp.where == "typing" or imp.source == DOOR:
            continue  # never runs / the door, up by design
        # a module importing a name of its own package's __init__ (which imported it)
        if imp.target == imp.source.rpartition(".")[0]:
            continue
        a, b = key(imp.source), key(imp.target)  # type: ignore[operator]
        if a is not None and b is not None and a != b:
            graph.setdefault(a, set()).add(b)
    return graph


def test_no_module_imports_itself_in_a_circle():
    assert [sorted(c) for c in _cycles(_run_time_graph(lambda m: m))] == []


def test_no_package_imports_itself_in_a_circle():
    assert _cycles(_run_time_graph(_layer)) == []


def test_the_architecture_page_shows_this_order():
    page = (ROOT / "docs" / "architecture.md").read_text()
    marker = "<!-- the layers, top first: tests/test_layers.py checks this block -->"
    assert marker in page
    block = page.split(marker, 1)[1].split("```", 2)[1].removeprefix("text").strip("\n")
    shown = [tuple(line.split()) for line in block.splitlines()]
    assert shown == LAYERS


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
