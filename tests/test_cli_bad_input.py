"""Every CLI turns a user error into one stderr line naming the bad value, a non-zero exit and
no output: checked in-process (torch/allenact imported once) over a table of CLI x bad input,
plus one real subprocess per CLI for the exit status and the absence of a traceback."""

from __future__ import annotations

import gzip
import importlib
import importlib.util
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, List

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALFRED = ROOT / "data" / "alfred_lite"
UNWRITABLE = "/sys"  # read-only for root too (a chmod'ed folder is writable for root)


def _unwritable_dir(tmp: Path) -> str:
    if os.geteuid() != 0:
        d = tmp / "ro"
        d.mkdir()
        d.chmod(0o555)
        return str(d)
    if not os.path.isdir(UNWRITABLE) or os.access(UNWRITABLE, os.W_OK) and _probe_ok(UNWRITABLE):
        pytest.skip("no read-only folder to test with as root")
    return UNWRITABLE


def _probe_ok(d: str) -> bool:
    try:
        p = Path(d) / ".probe"
        p.write_bytes(b"")
        p.unlink()
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def bad(tmp_path_factory) -> Dict[str, str]:
    """Bad inputs: datasets, checkpoints, a plain file standing where a folder is expected."""
    import torch

    d = tmp_path_factory.mktemp("bad")
    val = (ROOT / "data" / "rearrange" / "val.pkl.gz").read_bytes()
    datasets = {
        "trunc": val[: len(val) // 2],
        "random": os.urandom(4096),
        "empty": b"",
        "nodict": gzip.compress(pickle.dumps({})),
        "malformed": gzip.compress(pickle.dumps({"FloorPlan21": [{"agent_position": 1}]})),
    }
    for name, data in datasets.items():
        (d / name).mkdir()
        (d / name / "val.pkl.gz").write_bytes(data)
    torch.save({"model_state_dict": {"foo": torch.zeros(3)}}, d / "wrong.pt")
    torch.save({"model_state_dict": {"foo": torch.zeros(4000)}}, d / "big.pt")
    (d / "trunc.pt").write_bytes((d / "big.pt").read_bytes()[:3000])
    (d / "afile").write_text("x")
    (d / "badtraj" / "t").mkdir(parents=True)
    (d / "badtraj" / "t" / "traj_data.json").write_text("{not json")
    return {"dir": str(d), "file": str(d / "afile"), "ro": _unwritable_dir(d)}


def _main_of(name: str) -> Callable[[List[str]], int]:
    if name.endswith(".py"):
        sys.path.insert(0, str(ROOT / "benchmarks"))
        spec = importlib.util.spec_from_file_location(Path(name).stem, ROOT / name)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.main
    return importlib.import_module(name).main


RE_EVAL = "rearrange.eval"
# (cli, argv with {tmp}/{dir}/{file}/{ro} placeholders, text the error line must contain)
CASES = [
    ("rearrange.gen", "--stage val --scenes FloorPlan999 --out {tmp}/o/x.pkl.gz", "FloorPlan999"),
    ("rearrange.gen", "--stage val --processes -1 --out {tmp}/o/x.pkl.gz", "--processes"),
    ("rearrange.gen", "--stage val --processes 0 --out {tmp}/o/x.pkl.gz", "--processes"),
    ("rearrange.gen", "--stage val --out {dir}", "is a folder"),
    ("rearrange.gen", "--stage val --out {file}/x.pkl.gz", "is a file where a folder"),
    ("rearrange.gen", "--stage val --out {ro}/x.pkl.gz", "not writable"),
    ("rearrange.gen", "--stage nope --out {tmp}/o/x.pkl.gz", "nope"),
    ("rearrange.gen", "--stage combined --out {tmp}/o/x.pkl.gz", "combined.pkl.gz"),
    ("rearrange.gen", "--stage combined --out {tmp}/o/combined.pkl.gz", "train_subset.pkl.gz"),
    (
        RE_EVAL,
        "--agents checkpoint --checkpoint {tmp}/missing.pt --table {tmp}/o/t.md",
        "missing.pt",
    ),
    (RE_EVAL, "--agents checkpoint --checkpoint {dir}/trunc.pt --table {tmp}/o/t.md", "trunc.pt"),
    (RE_EVAL, "--agents checkpoint --checkpoint {dir}/wrong.pt --table {tmp}/o/t.md", "wrong.pt"),
    (RE_EVAL, "--agents checkpoint --checkpoint {dir}/trunc --table {tmp}/o/t.md", "is a folder"),
    (RE_EVAL, "--agents checkpoint --table {tmp}/o/t.md", "--checkpoint"),
    (
        RE_EVAL,
        '--agents random --config-kwargs {{"data_dir":"{dir}/trunc"}} --table {tmp}/o/t.md',
        "trunc/val.pkl.gz",
    ),
    (
        RE_EVAL,
        '--agents random --config-kwargs {{"data_dir":"{dir}/random"}} --table {tmp}/o/t.md',
        "random/val.pkl.gz",
    ),
    (
        RE_EVAL,
        '--agents random --config-kwargs {{"data_dir":"{dir}/empty"}} --table {tmp}/o/t.md',
        "empty/val.pkl.gz",
    ),
    (
        RE_EVAL,
        '--agents random --config-kwargs {{"data_dir":"{dir}/nodict"}} --table {tmp}/o/t.md',
        "no scenes",
    ),
    (
        RE_EVAL,
        '--agents random --config-kwargs {{"data_dir":"{dir}/malformed"}} --table {tmp}/o/t.md',
        "agent_rotation",
    ),
    (
        RE_EVAL,
        '--agents random --config-kwargs {{"data_dir":"{tmp}/none"}} --table {tmp}/o/t.md',
        "no such dataset",
    ),
    (RE_EVAL, "--agents random --stage nope --table {tmp}/o/t.md", "nope"),
    (RE_EVAL, "--agents random --scenes FloorPlan999 --table {tmp}/o/t.md", "FloorPlan999"),
    (RE_EVAL, "--agents random --config-kwargs {{bad --table {tmp}/o/t.md", "invalid JSON"),
    (RE_EVAL, '--agents random --config-kwargs {{"nope":1}} --table {tmp}/o/t.md', "nope"),
    (
        RE_EVAL,
        '--agents random --config-kwargs {{"screen_size":32}} --table {tmp}/o/t.md',
        "screen_size",
    ),
    (RE_EVAL, "--agents random --config {tmp}/none.py --table {tmp}/o/t.md", "none.py"),
    (
        RE_EVAL,
        "--agents random --episodes-per-scene 0 --table {tmp}/o/t.md",
        "--episodes-per-scene",
    ),
    (RE_EVAL, "--agents random --gif {dir}", "--gif"),
    (RE_EVAL, "--agents random --submission {ro}/s.json.gz", "not writable"),
    (RE_EVAL, "--agents random --table {file}/t.md", "is a file where a folder"),
    ("alfred_task.gen.generate", "--out {file} --num 1", "is a file where a folder"),
    ("alfred_task.gen.generate", "--out {ro}/alfred --num 1", "not writable"),
    ("alfred_task.gen.generate", "--out {tmp}/o --num 1 --workers 0", "--workers"),
    ("alfred_task.gen.generate", "--out {tmp}/o --num 0", "--num"),
    ("alfred_task.gen.generate", "--out {tmp}/o --num 1 --start -1", "--start"),
    ("alfred_task.gen.generate", "--out {tmp}/o --num 1 --torch-threads 0", "--torch-threads"),
    (
        "alfred_task.evaluation.cli",
        "--agent random --data {alfred} --splits {alfred}/splits.json --num-workers 0 --out {tmp}/o",
        "--num-workers",
    ),
    ("alfred_task.training.encoder_pretrain", "--data {tmp}/none --out {tmp}/o/e.pt", "none/train"),
    (
        "alfred_task.training.encoder_pretrain",
        "--data {alfred} --out {tmp}/o/e.pt --grid 10",
        "--grid",
    ),
    (
        "alfred_task.training.encoder_pretrain",
        "--data {alfred} --out {tmp}/o/e.pt --epochs 0",
        "--epochs",
    ),
    (
        "alfred_task.training.encoder_pretrain",
        "--data {alfred} --out {tmp}/o/e.pt --min-fraction 2",
        "--min-fraction",
    ),
    (
        "alfred_task.training.encoder_pretrain",
        "--data {alfred} --out {file}/e.pt",
        "is a file where a folder",
    ),
    (
        "alfred_task.evaluation.cli",
        "--agent random --data {alfred} --splits {alfred}/splits.json --out {file}",
        "is a file",
    ),
    (
        "alfred_task.evaluation.cli",
        "--agent random --data {alfred} --splits {alfred}/splits.json --out {ro}/e",
        "not writable",
    ),
    (
        "alfred_task.evaluation.cli",
        "--agent random --data {alfred} --splits {alfred}/splits.json --limit 0 --out {tmp}/o",
        "--limit",
    ),
    ("scripts/main_job.py", "--processes 0 --out {tmp}/o", "--processes"),
    ("experiments.alfred_seq2seq.compare", "--data {tmp}/none --out {tmp}/o", "splits.json"),
    (
        "experiments.alfred_seq2seq.compare",
        "--data {alfred} --workers 0 --out {tmp}/o",
        "--workers",
    ),
    (
        "experiments.alfred_seq2seq.compare",
        "--data {alfred} --variants pm --out {tmp}/o",
        "--variants",
    ),
    (
        "experiments.alfred_seq2seq.compare",
        "--data {alfred} --pair seq2seq_pm,nobody --out {tmp}/o",
        "--pair",
    ),
    ("experiments.alfred_seq2seq.compare", "--data {alfred} --out {file}", "is a file"),
    (
        "experiments.alfred_seq2seq.compare",
        "--data {alfred} --evaluate rnd --out {tmp}/o",
        "--evaluate",
    ),
    (
        "experiments.alfred_seq2seq.compare",
        "--data {alfred} --agent random={file} --out {tmp}/o",
        "--agent",
    ),
    (
        "experiments.alfred_seq2seq.compare",
        "--data {alfred} --agent dagger={tmp}/none.pt --out {tmp}/o",
        "not found",
    ),
    (
        "experiments.alfred_seq2seq.compare",
        "--data {alfred} --report-only --out {tmp}/o",
        "no cached evaluation",
    ),
    (
        "experiments.alfred_seq2seq.subgoal_diag",
        "--checkpoint {tmp}/none.pt --data {alfred} --out {tmp}/o",
        "none.pt",
    ),
    (
        "experiments.alfred_seq2seq.subgoal_diag",
        "--checkpoint {file} --data {alfred} --out {tmp}/o",
        "afile",
    ),
    (
        "experiments.alfred_seq2seq.subgoal_diag",
        "--checkpoint {file} --data {alfred} --episodes 0 --out {tmp}/o",
        "--episodes",
    ),
    (
        "experiments.alfred_seq2seq.subgoal_diag",
        "--checkpoint {file} --data {alfred} --agent-kwargs [1] --out {tmp}/o",
        "--agent-kwargs",
    ),
    (
        "experiments.alfred_seq2seq.subgoal_diag",
        "--checkpoint {file} --data {alfred} --task --features --out {tmp}/o",
        "--features",
    ),
    (
        "experiments.alfred_masks.mask_resolve",
        "--checkpoint {tmp}/none.pt --data {alfred}",
        "none.pt",
    ),
    (
        "experiments.alfred_masks.mask_resolve",
        "--checkpoint {file} --data {alfred} --trajectories 0",
        "--trajectories",
    ),
    (
        "experiments.alfred_masks.mask_resolve",
        "--checkpoint {file} --data {alfred} --thresholds 0.7,1",
        "--thresholds",
    ),
    (
        "experiments.alfred_masks.mask_probe",
        "--rollouts {tmp}/none --out {tmp}/o",
        "no rollouts_*of*.pt",
    ),
    (
        "experiments.alfred_masks.mask_probe",
        "--rollouts {tmp} --heads state,pixels --out {tmp}/o",
        "--heads",
    ),
    (
        "experiments.alfred_masks.mask_probe",
        "--rollouts {tmp} --held-out 1 --out {tmp}/o",
        "--held-out",
    ),
    ("experiments.alfred_masks.mask_probe", "--rollouts {tmp} --out {file}", "is a file"),
    ("scripts/main_job.py", "--screen-size 32 --out {tmp}/o", "36"),
    ("scripts/main_job.py", "--out {file}", "is a file"),
    ("benchmarks/rearrange_expert.py", "--processes 0 --out {tmp}/o/r.md", "--processes"),
    ("benchmarks/rearrange_expert.py", "--out {dir}", "is a folder"),
    (
        "benchmarks/rearrange_expert.py",
        "--data {dir}/trunc/val.pkl.gz --out {tmp}/o/r.md",
        "val.pkl.gz",
    ),
    (
        "benchmarks/rearrange_expert.py",
        "--year 2022 --stage train_unseen --out {tmp}/o/r.md",
        "no official",
    ),
    ("rearrange.download", "data --out {file}", "is a file"),
    ("rearrange.download", "checkpoints --out {ro}/c", "not writable"),
    ("rearrange.download", "data --years 2019 --out {tmp}/o", "--years"),
    ("rearrange.download", "data --years 2022 --splits train_unseen --out {tmp}/o", "train_unseen"),
    ("rearrange.download", "data --retries -1 --out {tmp}/o", "--retries"),
    (
        "benchmarks/thor_lite_fps_compare.py",
        "--before-tree {tmp}/none --out {tmp}/o/c.md",
        "no benchmarks/",
    ),
    (
        "benchmarks/thor_lite_fps_compare.py",
        "--before-tree {tmp} --rounds 0 --out {tmp}/o/c.md",
        "--rounds",
    ),
    ("benchmarks/thor_lite_fps_compare.py", "--before-tree {tmp} --out {dir}", "is a folder"),
    (
        "benchmarks/thor_lite_visibility_from_ids.py",
        "--scenes FloorPlan1 FloorPlanX --out {tmp}/o/v.md",
        "FloorPlanX",
    ),
    ("benchmarks/thor_lite_visibility_from_ids.py", "--states 0 --out {tmp}/o/v.md", "--states"),
    ("benchmarks/thor_lite_visibility_from_ids.py", "--out {dir}", "is a folder"),
    ("benchmarks/alfred_fidelity.py", "--limit 0 --out {tmp}/o/f.md", "--limit"),
    ("benchmarks/alfred_fidelity.py", "--processes 0 --out {tmp}/o/f.md", "--processes"),
    ("benchmarks/alfred_fidelity.py", "--data {tmp}/nothing --out {tmp}/o/f.md", "no such folder"),
    ("benchmarks/alfred_fidelity.py", "--data {dir}/trunc --out {tmp}/o/f.md", "no traj_data.json"),
    ("benchmarks/alfred_fidelity.py", "--out {dir}", "is a folder"),
    (
        "benchmarks/alfred_fidelity.py",
        "--data {dir}/badtraj --out {tmp}/o/f.md",
        "not a readable traj_data.json",
    ),
    (
        "experiments.alfred_masks.closed_loop_masks",
        "collect --checkpoint {tmp}/none.pt --data {alfred} --out {tmp}/o",
        "none.pt",
    ),
    (
        "experiments.alfred_masks.closed_loop_masks",
        "collect --checkpoint {file} --data {alfred} --shard 2/2 --out {tmp}/o",
        "--shard",
    ),
    (
        "experiments.alfred_masks.closed_loop_masks",
        "collect --checkpoint {file} --data {tmp} --out {tmp}/o",
        "no splits.json",
    ),
    (
        "experiments.alfred_masks.closed_loop_masks",
        "collect --checkpoint {file} --data {alfred} --out {file}",
        "is a file",
    ),
    (
        "experiments.alfred_masks.closed_loop_masks",
        "fit --checkpoint {file} --rollouts {tmp} --demos {alfred} --out {tmp}/o/f.pt",
        "no rollouts_",
    ),
    (
        "experiments.alfred_masks.closed_loop_masks",
        "fit --checkpoint {file} --rollouts {tmp} --demos {alfred} --lr 0 --out {tmp}/o/f.pt",
        "--lr",
    ),
    (
        "experiments.alfred_fidelity.fridge_placements",
        "--data {tmp}/nothing --out {tmp}/o/f.md",
        "no such folder",
    ),
    (
        "experiments.alfred_fidelity.fridge_placements",
        "--data {dir}/trunc --out {tmp}/o/f.md",
        "puts anything into",
    ),
    ("experiments.alfred_fidelity.fridge_placements", "--out {dir}", "is a folder"),
    (
        "experiments.alfred_fidelity.fridge_placements",
        "--data {dir}/badtraj --out {tmp}/o/f.md",
        "not a readable traj_data.json",
    ),
]


def _argv(template: str, tmp: Path, bad: Dict[str, str]) -> List[str]:
    return template.format(tmp=tmp, alfred=ALFRED, **bad).split()


def _check(code, err: str, expect: str, tmp: Path, before: set) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code not in (0, None), err
    assert "Traceback" not in err
    assert len(lines) == 1, err
    assert expect in lines[0], lines[0]
    assert set(tmp.iterdir()) == before, "a rejected run created output"


@pytest.mark.parametrize(
    "cli,template,expect", CASES, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(CASES)]
)
def test_bad_input_one_line_no_output(cli, template, expect, bad, tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(ROOT)
    main = _main_of(cli)
    before = set(tmp_path.iterdir())
    try:
        code = main(_argv(template, tmp_path, bad))
    except SystemExit as e:
        code = e.code
    _check(code, capfd.readouterr().err, expect, tmp_path, before)


SUBPROCESS = {  # one real run per CLI: exit status 2 and stderr exactly as a user sees it
    "rearrange.gen": "--stage val --out {file}/x.pkl.gz",
    "rearrange.eval": "--agents random --stage nope",
    "alfred_task.gen.generate": "--out {file} --num 1",
    "alfred_task.gen.augment": "--source {tmp}/missing --out {file}",
    "alfred_task.training.encoder_pretrain": "--data {tmp}/none --out {tmp}/o/e.pt",
    "alfred_task.evaluation.cli": "--agent random --data {alfred} --splits {alfred}/splits.json --num-workers 0 --out {tmp}/o",
    "scripts/main_job.py": "--processes 0 --out {tmp}/o",
    "benchmarks/rearrange_expert.py": "--processes 0 --out {tmp}/o/r.md",
    "rearrange.download": "data --out {file}",
    "benchmarks/alfred_fidelity.py": "--limit 0 --out {tmp}/o/f.md",
    "experiments.alfred_fidelity.fridge_placements": "--data {tmp}/nothing --out {tmp}/o/f.md",
    "experiments.alfred_masks.closed_loop_masks": "collect --checkpoint {file} --data {alfred} --shard 2/2 --out {tmp}/o",
}


@pytest.mark.parametrize("cli", sorted(SUBPROCESS))
def test_bad_input_subprocess_exit_2(cli, bad, tmp_path):
    cmd = [sys.executable, cli] if cli.endswith(".py") else [sys.executable, "-m", cli]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = set(tmp_path.iterdir())
    p = subprocess.run(
        cmd + _argv(SUBPROCESS[cli], tmp_path, bad),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2, p.stderr
    _check(p.returncode, p.stderr, "error", tmp_path, before)


def test_screen_size_minimum_is_where_simple_cnn_breaks():
    """36 is computed from SimpleCNN's layers: 35 crashes the encoder, 36 gives a 1x1 map."""
    import gym
    import numpy as np
    import torch
    from allenact.embodiedai.models.basic_models import SimpleCNN

    from baseline_configs.rearrange_base import simple_cnn_min_size

    m = simple_cnn_min_size()
    assert m == 36

    def encode(size: int):
        space = gym.spaces.Dict({"x": gym.spaces.Box(-1, 1, (size, size, 6), np.float32)})
        return SimpleCNN(space, 8, "x", None)({"x": torch.zeros(1, 1, size, size, 6)})

    assert encode(m).shape[-1] == 8
    with pytest.raises(RuntimeError):
        encode(m - 1)
