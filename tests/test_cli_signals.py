"""SIGTERM to a multiprocess run leaves no process behind (slow: each test starts a real run).

Each test starts the command, waits until its worker processes exist (read from /proc: no
psutil here), sends SIGTERM to the main process and checks that it exits with 128 + 15 and that
every process ever seen below it is gone within 10 s of the signal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

import pytest

from common.procs import alive, descendants

ROOT = Path(__file__).resolve().parents[1]
ALLENACT = str(Path(sys.executable).with_name("allenact"))
ALFRED = ROOT / "data" / "alfred_lite"

pytestmark = pytest.mark.slow


def _cmdline(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline")
            .read_bytes()
            .replace(b"\0", b" ")
            .decode(errors="replace")[:100]
        )
    except OSError:
        return "?"


def _workers(tree: Dict[int, str]) -> Dict[int, str]:
    return {p: c for p, c in tree.items() if "resource_tracker" not in c}


def _sigterm_run(
    cmd: List[str],
    ready: Callable[[int, Dict[int, str]], bool],
    tmp: Path,
    start_timeout: float = 45.0,
    signals=(signal.SIGTERM,),
) -> Dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    log = open(tmp / "run.log", "w")
    p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    seen: Dict[int, str] = {}
    try:
        deadline = time.monotonic() + start_timeout
        while time.monotonic() < deadline:
            for d in descendants(p.pid):
                seen.setdefault(d, _cmdline(d))
            live = {d: c for d, c in seen.items() if alive(d)}
            if ready(p.pid, live):
                break
            assert p.poll() is None, (tmp / "run.log").read_text()[-3000:]
            time.sleep(0.3)
        else:
            pytest.fail(f"workers did not start in {start_timeout} s: {seen}")
        for d in descendants(p.pid):
            seen.setdefault(d, _cmdline(d))
        before = {d: c for d, c in seen.items() if alive(d)}
        t0 = time.monotonic()
        for i, sig in enumerate(signals):
            if i:
                time.sleep(0.2)  # apart enough that the first handler is already running
            p.send_signal(sig)
        code = p.wait(timeout=10)
        while any(alive(d) for d in seen) and time.monotonic() - t0 < 10:
            time.sleep(0.1)
        gone_after = time.monotonic() - t0
        left = {d: c for d, c in seen.items() if alive(d)}
        log.flush()
        return {
            "code": code,
            "before": before,
            "left": left,
            "gone_after": gone_after,
            "log": (tmp / "run.log").read_text(errors="replace"),
        }
    finally:
        if p.poll() is None:
            p.kill()
        for d in seen:  # never leave anything behind for the next test, even on failure
            if alive(d):
                os.kill(d, signal.SIGKILL)
        log.close()


def _report(name: str, r: Dict[str, object]) -> None:
    print(
        f"\n{name}: exit {r['code']}, {len(r['before'])} processes before, all gone after "
        f"{r['gone_after']:.1f} s: {sorted(r['before'].values())}"
    )


def _n_workers(n: int) -> Callable[[int, Dict[int, str]], bool]:
    return lambda main, live: len(_workers(live)) >= n


def _has_grandchild(main: int, live: Dict[int, str]) -> bool:
    """allenact: Train-0 has started its sampler process(es) (a process two levels down)."""
    import psutil

    def parent(pid: int) -> int:
        try:
            return psutil.Process(pid).ppid()
        except psutil.NoSuchProcess:
            return 0

    ws = _workers(live)
    return any("multiprocessing" in c and parent(d) in set(ws) - {main} for d, c in ws.items())


def _check(r: Dict[str, object]) -> None:
    assert r["code"] == 128 + signal.SIGTERM, r
    assert not r["left"], f"survived 10 s after SIGTERM: {r['left']}"


def test_sigterm_allenact_training_stops_workers_and_samplers(tmp_path):
    kwargs = '{"num_train_processes": 1, "training_steps": 100000, "screen_size": 64, "train_split": "train_subset"}'
    r = _sigterm_run(
        [
            ALLENACT,
            "-b",
            ".",
            "baseline_configs/one_phase/one_phase_rgb_dagger.py",
            "-o",
            str(tmp_path / "exp"),
            "-s",
            "1",
            "--config_kwargs",
            kwargs,
        ],
        _has_grandchild,
        tmp_path,
        start_timeout=90,
    )
    _report("allenact", r)
    _check(r)


def test_sigterm_alfred_gen_stops_forkserver_and_workers(tmp_path):
    r = _sigterm_run(
        [
            sys.executable,
            "-m",
            "alfred_task.gen",
            "--out",
            str(tmp_path / "out"),
            "--num",
            "6",
            "--workers",
            "2",
            "--planner",
            "template",
        ],
        _n_workers(3),
        tmp_path,
    )
    _report("alfred_task.gen.generate", r)
    _check(r)


def test_sigterm_alfred_eval_stops_workers(tmp_path):
    r = _sigterm_run(
        [
            sys.executable,
            "-m",
            "alfred_task.evaluation",
            "--agent",
            "random",
            "--data",
            str(ALFRED),
            "--splits",
            str(ALFRED / "splits.json"),
            "--split",
            "valid_seen,valid_unseen",
            "--num-workers",
            "2",
            "--out",
            str(tmp_path / "out"),
            "--quiet",
        ],
        _n_workers(2),
        tmp_path,
    )
    _report("alfred_task.evaluation.cli", r)
    _check(r)


def test_sigterm_rearrange_gen_stops_pool(tmp_path):
    r = _sigterm_run(
        [
            sys.executable,
            "-m",
            "rearrange.gen",
            "--stage",
            "val",
            "--scenes",
            "FloorPlan21",
            "FloorPlan22",
            "--processes",
            "2",
            "--out",
            str(tmp_path / "val.pkl.gz"),
        ],
        _n_workers(3),
        tmp_path,
    )
    _report("rearrange.gen", r)
    _check(r)
    assert not any(tmp_path.glob("*.pkl.gz")) and not any(tmp_path.glob(".val.pkl.gz.*"))


def test_sigterm_rearrange_expert_benchmark_stops_pool(tmp_path):
    r = _sigterm_run(
        [
            sys.executable,
            "benchmarks/rearrange_expert.py",
            "--stage",
            "val",
            "--processes",
            "2",
            "--out",
            str(tmp_path / "r.md"),
        ],
        _n_workers(3),
        tmp_path,
    )
    _report("benchmarks/rearrange_expert.py", r)
    _check(r)


def test_sigint_delivered_twice_at_once_is_one_request(tmp_path):
    """`timeout -s INT` signals the process and then its process group: the main process gets the
    same SIGINT twice, the second while the first is being handled. That must stop the run like one Ctrl-C (workers
    stopped, the one-line message printed), not like an impatient second Ctrl-C."""
    r = _sigterm_run(
        [
            sys.executable,
            "-m",
            "alfred_task.evaluation",
            "--agent",
            "random",
            "--data",
            str(ALFRED),
            "--splits",
            str(ALFRED / "splits.json"),
            "--split",
            "valid_seen,valid_unseen",
            "--num-workers",
            "2",
            "--out",
            str(tmp_path / "out"),
            "--quiet",
        ],
        _n_workers(2),
        tmp_path,
        signals=(signal.SIGINT, signal.SIGINT),
    )
    _report("alfred_task.evaluation.cli, SIGINT twice", r)
    assert r["code"] == 128 + signal.SIGINT, r
    assert not r["left"], f"survived 10 s after SIGINT: {r['left']}"
    assert "received SIGINT" in r["log"], r["log"][-2000:]


def test_sigint_benchmark_script_is_one_line_not_a_traceback(tmp_path):
    """Every benchmark script runs its main through `_common.run_cli`: Ctrl-C mid-run prints one
    line and exits 130 (before session 12 most printed a KeyboardInterrupt traceback)."""
    started = time.monotonic()
    r = _sigterm_run(
        [
            sys.executable,
            "benchmarks/thor_lite_fps.py",
            "--steps",
            "100000",
            "--repeats",
            "1",
            "--no-profile",
            "--out",
            str(tmp_path / "fps"),
        ],
        lambda main, live: time.monotonic() - started > 4.0,
        tmp_path,
        signals=(signal.SIGINT,),
    )
    _report("benchmarks/thor_lite_fps.py, SIGINT", r)
    assert r["code"] == 128 + signal.SIGINT, r["log"][-2000:]
    assert (
        "benchmarks/thor_lite_fps.py: received SIGINT" in r["log"] and "Traceback" not in r["log"]
    ), r["log"][-2000:]
    assert not any(tmp_path.glob("fps*")), "an interrupted benchmark must not leave a result file"
