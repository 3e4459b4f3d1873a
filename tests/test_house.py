"""The house (issue 30), read from the code's own imports: no import circle between modules, no
module loose at app/'s root, no module over 500 lines, and the import-linter contracts of
pyproject.toml kept.

The graph counts every import statement, those inside functions and under TYPE_CHECKING too: a
circle that only closes at run time, or only for the type checker, is still a circle a reader has
to untangle. The resolution rule is /work/shared/tools/house.py's: ``from a.b import c`` is an
import of ``a.b`` and of ``a.b.c`` when that is a module; a name that is not a module counts as
an import of the closest enclosing module; a module's own packages are not edges out of it.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.conftest import ROOT

TOPS = ("app", "widgets")
MAX_LINES = 500

Graph = dict[str, set[str]]


def modules_of(root: Path, tops: Iterable[str] = TOPS) -> dict[str, Path]:
    """Every module under the given top-level packages, by dotted name (a package is its __init__)."""
    mods: dict[str, Path] = {}
    for top in tops:
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    return [prefix] + [f"{prefix}.{alias.name}" for alias in node.names]


def import_graph(root: Path, tops: Iterable[str] = TOPS) -> Graph:
    """Module -> the modules of the same tree it imports, from every import statement in it."""
    mods = modules_of(root, tops)
    graph: Graph = {m: set() for m in mods}
    for module, path in mods.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _targets(module, is_package, node):
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != module and not module.startswith(target + "."):
                    graph[module].add(target)
    return graph


def knots(graph: Graph) -> list[set[str]]:
    """The strongly connected parts of the graph of more than one module: each holds a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan; the graph is a few hundred modules deep at most
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            knot = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                knot.add(w)
                if w == v:
                    break
            if len(knot) > 1:
                found.append(knot)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def cycles(graph: Graph) -> list[list[str]]:
    """One circle per knot of the graph, as a path that returns to its start."""
    return sorted(_circle_through(graph, knot) for knot in knots(graph))


def _circle_through(graph: Graph, knot: set[str]) -> list[str]:
    """The shortest path from the knot's first module back to itself, staying inside the knot."""
    start = min(knot)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for v in frontier:
            for w in sorted(graph[v] & knot):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if w not in came_from:
                    came_from[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"not a knot: {sorted(knot)}")


def named_circles(graph: Graph) -> str:
    """Each knot as one circle through it, and the knot's other modules when it has more."""
    lines = []
    for knot in knots(graph):
        circle = _circle_through(graph, knot)
        others = sorted(knot - set(circle))
        lines.append(" -> ".join(circle) + (f"   (the same knot holds {', '.join(others)})" if others else ""))
    return "\n".join(sorted(lines))


# --- the finder itself, on a small tree (so it is known to bite while the house's own test waits) ---


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_graph_counts_lazy_type_checking_and_relative_imports(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/a/__init__.py": "from .one import thing\n",
            "app/a/one.py": "def f():\n    from app.b import two\n",
            "app/a/three.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..b.two import T\n",
            "app/b/__init__.py": "",
            "app/b/two.py": "import json\nfrom app.a import one\nfrom app.b import missing_name\n",
        },
    )
    graph = import_graph(tmp_path, ("app",))
    assert graph["app.a"] == {"app.a.one"}
    assert graph["app.a.one"] == {"app.b", "app.b.two"}  # the lazy import, and the package face it runs
    assert graph["app.a.three"] == {"app.b.two"}  # TYPE_CHECKING, relative
    assert graph["app.b.two"] == {"app.a", "app.a.one"}  # json is not ours; app.b is its own package
    assert cycles(graph) == [["app.a", "app.a.one", "app.b.two", "app.a"]]  # app.b.two runs app.a's face


def test_a_tree_without_circles_has_none(tmp_path: Path) -> None:
    _write(tmp_path, {"app/__init__.py": "", "app/x.py": "from app import y\n", "app/y.py": "import app\n"})
    assert cycles(import_graph(tmp_path, ("app",))) == []


def test_the_house_graph_sees_the_code() -> None:
    graph = import_graph(ROOT)
    assert "app.stream.usage" in graph and "widgets.usage_line" in graph
    assert "app.stream.usage" in graph["widgets.usage_line"]


# --- the house ---


def test_no_import_circle_between_modules() -> None:
    graph = import_graph(ROOT)
    assert not knots(graph), f"import circles (lazy and TYPE_CHECKING imports count too):\n{named_circles(graph)}"


def test_no_module_loose_at_the_root_of_app() -> None:
    loose = sorted(p.name for p in (ROOT / "app").glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert loose == [], f"modules at app/'s root; give each a room: {loose}"


def test_no_module_over_500_lines() -> None:
    sizes = {m: len(p.read_text().splitlines()) for m, p in modules_of(ROOT).items()}
    over = sorted(((n, m) for m, n in sizes.items() if n > MAX_LINES), reverse=True)
    assert over == [], "modules over 500 lines: " + ", ".join(f"{m} {n}" for n, m in over)


def _lint_imports() -> str | None:
    beside = Path(sys.executable).parent / "lint-imports"
    return str(beside) if beside.exists() else shutil.which("lint-imports")


def test_the_import_contracts_are_kept() -> None:
    command = _lint_imports()
    if command is None:
        pytest.skip(reason="lint-imports is not installed (import-linter, in the test extras and requirements.lock)")
    result = subprocess.run([command, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
