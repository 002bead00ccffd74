"""Two-node AllenAct training on one machine: the multi-node path, run for real on loopback.

    python benchmarks/multinode_smoke.py [--steps 256] [--timeout 240] [--out out/multinode_smoke]

Starts the same `allenact` command twice, as node 0 and node 1 of a 2-machine run
(`--distributed_ip_and_port 127.0.0.1:<free port> --machine_id K`, the same `-s` seed and
`num_machines: 2`), each with one CPU trainer and one thor_lite sampler at 64x64, on the shipped
`train_subset` episodes. Each node writes to its own output folder, as nodes with local disks
would. Then it checks that

- both commands exited 0 and their logs name no crashed worker;
- each node saved a checkpoint at the last step (>= --steps) and the two checkpoints hold the
  same weights (the all-reduce kept the nodes in lock-step);

prints a summary (exit codes, wall time, checkpoint paths and step counts, weight difference),
writes it to benchmarks/results/multinode_smoke.md and exits 0 only when every check passed.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

from _common import REPO, RESULTS_DIR, write_markdown

CONFIG = "baseline_configs/one_phase/one_phase_rgb_dagger.py"
CRASH_MARKERS = ("abnormally terminated", "Traceback (most recent call last)")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_command(node: int, port: int, steps: int, seed: int, out: Path) -> List[str]:
    kwargs = {
        "num_machines": 2,
        "num_train_processes": 1,
        "num_valid_processes": 0,
        "training_steps": steps,
        "save_interval": steps,
        "screen_size": 64,
        "train_split": "train_subset",
        "metric_accumulate_interval": 64,
    }
    allenact = str(Path(sys.executable).with_name("allenact"))
    return [
        allenact,
        "-b",
        ".",
        CONFIG,
        "-o",
        str(out / f"node{node}"),
        "-s",
        str(seed),
        "--distributed_ip_and_port",
        f"127.0.0.1:{port}",
        "--machine_id",
        str(node),
        "--config_kwargs",
        json.dumps(kwargs),
    ]


def run_nodes(steps: int, seed: int, out: Path, timeout: float) -> Dict[str, object]:
    """Start both nodes, wait for both (killing both at the timeout); return codes and wall time."""
    port = free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", LP_NUM_THREADS="0")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    procs, logs = [], []
    t0 = time.time()
    for node in (0, 1):
        (out / f"node{node}").mkdir(parents=True, exist_ok=True)
        log = open(out / f"node{node}.log", "w")
        logs.append(log)
        procs.append(
            subprocess.Popen(
                node_command(node, port, steps, seed, out),
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    codes: List[Optional[int]] = [None, None]
    timed_out = False
    try:
        for i, p in enumerate(procs):
            left = max(1.0, timeout - (time.time() - t0))
            try:
                codes[i] = p.wait(timeout=left)
            except subprocess.TimeoutExpired:
                timed_out = True
                break
    finally:
        for p in procs:
            if p.poll() is None:  # our own session: its allenact workers go with it
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for log in logs:
            log.close()
    return {"port": port, "codes": codes, "wall_s": time.time() - t0, "timed_out": timed_out}


def last_checkpoint(node_out: Path) -> Optional[Path]:
    ckpts = glob.glob(str(node_out / "checkpoints" / "**" / "*.pt"), recursive=True)
    return (
        Path(max(ckpts, key=lambda c: int(re.search(r"steps_(\d+)", c).group(1))))
        if ckpts
        else None
    )


def checkpoint_facts(path: Path) -> Dict[str, object]:
    import torch

    ck = torch.load(path, map_location="cpu", weights_only=False)
    return {
        "path": str(path),
        "steps": int(ck.get("total_steps", -1)),
        "state": ck["model_state_dict"],
    }


def max_weight_diff(a: Dict[str, "object"], b: Dict[str, "object"]) -> float:
    if a.keys() != b.keys():
        return float("inf")
    return max(float((a[k].float() - b[k].float()).abs().max()) for k in a) if a else 0.0


def crashed(log: Path) -> List[str]:
    text = log.read_text(errors="replace") if log.exists() else ""
    return [m for m in CRASH_MARKERS if m in text]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=256, help="training steps (over both nodes)")
    ap.add_argument("--seed", type=int, default=12345, help="the -s seed shared by both nodes")
    ap.add_argument(
        "--timeout", type=float, default=240.0, help="seconds before both nodes are killed"
    )
    ap.add_argument("--out", type=Path, default=REPO / "out" / "multinode_smoke")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    run = run_nodes(args.steps, args.seed, out, args.timeout)
    problems, lines = [], []
    if run["timed_out"]:
        problems.append(f"timed out after {args.timeout:.0f} s (both nodes killed)")
    facts = []
    for node in (0, 1):
        code = run["codes"][node]
        if code != 0:
            problems.append(f"node {node} exited with {code}")
        bad = crashed(out / f"node{node}.log")
        if bad:
            problems.append(f"node {node} log contains {bad} (see {out / f'node{node}.log'})")
        ck = last_checkpoint(out / f"node{node}")
        if ck is None:
            problems.append(f"node {node} saved no checkpoint under {out / f'node{node}'}")
            continue
        f = checkpoint_facts(ck)
        facts.append(f)
        if f["steps"] < args.steps:
            problems.append(f"node {node}'s last checkpoint is at step {f['steps']} < {args.steps}")
        lines.append(f"- node {node}: exit {code}, checkpoint {f['path']} at step {f['steps']}")
    diff = max_weight_diff(facts[0]["state"], facts[1]["state"]) if len(facts) == 2 else None
    if diff is not None and diff != 0.0:
        problems.append(f"the two nodes' weights differ (max |dw| = {diff:.3g})")
    summary = "\n".join(
        [
            "# Two-node AllenAct smoke run on one machine",
            "",
            f"`python benchmarks/multinode_smoke.py --steps {args.steps}`: 2 nodes x 1 CPU trainer x 1 sampler, "
            f"rendezvous 127.0.0.1:{run['port']}, seed {args.seed}",
            "",
            f"- exit codes: node 0 = {run['codes'][0]}, node 1 = {run['codes'][1]}; wall time {run['wall_s']:.1f} s",
            *lines,
            f"- max |weight difference| between the nodes' checkpoints: {diff}",
            f"- result: {'OK' if not problems else 'FAILED: ' + '; '.join(problems)}",
        ]
    )
    print(summary)
    write_markdown(RESULTS_DIR / "multinode_smoke.md", summary)
    return 0 if not problems else 1


if __name__ == "__main__":
    from _common import run_cli

    run_cli(main)
