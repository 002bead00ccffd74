"""Package boundaries: the task packages share `backends`, not each other or thor_lite.

`rearrange` and `alfred_task` must stay separable, and a real-THOR run must not drag the
embedded simulator along (its import cost and its globals). The static check reads every
import in the source, lazy ones inside functions included; the runtime check imports
everything in a fresh interpreter and asks the real backend for a controller.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
TASK_PACKAGES = ("rearrange", "alfred_task")


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _imports(path: Path) -> Iterator[Tuple[str, int, Tuple[str, ...]]]:
    """(absolute module, line, enclosing function names) for every import in `path`.

    Covers `import x`, `from x import y`, relative imports (resolved against the file's
    package) and `importlib.import_module("x")` / `__import__("x")` with a literal name.
    """
    tree = ast.parse(path.read_text(), filename=str(path))
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def visit(node: ast.AST, scope: Tuple[str, ...]) -> Iterator[Tuple[str, int, Tuple[str, ...]]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, scope
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, node.lineno, scope
            for alias in node.names:  # `from . import x` may name a submodule
                yield f"{target}.{alias.name}", node.lineno, scope
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                yield node.args[0].value, node.lineno, scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope = scope + (node.name,)
        for child in ast.iter_child_nodes(node):
            yield from visit(child, scope)

    yield from visit(tree, ())


def _top(module: str) -> str:
    return module.split(".")[0]


def _py_files(package: str) -> List[Path]:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"no sources found for {package}"
    return files


def test_task_packages_do_not_import_each_other_or_thor_lite() -> None:
    forbidden = {
        "rearrange": {"alfred_task", "thor_lite"},
        "alfred_task": {"rearrange", "thor_lite"},
        "baseline_configs": {"thor_lite"},
        "allenact_ext": {"thor_lite", "baseline_configs"},
    }
    bad = []
    for package, banned in forbidden.items():
        for path in _py_files(package):
            for target, line, _ in _imports(path):
                if _top(target) in banned:
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not bad, "imports across package boundaries:\n" + "\n".join(sorted(set(bad)))


LIBRARY_PACKAGES = (
    "common",
    "backends",
    "thor_lite",
    "rearrange",
    "alfred_task",
    "allenact_ext",
    "baseline_configs",
)


def test_library_never_imports_experiments_benchmarks_or_scripts() -> None:
    """Studies and tools build on the library, never the other way round."""
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for package in LIBRARY_PACKAGES
        for path in _py_files(package)
        for target, line, _ in _imports(path)
        if _top(target) in ("experiments", "benchmarks", "scripts")
    ]
    assert not bad, "library imports a study or tool:\n" + "\n".join(sorted(set(bad)))


def test_backends_load_simulators_only_on_demand() -> None:
    """thor_lite only inside make_controller; ai2thor never at module level."""
    bad = []
    for path in _py_files("backends"):
        for target, line, scope in _imports(path):
            where = f"{path.relative_to(ROOT)}:{line} imports {target}"
            if _top(target) == "thor_lite" and "make_controller" not in scope:
                bad.append(f"{where} outside make_controller")
            if _top(target) == "ai2thor" and not scope:
                bad.append(f"{where} at import time")
    assert not bad, "\n".join(sorted(set(bad)))


# Modules skipped by the runtime walk, with the reason. Empty: every module imports here.
SKIP: dict = {}

_PROBE = r"""
import importlib, json, pkgutil, sys

skip = set(json.loads(sys.argv[1]))
first_culprit = None
modules = []
for pkg in ("rearrange", "alfred_task", "allenact_ext", "baseline_configs"):
    root = importlib.import_module(pkg)
    names = [pkg] + [m.name for m in pkgutil.walk_packages(root.__path__, pkg + ".")]
    for name in names:
        if name in skip:
            continue
        importlib.import_module(name)
        modules.append(name)
        if first_culprit is None and "thor_lite" in sys.modules:
            first_culprit = name

from backends import ThorUnavailableError, check_thor
from alfred_task.env.environment import AlfredEnv
from rearrange.environment import RearrangeTHOREnvironment

try:
    check_thor({})
    thor_here = True  # a machine with the Unity build and a display: it really starts
except ThorUnavailableError:
    thor_here = False
outcomes = {}
for label, make in (("rearrange", lambda: RearrangeTHOREnvironment(backend="thor")),
                    ("alfred", lambda: AlfredEnv(backend="thor"))):
    try:
        env = make()
    except ThorUnavailableError:
        outcomes[label] = "refused"
    else:
        env.controller.stop()
        outcomes[label] = "started"
    if first_culprit is None and "thor_lite" in sys.modules:
        first_culprit = "backend='thor' in " + label
print(json.dumps({
    "modules": modules, "thor_here": thor_here, "outcomes": outcomes, "culprit": first_culprit,
    "thor_lite": sorted(m for m in sys.modules if m == "thor_lite" or m.startswith("thor_lite.")),
}))
"""


def test_real_thor_run_never_imports_thor_lite() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(sorted(SKIP))],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {
        "rearrange.environment",
        "alfred_task.env.environment",
        "allenact_ext.compat",
        "baseline_configs.rearrange_base",
    } <= set(report["modules"])
    expected = "started" if report["thor_here"] else "refused"
    assert report["outcomes"] == {"rearrange": expected, "alfred": expected}
    assert report["thor_lite"] == [], (
        f"thor_lite loaded (first after {report['culprit']}): {report['thor_lite']}"
    )


def _cycles(package: str, depth: int = 0) -> List[List[str]]:
    """Import cycles between `package`'s modules (Tarjan's strongly connected components); with
    `depth`, names are cut to that many parts first (2: subpackages as one node)."""

    def cut(name: str) -> str:
        return ".".join(name.split(".")[:depth]) if depth else name

    graph = {cut(_module_name(p)): set() for p in _py_files(package)}
    for path in _py_files(package):
        src = cut(_module_name(path))
        for target, _, _ in _imports(path):
            target = cut(target)
            while target and target not in graph:
                target = target.rpartition(".")[0]
            if (
                target and target != src and not src.startswith(target + ".")
            ):  # a package's own __init__
                graph[src].add(target)
    index: dict = {}
    low: dict = {}
    stack: List[str] = []
    found: List[List[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            comp = []
            while True:
                top = stack.pop()
                comp.append(top)
                if top == node:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_alfred_task_has_no_import_cycles() -> None:
    """Stages import downhill only; lazy imports inside functions count as edges too (a cycle
    hidden behind a function-level import is still a cycle)."""
    assert _cycles("alfred_task") == []
    assert _cycles("alfred_task", depth=2) == []  # subpackages (models, planning) as one node


def test_thor_lite_has_no_import_cycles() -> None:
    """thor_lite's modules import downhill only: every import counts, lazy ones inside
    functions and annotation-only ones included."""
    assert _cycles("thor_lite") == []
