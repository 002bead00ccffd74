"""pyproject.toml: dependencies come from requirements.txt, console scripts name real CLIs."""

from __future__ import annotations

import importlib
import inspect
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _requirements() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip()]


def test_dependencies_are_the_requirements_pins():
    project = PYPROJECT["project"]
    assert "dependencies" not in project and "dependencies" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["dependencies"] == {
        "file": ["requirements.txt"]
    }
    reqs = _requirements()
    assert reqs, "requirements.txt lists nothing"
    unpinned = [r for r in reqs if "==" not in r]
    assert not unpinned, f"requirements.txt entries without an exact pin: {unpinned}"


def test_setuptools_reads_the_same_dependencies(tmp_path):
    """What an install of the project would require equals requirements.txt, line for line."""
    from setuptools.config.pyprojecttoml import read_configuration

    config = read_configuration(ROOT / "pyproject.toml", expand=True, ignore_option_errors=False)
    assert config["project"]["dependencies"] == _requirements()


def test_console_scripts_point_at_cli_mains():
    scripts = PYPROJECT["project"]["scripts"]
    assert {"rearrange-eval", "alfred-eval", "alfred-gen", "thor-lite-view"} <= set(scripts)
    for name, target in scripts.items():
        module, func = target.split(":")
        fn = getattr(importlib.import_module(module), func)
        assert callable(fn), name
        params = inspect.signature(fn).parameters.values()
        assert all(p.default is not inspect.Parameter.empty for p in params), (
            f"{name}: main needs no arguments"
        )
