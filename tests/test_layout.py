"""The package layout draws the data flow; this test keeps it honest, from the imports.

Layers, top to bottom: front ends (gui, cli) -> loop -> stages (ears, brain, voice, actions) ->
catalog -> the host (app.system: CPUs, folders, logs, the sound server). A module may import its
own package or a lower layer; the stages never import each other; only the front ends import Qt; no
import cycles (imports inside functions count too: a lazy cycle is still a cycle to untangle).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "app"
FRONT_ENDS = {"gui", "cli"}
LAYER = {
    "gui": 4,
    "cli": 4,
    "loop": 3,
    "ears": 2,
    "brain": 2,
    "voice": 2,
    "actions": 2,
    "catalog": 1,
    "system": 0,
}
QT = ("PySide6", "shiboken6")


def _modules() -> dict[str, Path]:
    mods = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = path
    return mods


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every module name this file imports (anywhere in it), resolved to app modules or externals."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "app" else None


def test_every_package_is_in_a_layer():
    packages = {_package(m) for m in MODULES} - {None, "__main__"}
    assert packages <= set(LAYER), f"new package without a layer: {packages - set(LAYER)}"


def test_dependencies_point_down():
    wrong = []
    for module, imported in GRAPH.items():
        src = _package(module)
        if src not in LAYER:
            continue
        for target in imported:
            dst = _package(target)
            if dst is None or dst == src or dst not in LAYER:
                continue
            sideways_ok = src in FRONT_ENDS
            if LAYER[dst] > LAYER[src] or (LAYER[dst] == LAYER[src] and not sideways_ok):
                wrong.append(f"{module} -> {target}")
    assert not wrong, "imports that point up or sideways:\n" + "\n".join(sorted(wrong))


def test_only_front_ends_import_qt():
    wrong = [
        f"{module} -> {target}"
        for module, imported in GRAPH.items()
        for target in imported
        if target.startswith(QT) and _package(module) not in FRONT_ENDS
    ]
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH[v]:
            if w not in GRAPH or w == v:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_the_checks_see_imports():
    """Guards the guard: the parser must find the imports it is meant to judge."""
    assert "app.loop.assistant" in GRAPH["app.gui.bridge"]
    assert "app.brain.brain" in GRAPH["app.loop.assistant"]
    assert any(t.startswith("PySide6") for t in GRAPH["app.gui.main_window"])
    assert "app.cli.chat_voice" in GRAPH["app.cli.chat"]  # an import inside a function
    assert "app.system.paths" in GRAPH["app.system.logs"]  # inside a package, the same layer


def test_no_module_sits_loose_in_app():
    """Every module lives in the package of its layer (the top holds only the entry points)."""
    loose = {p.name for p in ROOT.glob("*.py")} - {"__init__.py", "__main__.py"}
    assert not loose, f"modules outside a package: {sorted(loose)}"


def test_no_module_is_over_400_lines():
    """One job per module: a file that grows past 400 lines is split by job (issue #30)."""
    repo = ROOT.parent
    files = [p for d in ("app", "bench", "tests", "packaging") for p in (repo / d).rglob("*.py")]
    assert len(files) > 100  # the guard sees the tree
    long = {
        str(p.relative_to(repo)): n
        for p in files
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert not long, f"modules over 400 lines: {long}"
