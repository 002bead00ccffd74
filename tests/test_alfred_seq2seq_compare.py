"""benchmarks/alfred_seq2seq_compare.py: a call that evaluates only some agents (`--evaluate`)
trains nothing else (separate calls side by side, then a report)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_evaluating_only_random_trains_no_variant(tmp_path):
    out = tmp_path / "o"
    proc = subprocess.run(
        [sys.executable, "benchmarks/alfred_seq2seq_compare.py", "--data", str(REPO / "data" / "alfred_lite"),
         "--evaluate", "random", "--splits", "valid_seen", "--limit", "1", "--subgoals", "none", "--max-steps", "5",
         "--workers", "1", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not (out / "train").exists()  # no variant was trained for a random-only call
    assert (out / "eval" / "random").is_dir()
    table = (out / "compare.md").read_text()
    assert "| random | 1 |" in table and "| seq2seq_pm |" not in table


def test_bad_agent_kwargs_is_one_line_before_any_work(tmp_path):
    out = tmp_path / "o"
    for bad, why in (("{nope", "invalid JSON"), ("[1]", "expected a JSON object")):
        proc = subprocess.run(
            [sys.executable, "benchmarks/alfred_seq2seq_compare.py", "--data", str(REPO / "data" / "alfred_lite"),
             "--evaluate", "random", "--agent-kwargs", bad, "--out", str(out)],
            cwd=REPO, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert proc.returncode != 0 and "Traceback" not in proc.stderr
        assert "--agent-kwargs" in proc.stderr and why in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert not out.exists()
