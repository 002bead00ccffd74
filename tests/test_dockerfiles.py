"""The Dockerfiles, replayed without Docker: COPY steps copy into a scratch folder, in order, and
every RUN step must find there what it runs and what its scripts read.

A real `docker build` needs a daemon and a registry for the base image; this checks what breaks
builds most often in this repo: a RUN whose script reads a file (scripts/setup_env.sh hashes and
installs requirements*.txt and pyproject.toml) that is only COPY'd later. Rules:

- every COPY source exists in the build context (after .dockerignore);
- each script a RUN step runs (`bash x.sh`, `python x.py`) is already in the image, and so is
  every repository file that the step or its scripts name (followed through scripts they call);
- an editable install (`pip install -e .`) must happen after the last COPY that brings package
  code; a second run of the same idempotent script does not count (setup_env.sh skips its pip
  steps when its stamp matches);
- files named by ENTRYPOINT/CMD exist in the final image tree.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import shutil
from pathlib import Path, PurePosixPath
from typing import List, Optional, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILES = sorted(p.name for p in ROOT.glob("Dockerfile*"))
SCRIPT_RE = re.compile(
    r"(?:^|[\s;&|(])(?:bash|sh|exec|\S*python[\d.]*)\s+(?:-\S+\s+)*([\w./-]+\.(?:sh|py))\b"
)
FILE_TOKEN_RE = re.compile(r"[\w.-]+(?:/[\w.*-]+)*\.(?:txt|toml|sh|py|cfg|ya?ml|json)\b")
EDITABLE_RE = re.compile(r"\bpip\w*\b[^\n;&|]*\s-e\s+\.(?:\s|$)")

# Today's Dockerfile before this test existed, kept to prove the checker fails on it.
BROKEN_DOCKERFILE = """\
FROM python:3.11-slim-bookworm
ENV DEBIAN_FRONTEND=noninteractive PIP_NO_CACHE_DIR=1 LP_NUM_THREADS=0
RUN apt-get update \\
 && apt-get install -y --no-install-recommends libegl1 libgl1 ffmpeg git \\
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Dependencies first, so this layer is reused when only the code changes.
COPY requirements.txt ./
COPY scripts/setup_env.sh scripts/
RUN bash scripts/setup_env.sh
COPY . .
RUN bash scripts/setup_env.sh
CMD ["bash", "scripts/run_tests.sh"]
"""


def parse_dockerfile(text: str) -> List[Tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs; continuation lines joined, comment lines dropped."""
    steps, buf = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        buf += " " + stripped[:-1] if stripped.endswith("\\") else " " + stripped
        if not stripped.endswith("\\"):
            instr, _, args = buf.strip().partition(" ")
            steps.append((instr.upper(), args.strip()))
            buf = ""
    assert not buf, "the Dockerfile ends inside a continued line"
    return steps


def dockerignore_patterns(context: Path) -> List[str]:
    f = context / ".dockerignore"
    if not f.exists():
        return []
    return [
        ln.strip().rstrip("/")
        for ln in f.read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]


def ignored(rel: str, patterns: List[str]) -> bool:
    parts = rel.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    hit = False
    for pat in patterns:
        neg = pat.startswith("!")
        pat = pat[1:] if neg else pat
        pat = pat[3:] if pat.startswith("**/") else pat
        match = any(
            fnmatch.fnmatch(p, pat) or fnmatch.fnmatch(p.split("/")[-1], pat) for p in prefixes
        )
        if match:
            hit = not neg
    return hit


def context_files(context: Path, patterns: List[str]) -> Set[str]:
    out = set()
    for p in context.rglob("*"):
        rel = p.relative_to(context).as_posix()
        if p.is_file() and not ignored(rel, patterns):
            out.add(rel)
    return out


class Replay:
    """The image's /WORKDIR as a scratch folder, plus the problems found while replaying."""

    def __init__(self, context: Path, scratch: Path) -> None:
        self.context, self.scratch = context, scratch
        self.patterns = dockerignore_patterns(context)
        self.files = context_files(context, self.patterns)
        self.package_roots = package_roots(context)
        self.workdir = PurePosixPath("/")
        self.problems: List[str] = []
        self.ran_scripts: Set[str] = set()
        self.last_code_copy: Optional[int] = None
        self.last_editable: Optional[int] = None

    def image_path(self, path: str) -> Path:
        p = PurePosixPath(path)
        p = p if p.is_absolute() else self.workdir / p
        return self.scratch / str(p).lstrip("/")

    def has(self, rel: str) -> bool:
        return self.image_path(rel).exists()

    # -- instructions ----------------------------------------------------------------------
    def copy(self, idx: int, args: str) -> None:
        words = shlex.split(args)
        if any(w.startswith("--from") for w in words):
            return  # from another stage: nothing of the build context
        words = [w for w in words if not w.startswith("--")]
        if words and words[0].startswith("["):
            words = json.loads(args[args.index("[") :])
        *sources, dest = words
        for src in sources:
            src = src.rstrip("/") or "."
            matched = sorted(
                f
                for f in self.files
                if src == "." or f == src or f.startswith(src + "/") or fnmatch.fnmatch(f, src)
            )
            if not matched:
                self.problems.append(f"step {idx}: COPY source {src!r} is not in the build context")
                continue
            for f in matched:
                rel = (
                    f
                    if src == "."
                    else (f[len(src) + 1 :] if f.startswith(src + "/") else Path(f).name)
                )
                target = (
                    (self.image_path(dest) / rel)
                    if (dest.endswith("/") or len(sources) > 1 or src == "." or f != src)
                    else self.image_path(dest)
                )
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(self.context / f, target)
                if f.split("/")[0] in self.package_roots:
                    self.last_code_copy = idx

    def run(self, idx: int, args: str) -> None:
        if EDITABLE_RE.search(args):
            self.require_for_editable(idx, "the RUN step")
            self.last_editable = idx
        for token in FILE_TOKEN_RE.findall(args):
            self.require(idx, token, "the RUN step")
        for script in SCRIPT_RE.findall(args):
            self.follow(idx, script, top=True)

    def follow(
        self, idx: int, script: str, top: bool = False, seen: Optional[Set[str]] = None
    ) -> None:
        """Check a script and, recursively, the repository files it names."""
        seen = set() if seen is None else seen
        if script in seen:
            return
        seen.add(script)
        if not self.has(script):
            if script in self.files or not top:
                self.problems.append(f"step {idx}: runs {script} before it is COPY'd")
            return
        text = self.image_path(script).read_text(errors="replace")
        if EDITABLE_RE.search(text) and top and script not in self.ran_scripts:
            self.require_for_editable(idx, script)
            self.last_editable = idx
        if top:
            self.ran_scripts.add(script)
        for token in set(FILE_TOKEN_RE.findall(text)):
            if token in self.files:
                self.require(idx, token, script)
                if token.endswith((".sh", ".py")) and token.startswith("scripts/"):
                    self.follow(idx, token, seen=seen)

    def require(self, idx: int, rel: str, who: str) -> None:
        if rel in self.files and not self.has(rel):
            self.problems.append(f"step {idx}: {who} reads {rel}, which is not COPY'd yet")

    def require_for_editable(self, idx: int, who: str) -> None:
        self.require(idx, "pyproject.toml", f"{who} (pip install -e .)")

    def command(self, instr: str, args: str) -> None:
        """ENTRYPOINT/CMD: exec-form arguments that name repository files must be in the image."""
        try:
            words = json.loads(args)
        except json.JSONDecodeError:
            words = shlex.split(args)
        for w in words:
            rel = (
                str(PurePosixPath(w).relative_to(self.workdir))
                if w.startswith(str(self.workdir) + "/")
                else w
            )
            if rel in self.files and not self.has(rel):
                self.problems.append(f"{instr} names {w}, which is not in the image")
            elif rel.endswith((".sh", ".py")) and not self.has(rel):
                self.problems.append(
                    f"{instr} names {w}, which is neither in the image nor the context"
                )
            elif rel.endswith((".sh", ".py")):
                self.follow(-1, rel)


def package_roots(context: Path) -> Set[str]:
    """Top-level package folders of the editable install (pyproject's packages.find include)."""
    import tomllib

    cfg = tomllib.loads((context / "pyproject.toml").read_text())
    include = cfg["tool"]["setuptools"]["packages"]["find"]["include"]
    return {pat.rstrip("*").rstrip(".") for pat in include}


def replay(text: str, context: Path, scratch: Path) -> List[str]:
    r = Replay(context, scratch)
    steps = parse_dockerfile(text)
    assert steps and steps[0][0] in ("FROM", "ARG"), "a Dockerfile starts with FROM (or ARG)"
    for idx, (instr, args) in enumerate(steps):
        if instr == "WORKDIR":
            r.workdir = r.workdir / args
            r.image_path(".").mkdir(parents=True, exist_ok=True)
        elif instr in ("COPY", "ADD"):
            r.copy(idx, args)
        elif instr == "RUN":
            r.run(idx, args)
        elif instr in ("ENTRYPOINT", "CMD"):
            r.command(instr, args)
    if r.last_editable is None:
        r.problems.append("no step installs the repository in editable mode (pip install -e .)")
    elif r.last_code_copy is not None and r.last_editable < r.last_code_copy:
        r.problems.append(
            f"the last editable install (step {r.last_editable}) runs before the package code "
            f"is COPY'd (step {r.last_code_copy})"
        )
    return r.problems


# ------------------------------------------------------------------------------------------
def test_there_are_a_cpu_and_a_cuda_dockerfile():
    assert {"Dockerfile", "Dockerfile.cuda"} <= set(DOCKERFILES)


@pytest.mark.parametrize("name", DOCKERFILES)
def test_dockerfile_replays_cleanly(name, tmp_path):
    problems = replay((ROOT / name).read_text(), ROOT, tmp_path)
    assert not problems, f"{name}:\n  " + "\n  ".join(problems)


def test_replay_rejects_the_old_dockerfile(tmp_path):
    problems = replay(BROKEN_DOCKERFILE, ROOT, tmp_path)
    text = "\n".join(problems)
    assert "reads requirements-nodeps.txt, which is not COPY'd yet" in text
    assert "reads pyproject.toml, which is not COPY'd yet" in text
    assert "runs before the package code is COPY'd" in text


def test_replay_rejects_missing_copy_source_and_entrypoint(tmp_path):
    text = (
        "FROM debian\nWORKDIR /app\nCOPY no_such_file.txt ./\nCOPY . .\n"
        'RUN python -m pip install --no-deps -e .\nENTRYPOINT ["scripts/no_such_entry.sh"]\n'
    )
    problems = "\n".join(replay(text, ROOT, tmp_path))
    assert "COPY source 'no_such_file.txt' is not in the build context" in problems
    assert "ENTRYPOINT names scripts/no_such_entry.sh" in problems


def test_dockerignore_keeps_the_host_venv_and_git_out():
    pats = dockerignore_patterns(ROOT)
    assert ignored(".venv/bin/python", pats) and ignored(".git", pats)
    assert not ignored("requirements.txt", pats) and not ignored("data/rearrange/val.pkl.gz", pats)


def test_cuda_image_has_vulkan_icd_gpu_torch_and_allenact_entrypoint():
    steps = parse_dockerfile((ROOT / "Dockerfile.cuda").read_text())
    text = "\n".join(f"{i} {a}" for i, a in steps)
    assert re.search(r"FROM \$\{CUDA_IMAGE\}", text) and re.search(
        r"ARG CUDA_IMAGE=nvidia/cuda:", text
    )
    assert "ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cu" in text
    assert (
        "/usr/share/vulkan/icd.d/nvidia_icd.json" in text
        and "libvulkan1" in text
        and "xvfb" in text
    )
    assert "graphics" in text  # NVIDIA_DRIVER_CAPABILITIES, for the Vulkan/GL driver libraries
    entry = (ROOT / "scripts" / "docker_entrypoint.sh").read_text()
    assert "allenact -b /app" in entry
