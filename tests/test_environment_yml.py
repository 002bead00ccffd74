"""environment.yml is the conda form of scripts/setup_env.sh: same pins, same python, and the
--no-deps data packages plus the editable install in its post-create step."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Dict

import yaml

ROOT = Path(__file__).resolve().parents[1]
POST_CREATE = "scripts/conda_post_create.sh"


def pins(path: Path) -> Dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{path.name}: {line!r} is not pinned with =="
            out[name.strip().lower()] = version.strip()
    return out


def env() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def pip_section() -> list:
    sections = [d["pip"] for d in env()["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(sections) == 1, "environment.yml needs exactly one pip section"
    return sections[0]


def test_pip_pins_equal_requirements_txt():
    entries = [e for e in pip_section() if not e.startswith("--")]
    assert not [e for e in entries if e.startswith("-")], (
        "use explicit pins, not -r/-e, in the pip section"
    )
    yml = {}
    for e in entries:
        name, _, version = e.partition("==")
        assert version, f"environment.yml: {e!r} is not pinned with =="
        yml[name.strip().lower()] = version.strip()
    req = pins(ROOT / "requirements.txt")
    missing = {k: v for k, v in req.items() if k not in yml}
    wrong = {k: (yml[k], v) for k, v in req.items() if k in yml and yml[k] != v}
    extra = sorted(set(yml) - set(req))
    assert not missing and not wrong and not extra, (
        f"missing {missing}, differing {wrong}, extra {extra}"
    )


def test_no_deps_packages_are_not_in_the_pip_section():
    nodeps = pins(ROOT / "requirements-nodeps.txt")
    assert {"procthor", "alfworld"} <= set(nodeps)
    named = {re.split(r"[=<>!~ ]", e, 1)[0].lower() for e in pip_section()}
    assert not set(nodeps) & named, (
        "conda's pip section would install these with all their dependencies"
    )


def test_python_and_build_tools_match_pyproject_and_setup_env():
    conda = [d for d in env()["dependencies"] if isinstance(d, str)]
    pythons = [d for d in conda if d.startswith("python")]
    assert pythons == ["python=3.11"]
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == ">=3.11"  # 3.11 is the lowest allowed and the one setup_env.sh uses
    assert 'PY="${PYTHON:-python3.11}"' in (ROOT / "scripts" / "setup_env.sh").read_text()
    assert "pip" in conda and "setuptools<81" in conda  # setup_env.sh: pip install "setuptools<81"


def test_post_create_step_is_documented_and_installs_with_no_deps():
    yml_text = (ROOT / "environment.yml").read_text()
    assert f"bash {POST_CREATE}" in yml_text
    script = (ROOT / POST_CREATE).read_text()
    assert re.search(r"pip install -q --no-deps -r requirements-nodeps.txt", script)
    assert re.search(r"pip install -q --no-deps --no-build-isolation -e \.", script)


def test_post_create_check_passes_in_this_environment():
    """The check half of the post-create step, run against the interpreter running the tests."""
    out = subprocess.run(
        ["bash", str(ROOT / POST_CREATE), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHON=sys.executable),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "alfworld==0.4.2" in out.stdout


def test_post_create_check_fails_without_the_layouts(tmp_path):
    """An alfworld without its data (shadowed here by an empty package) is what the check catches."""
    (tmp_path / "alfworld").mkdir()
    (tmp_path / "alfworld" / "__init__.py").write_text("")
    pythonpath = os.pathsep.join([str(tmp_path), str(ROOT)])
    out = subprocess.run(
        ["bash", str(ROOT / POST_CREATE), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHON=sys.executable, PYTHONPATH=pythonpath),
    )
    assert out.returncode != 0
    assert "thor_lite rooms would have no walls" in out.stderr
