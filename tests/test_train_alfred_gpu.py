"""scripts/train_alfred_gpu.sh, the prepared GPU-node run: its DRY_RUN (tiny, CPU) goes through
every stage (data, imitation, DAgger from the imitation checkpoint, evaluation, ship), its options
come from a checked JSON file (`baseline_configs.alfred.gpu_run`), and without a GPU the real run
stops at once with one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "train_alfred_gpu.sh"


RETIRED = (
    "SEED",
    "TRAIN",
    "VALID",
    "IL_FRAMES",
    "DAGGER_FRAMES",
    "SAMPLERS",
    "SPATIAL_MASK",
    "SUBCELL_MASK",
    "AUG_PER_DEMO",
    "ABLATIONS",
    "AGENT_KWARGS",
)


def _run(out: Path, timeout: int, options: dict = None, **env: str) -> subprocess.CompletedProcess:
    """The script on `out`, with `options` written to an options file next to it when given."""
    args = ["bash", str(SCRIPT), str(out)]
    if options is not None:
        path = out.parent / f"{out.name}_options.json"
        path.write_text(json.dumps(options))
        args.append(str(path))
    base = {k: v for k, v in os.environ.items() if k not in RETIRED}
    return subprocess.run(
        args,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**base, "SKIP_SETUP": "1", "PYTHON": sys.executable, **env},
    )


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="checks the refusal on a machine without a GPU"
)
def test_without_a_gpu_the_real_run_stops_at_once_in_one_line(tmp_path):
    proc = _run(tmp_path / "run", 120)
    assert proc.returncode == 1
    assert (
        proc.stderr.strip()
        == "train_alfred_gpu: no CUDA device here (DRY_RUN=1 runs a tiny CPU version)"
    )
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "options, env, line",
    [
        ({"spatial_mask": "yes"}, {}, "spatial_mask: 'yes' is not true or false"),
        ({"subcell_mask": 1}, {}, "subcell_mask: 1 is not true or false"),
        ({"agent_kwargs": [True]}, {}, "agent_kwargs: [true] is not a JSON object"),
        ({"il_frames": -5}, {}, "il_frames: -5 is not a whole number >= 0"),
        ({}, {"IL_SECONDS": "5m"}, "IL_SECONDS: '5m' is not a whole number of seconds"),
        ({"valid": 0}, {}, "valid: 0 leaves nothing to evaluate: set SKIP_EVAL=1 too"),
        (
            {"ablations": ["no_language", "no_vision"]},
            {},
            "ablations: 'no_vision' is not one of seq2seq,no_language",
        ),
        (
            {"IL_FRAMES": 5},
            {},
            "unknown option 'IL_FRAMES' (options: seed, train, valid, aug_per_demo, il_frames, "
            "dagger_frames, samplers, spatial_mask, subcell_mask, ablations, agent_kwargs)",
        ),
        (
            {},
            {"SUBCELL_MASK": "true"},
            "SUBCELL_MASK: set subcell_mask in the options file instead "
            "(bash scripts/train_alfred_gpu.sh OUT OPTIONS.json)",
        ),
    ],
    ids=lambda v: next(iter(v), None) if isinstance(v, dict) else None,
)
def test_a_bad_setting_is_one_line_and_writes_nothing(tmp_path, options, env, line):
    proc = _run(tmp_path / "run", 60, options, DRY_RUN="1", **env)
    assert proc.returncode == 2 and proc.stderr.strip() == line
    assert not (tmp_path / "run").exists()


def test_options_file_defaults_and_the_shipped_runs_options():
    """Absent keys keep the script's historical defaults (tiny ones for DRY_RUN); the shipped
    run's options file is what its README's commands set."""
    from baseline_configs.alfred.gpu_run import AlfredGpuRunOptions

    assert AlfredGpuRunOptions.load(None).shell() == [
        "SEED=0",
        "TRAIN=260",
        "VALID=40",
        "AUG_PER_DEMO=3",
        "IL_FRAMES=400000",
        "DAGGER_FRAMES=65536",
        "SAMPLERS=16",
        "SPATIAL_MASK=false",
        "SUBCELL_MASK=false",
        "ABLATIONS=''",
        "AGENT_KWARGS='{}'",
    ]
    dry = AlfredGpuRunOptions.load(None, dry_run=True)
    assert (
        dry.train,
        dry.valid,
        dry.il_frames,
        dry.dagger_frames,
        dry.samplers,
        dry.aug_per_demo,
    ) == (2, 1, 60, 32, 1, 1)
    shipped = AlfredGpuRunOptions.load(
        REPO / "baseline_configs" / "alfred" / "alfred_seq2seq_pm_lite_gpu_run.json"
    )
    assert (
        shipped.train,
        shipped.valid,
        shipped.il_frames,
        shipped.dagger_frames,
        shipped.subcell_mask,
    ) == (520, 0, 1_000_000, 0, True)
    run = REPO / "pretrained_model_ckpts" / "alfred_seq2seq_pm_gpu" / "run.json"
    if run.is_file():
        record = json.loads(run.read_text())
        assert dict(shipped.agent_kwargs) == record["agent_kwargs"]
        assert record["imitation_config_kwargs"]["subcell_mask"] is shipped.subcell_mask
        assert record["imitation_config_kwargs"]["training_frames"] == shipped.il_frames


@pytest.mark.slow
def test_dry_run_trains_both_arms_evaluates_and_ships(tmp_path):
    out = tmp_path / "run"
    proc = _run(
        out,
        900,
        {
            "spatial_mask": True,
            "subcell_mask": True,
            "ablations": ["no_language"],
            "agent_kwargs": {"obstruction_evasion": True},
        },
        DRY_RUN="1",
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    ship = out / "ship"
    il, dagger = (
        ship / "imitation" / "alfred_seq2seq_pm_lite.pt",
        ship / "dagger" / "alfred_seq2seq_pm_lite.pt",
    )
    states = {}
    for name, path in (("imitation", il), ("dagger", dagger)):
        ckpt = torch.load(path, weights_only=True)
        assert "optimizer_state_dict" not in ckpt  # slim, as pretrained_model_ckpts/ holds them
        states[name] = ckpt["model_state_dict"]
        assert (
            "seq2seq.dec.mask_dec.vis_conv.weight" in states[name]
        )  # spatial_mask reached the model
        assert "seq2seq.dec.mask_dec.sub_key.weight" in states[name]  # and subcell_mask
        assert (
            states[name]["seq2seq.dec.mask_dec.sub_key.weight"].dtype == torch.float16
        )  # shipped in half
        assert (
            states[name]["_extra_state"]["kwargs"]["obstruction_evasion"] is True
        )  # agent_kwargs rode along
    # DAgger started from the imitation weights and then changed them
    assert states["imitation"].keys() == states["dagger"].keys()
    assert any(
        not torch.equal(states["imitation"][k], states["dagger"][k])
        for k, v in states["imitation"].items()
        if torch.is_tensor(v) and v.is_floating_point()
    )
    run = json.loads((ship / "run.json").read_text())
    assert run["dagger_config_kwargs"]["vocab"] == run["imitation_config_kwargs"]["vocab"]
    assert run["imitation_config_kwargs"]["spatial_mask"] is True
    compare = json.loads((out / "compare" / "compare.json").read_text())
    for split in ("valid_seen", "valid_unseen"):
        assert set(compare["splits"][split]["summary"]) == {
            "seq2seq_pm",
            "no_language",
            "dagger",
            "random",
        }
    ablation = torch.load(
        ship / "imitation_no_language" / "alfred_seq2seq_pm_lite.pt", weights_only=True
    )
    assert (
        ablation["model_state_dict"]["_extra_state"]["kwargs"]["model_kwargs"]["ablation"]
        == "no_language"
    )
    assert (
        ablation["total_steps"] == torch.load(il, weights_only=True)["total_steps"]
    )  # trained as far
    assert str(ship / "imitation_no_language") in compare["checkpoints"]["no_language"]
    assert (ship / "compare.md").read_text() == (out / "compare" / "compare.md").read_text()
    assert str(il) in compare["checkpoints"]["seq2seq_pm"]  # the table measures the shipped files


@pytest.mark.slow
def test_short_lease_knobs_data_first_then_imitation_only(tmp_path):
    """STOP_AFTER=data stops before training; the rerun reuses the data, trains imitation only
    (dagger_frames 0), ships it and evaluates nothing (valid 0, SKIP_EVAL=1); an IL_SECONDS
    deadline that comes before the first checkpoint is one line, not a run without weights."""
    out = tmp_path / "run"
    short_run = dict(DRY_RUN="1", SKIP_EVAL="1")
    options = {"valid": 0, "dagger_frames": 0}
    proc = _run(out, 600, options, STOP_AFTER="data", **short_run)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "(STOP_AFTER=data)" in proc.stdout
    assert (out / "data" / "alfred_s2s_thor_aug" / "splits.json").is_file() and not (
        out / "il"
    ).exists()
    splits = json.loads((out / "data" / "alfred_s2s_thor" / "splits.json").read_text())
    assert splits["train"] and not splits.get("valid_seen") and not splits.get("valid_unseen")

    # a deadline long before the first of ten checkpoints of a huge run
    proc = _run(out, 600, {**options, "il_frames": 100_000_000}, IL_SECONDS="20", **short_run)
    assert proc.returncode == 1
    assert (
        proc.stderr.strip().splitlines()[-1]
        == f"train_alfred_gpu: imitation saved no checkpoint in {out / 'il'}"
    )
    assert not (out / "ship").exists()

    import shutil

    shutil.rmtree(out / "il")
    proc = _run(
        out, 600, options, IL_SECONDS="500", **short_run
    )  # the tiny run ends well before its deadline
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "deadline" not in proc.stdout and "no evaluation here" in proc.stdout
    ckpt = torch.load(out / "ship" / "imitation" / "alfred_seq2seq_pm_lite.pt", weights_only=True)
    assert "optimizer_state_dict" not in ckpt and ckpt["total_steps"] > 0
    assert (
        not (out / "ship" / "dagger").exists()
        and not (out / "dagger").exists()
        and not (out / "compare").exists()
    )
    run = json.loads((out / "ship" / "run.json").read_text())
    assert (
        run["dagger_config_kwargs"] is None and run["imitation_config_kwargs"]["save_interval"] >= 1
    )


def _steps(run_dir: Path) -> list:
    return sorted(
        int(p.stem.rsplit("__steps_", 1)[1]) for p in run_dir.glob("checkpoints/*/*/*.pt")
    )


@pytest.mark.slow
def test_ablations_train_beside_imitation_and_ship_at_the_step_all_reached(tmp_path):
    """Ablations train next to Seq2Seq+PM with the same kwargs and seed, and every run ships at the
    newest checkpoint step that all of them hold: drop the no-PM run's newest checkpoint and the
    rerun ships both at the one before."""
    out = tmp_path / "run"
    short_run = dict(DRY_RUN="1", SKIP_EVAL="1", IL_SECONDS="600")
    options = {"valid": 0, "dagger_frames": 0, "ablations": ["seq2seq"], "il_frames": 6000}
    proc = _run(out, 900, options, **short_run)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    pm_steps, nopm_steps = _steps(out / "il"), _steps(out / "il_seq2seq")
    assert pm_steps == nopm_steps and len(pm_steps) >= 2  # same batches, same checkpoint steps
    shipped = {
        name: torch.load(out / "ship" / name / "alfred_seq2seq_pm_lite.pt", weights_only=True)
        for name in ("imitation", "imitation_seq2seq")
    }
    assert {c["total_steps"] for c in shipped.values()} == {pm_steps[-1]}
    assert not any(
        "progress" in k for k in shipped["imitation_seq2seq"]["model_state_dict"]
    )  # no PM head
    assert any("progress" in k for k in shipped["imitation"]["model_state_dict"])

    newest = max(
        (out / "il_seq2seq").glob("checkpoints/*/*/*.pt"),
        key=lambda p: int(p.stem.rsplit("_", 1)[1]),
    )
    newest.unlink()
    proc = _run(out, 600, options, **short_run)  # reuses both runs, trains nothing
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "imitation (" not in proc.stdout and f"ships at step {pm_steps[-2]:012d}" in proc.stdout
    for name in ("imitation", "imitation_seq2seq"):
        ckpt = torch.load(out / "ship" / name / "alfred_seq2seq_pm_lite.pt", weights_only=True)
        assert ckpt["total_steps"] == pm_steps[-2]
