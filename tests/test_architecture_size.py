"""Size limits that keep modules readable: no module over 700 lines, no function over 80.

A function may stay longer only with a reason recorded here, where a reviewer sees it.
"""
from __future__ import annotations

import ast
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 80

# "path::qualified.name" -> why it stays long.
LONG_FUNCTIONS_WITH_REASON: Dict[str, str] = {
    "alfred_task/gen/language.py::_steps": (
        "one branch per high-level action sharing phrasing state and one random stream; the "
        "order of draws fixes the generated annotations byte for byte, so splitting it would "
        "thread that state through many helpers for no clarity gain"),
    "alfred_task/env/goal_conditions.py::goal_conditions_met": (
        "one flat branch per ALFRED task type, mirroring ALFRED's goal-condition counting so the "
        "two can be compared side by side"),
}


def _python_files() -> List[Path]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / f for f in out if (ROOT / f).is_file()]


def _functions(tree: ast.AST, prefix: str = "") -> List[Tuple[str, int]]:
    found = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                found.append((name, node.end_lineno - node.lineno + 1))
            found += _functions(node, name + ".")
        else:
            found += _functions(node, prefix)
    return found


def test_python_files_are_found():
    files = {p.relative_to(ROOT).as_posix() for p in _python_files()}
    assert "tests/test_architecture_size.py" in files and "thor_lite/controller.py" in files


def test_no_module_over_700_lines():
    long = {p.relative_to(ROOT).as_posix(): n for p in _python_files()
            if (n := p.read_text().count("\n")) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_function_over_80_lines_without_reason():
    long = {}
    for p in _python_files():
        rel = p.relative_to(ROOT).as_posix()
        for name, n in _functions(ast.parse(p.read_text())):
            if n > MAX_FUNCTION_LINES:
                long[f"{rel}::{name}"] = n
    unexplained = {k: n for k, n in long.items() if k not in LONG_FUNCTIONS_WITH_REASON}
    assert not unexplained, f"functions over {MAX_FUNCTION_LINES} lines without a reason: {unexplained}"
    stale = sorted(set(LONG_FUNCTIONS_WITH_REASON) - set(long))
    assert not stale, f"reasons listed for functions that are no longer long (remove them): {stale}"
