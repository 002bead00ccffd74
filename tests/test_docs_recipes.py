"""The README and the topic pages in docs/ cannot rot.

- every relative link in README.md and docs/*.md (not docs/logs/) resolves to a file in the
  repository, and a `#anchor` to a heading of the target page;
- every repository path they mention in backticks or in a command block exists, unless git
  ignores it (outputs and downloads such as `out/`, `benchmarks/results/`, `data/2023/`);
- every ```bash block of the README is either run here, at smoke scale (`--help`, `--list`,
  pre-flight), or marked documented-only with an HTML comment on the line before it that says
  why (`<!-- documented-only: needs a GPU -->`); the marked ones need a GPU, the network or
  long compute.

Failures name file:line and the dead link, path or failing command.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# Pages that quote paths of other repositories (the official code's files); links are still checked.
FOREIGN_PATH_PAGES = {"docs/references.md"}
MARKER = re.compile(r"<!--\s*documented-only:\s*(?P<why>[^>]*?)\s*-->")
LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
PATHLIKE = re.compile(r"^[A-Za-z0-9_.\-/]+$")
BLOCK_TIMEOUT_S = 90


def doc_pages() -> List[Path]:
    return [README] + sorted((ROOT / "docs").glob("*.md"))


def rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def fenced_blocks(text: str) -> Iterator[Tuple[int, str, List[str]]]:
    """(line number of the opening fence, info string, body lines) of each fenced block."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^\s*```(\w*)", lines[i])
        if m:
            start, info, body = i + 1, m.group(1), []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i])
                i += 1
            yield start, info, body
        i += 1


def prose_lines(text: str) -> Iterator[Tuple[int, str]]:
    """Lines outside fenced blocks, with their 1-based numbers."""
    inside = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("```"):
            inside = not inside
            continue
        if not inside:
            yield n, line


@lru_cache(maxsize=1)
def top_level_names() -> frozenset:
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return frozenset(p.split("/")[0] for p in out.splitlines()) | {"out"}


def git_ignored(paths: List[str]) -> set:
    if not paths:
        return set()
    queries = paths + [
        p.rstrip("/") + "/" for p in paths
    ]  # also as folders (`/data/20[0-9][0-9]/`)
    r = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=ROOT,
        input="\n".join(queries),
        capture_output=True,
        text=True,
    )
    return {p.rstrip("/") for p in r.stdout.split()} | set(r.stdout.split())


def slug(heading: str) -> str:
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(page: Path) -> set:
    heads = [
        ln.lstrip("#").strip() for ln in page.read_text().splitlines() if re.match(r"^#{1,6} ", ln)
    ]
    return {slug(h) for h in heads}


def dead_links(page: Path) -> List[str]:
    bad = []
    for n, line in prose_lines(page.read_text()):
        for m in LINK.finditer(line):
            target = m.group("target")
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                bad.append(f"{rel(page)}:{n}: dead link {target}")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{rel(page)}:{n}: no heading for anchor {target}")
    return bad


def mentioned_paths(page: Path) -> List[Tuple[int, str]]:
    """Repository paths named in code spans and in command blocks, with their line numbers."""
    text = page.read_text()
    found = []
    for n, line in prose_lines(text):
        found += [(n, tok) for span in CODE_SPAN.findall(line) for tok in span.split()]
    for start, _info, body in fenced_blocks(text):
        found += [(start + k + 1, tok) for k, line in enumerate(body) for tok in line.split()]
    tops = top_level_names()
    out = []
    for n, tok in found:
        tok = tok.strip("\"'(),;:")
        if "/" not in tok or not PATHLIKE.match(tok) or tok.startswith(("/", "-")):
            continue
        if tok.split("/")[0] not in tops or tok.split("/")[0] == "out":
            continue
        out.append((n, tok))
    return out


def missing_paths(page: Path) -> List[str]:
    if rel(page) in FOREIGN_PATH_PAGES:
        return []
    cands = mentioned_paths(page)
    absent = [(n, p) for n, p in cands if not (ROOT / p).exists()]
    ignored = git_ignored(sorted({p for _, p in absent}))
    return [f"{rel(page)}:{n}: no such file or folder {p}" for n, p in absent if p not in ignored]


@pytest.mark.parametrize("page", doc_pages(), ids=rel)
def test_links_resolve(page):
    bad = dead_links(page)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("page", doc_pages(), ids=rel)
def test_mentioned_paths_exist(page):
    bad = missing_paths(page)
    assert not bad, "\n".join(bad)


def readme_bash_blocks(text: str) -> List[Tuple[int, List[str], str]]:
    """(line, body, marker reason or '') of every bash block of the README."""
    lines = text.splitlines()
    out = []
    for start, info, body in fenced_blocks(text):
        if info not in ("bash", "sh"):
            continue
        prev = next((lines[k] for k in range(start - 2, -1, -1) if lines[k].strip()), "")
        m = MARKER.search(prev)
        out.append((start, body, m.group("why") if m else ""))
    return out


def test_every_readme_block_is_run_or_marked():
    """Each block is either unmarked (and run below) or carries a marker with a reason; a comment
    that looks like a marker but is malformed or gives no reason fails, so nothing is skipped by accident."""
    text = README.read_text()
    lines = text.splitlines()
    blocks = readme_bash_blocks(text)
    assert blocks, "the README has no bash blocks"
    bad = []
    for line, _body, why in blocks:
        prev = next((lines[k] for k in range(line - 2, -1, -1) if lines[k].strip()), "")
        if "documented-only" in prev and not why:
            bad.append(
                f"README.md:{line - 1}: malformed documented-only marker (needs a reason): {prev.strip()}"
            )
    assert not bad, "\n".join(bad)
    run = [b for b in blocks if not b[2]]
    assert run, "no README command block is run: mark only the expensive ones documented-only"


def _python_shim(tmp: Path) -> dict:
    """Environment where `python` is this interpreter and the checkout is importable."""
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    shim = bindir / "python"
    if not shim.exists():  # a wrapper, not a symlink: a venv is found from the invoked path
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = (
        f"{bindir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    )
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}".rstrip(os.pathsep)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


RUN_BLOCKS = [(line, body) for line, body, why in readme_bash_blocks(README.read_text()) if not why]


@pytest.mark.parametrize("line,body", RUN_BLOCKS, ids=[f"README.md:{b[0]}" for b in RUN_BLOCKS])
def test_readme_block_runs(line, body, tmp_path):
    script = "set -eo pipefail\n" + "\n".join(body) + "\n"
    r = subprocess.run(
        ["bash", "-c", script],
        cwd=ROOT,
        env=_python_shim(tmp_path),
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
    )
    assert r.returncode == 0, (
        f"README.md:{line}: command block failed (exit {r.returncode}):\n"
        + "\n".join(body)
        + f"\n--- output tail ---\n{(r.stdout + r.stderr)[-2000:]}"
    )
