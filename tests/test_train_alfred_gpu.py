"""scripts/train_alfred_gpu.sh, the prepared GPU-node run of issue 10: its DRY_RUN (tiny, CPU) goes
through every stage (data, imitation, DAgger from the imitation checkpoint, evaluation, ship), and
without a GPU the real run stops at once with one line."""
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


def _run(out: Path, timeout: int, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), str(out)], cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "SKIP_SETUP": "1", "PYTHON": sys.executable, **env})


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without a GPU")
def test_without_a_gpu_the_real_run_stops_at_once_in_one_line(tmp_path):
    proc = _run(tmp_path / "run", 120)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "train_alfred_gpu: no CUDA device here (DRY_RUN=1 runs a tiny CPU version)"
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("env, line", [
    ({"SPATIAL_MASK": "yes"}, "SPATIAL_MASK: 'yes' is not true or false"),
    ({"SUBCELL_MASK": "1"}, "SUBCELL_MASK: '1' is not true or false"),
    ({"AGENT_KWARGS": "[true]"}, "AGENT_KWARGS: '[true]' is not a JSON object"),
    ({"IL_SECONDS": "5m"}, "IL_SECONDS: '5m' is not a whole number of seconds"),
    ({"VALID": "0"}, "VALID=0 leaves nothing to evaluate: set SKIP_EVAL=1 too"),
    ({"ABLATIONS": "no_language,no_vision"}, "ABLATIONS: 'no_vision' is not one of seq2seq,no_language"),
], ids=lambda v: next(iter(v)) if isinstance(v, dict) else None)
def test_a_bad_setting_is_one_line_and_writes_nothing(tmp_path, env, line):
    proc = _run(tmp_path / "run", 60, DRY_RUN="1", **env)
    assert proc.returncode == 2 and proc.stderr.strip() == line
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_dry_run_trains_both_arms_evaluates_and_ships(tmp_path):
    out = tmp_path / "run"
    proc = _run(out, 900, DRY_RUN="1", SPATIAL_MASK="true", SUBCELL_MASK="true", ABLATIONS="no_language",
                AGENT_KWARGS='{"obstruction_evasion": true}')
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    ship = out / "ship"
    il, dagger = ship / "imitation" / "alfred_seq2seq_pm_lite.pt", ship / "dagger" / "alfred_seq2seq_pm_lite.pt"
    states = {}
    for name, path in (("imitation", il), ("dagger", dagger)):
        ckpt = torch.load(path, weights_only=True)
        assert "optimizer_state_dict" not in ckpt  # slim, as pretrained_model_ckpts/ holds them
        states[name] = ckpt["model_state_dict"]
        assert "seq2seq.dec.mask_dec.vis_conv.weight" in states[name]  # SPATIAL_MASK reached the model
        assert "seq2seq.dec.mask_dec.sub_key.weight" in states[name]  # and SUBCELL_MASK
        assert states[name]["seq2seq.dec.mask_dec.sub_key.weight"].dtype == torch.float16  # shipped in half
        assert states[name]["_extra_state"]["kwargs"]["obstruction_evasion"] is True  # AGENT_KWARGS rode along
    # DAgger started from the imitation weights and then changed them
    assert states["imitation"].keys() == states["dagger"].keys()
    assert any(not torch.equal(states["imitation"][k], states["dagger"][k])
               for k, v in states["imitation"].items() if torch.is_tensor(v) and v.is_floating_point())
    run = json.loads((ship / "run.json").read_text())
    assert run["dagger_config_kwargs"]["vocab"] == run["imitation_config_kwargs"]["vocab"]
    assert run["imitation_config_kwargs"]["spatial_mask"] is True
    compare = json.loads((out / "compare" / "compare.json").read_text())
    for split in ("valid_seen", "valid_unseen"):
        assert set(compare["splits"][split]["summary"]) == {"seq2seq_pm", "no_language", "dagger", "random"}
    ablation = torch.load(ship / "imitation_no_language" / "alfred_seq2seq_pm_lite.pt", weights_only=True)
    assert ablation["model_state_dict"]["_extra_state"]["kwargs"]["model_kwargs"]["ablation"] == "no_language"
    assert ablation["total_steps"] == torch.load(il, weights_only=True)["total_steps"]  # trained as far
    assert str(ship / "imitation_no_language") in compare["checkpoints"]["no_language"]
    assert (ship / "compare.md").read_text() == (out / "compare" / "compare.md").read_text()
    assert str(il) in compare["checkpoints"]["seq2seq_pm"]  # the table measures the shipped files


@pytest.mark.slow
def test_short_lease_knobs_data_first_then_imitation_only(tmp_path):
    """STOP_AFTER=data stops before training; the rerun reuses the data, trains imitation only
    (DAGGER_FRAMES=0), ships it and evaluates nothing (VALID=0, SKIP_EVAL=1); an IL_SECONDS
    deadline that comes before the first checkpoint is one line, not a run without weights."""
    out = tmp_path / "run"
    lease = dict(DRY_RUN="1", VALID="0", SKIP_EVAL="1", DAGGER_FRAMES="0")
    proc = _run(out, 600, STOP_AFTER="data", **lease)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "(STOP_AFTER=data)" in proc.stdout
    assert (out / "data" / "alfred_s2s_thor_aug" / "splits.json").is_file() and not (out / "il").exists()
    splits = json.loads((out / "data" / "alfred_s2s_thor" / "splits.json").read_text())
    assert splits["train"] and not splits.get("valid_seen") and not splits.get("valid_unseen")

    # a deadline long before the first of ten checkpoints of a huge run
    proc = _run(out, 600, IL_SECONDS="20", IL_FRAMES="100000000", **lease)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == f"train_alfred_gpu: imitation saved no checkpoint in {out / 'il'}"
    assert not (out / "ship").exists()

    import shutil
    shutil.rmtree(out / "il")
    proc = _run(out, 600, IL_SECONDS="500", **lease)  # the tiny run ends well before its deadline
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "deadline" not in proc.stdout and "no evaluation here" in proc.stdout
    ckpt = torch.load(out / "ship" / "imitation" / "alfred_seq2seq_pm_lite.pt", weights_only=True)
    assert "optimizer_state_dict" not in ckpt and ckpt["total_steps"] > 0
    assert not (out / "ship" / "dagger").exists() and not (out / "dagger").exists() and not (out / "compare").exists()
    run = json.loads((out / "ship" / "run.json").read_text())
    assert run["dagger_config_kwargs"] is None and run["imitation_config_kwargs"]["save_interval"] >= 1


def _steps(run_dir: Path) -> list:
    return sorted(int(p.stem.rsplit("__steps_", 1)[1]) for p in run_dir.glob("checkpoints/*/*/*.pt"))


@pytest.mark.slow
def test_ablations_train_beside_imitation_and_ship_at_the_step_all_reached(tmp_path):
    """ABLATIONS train next to Seq2Seq+PM with the same kwargs and seed, and every run ships at the
    newest checkpoint step that all of them hold: drop the no-PM run's newest checkpoint and the
    rerun ships both at the one before."""
    out = tmp_path / "run"
    lease = dict(DRY_RUN="1", VALID="0", SKIP_EVAL="1", DAGGER_FRAMES="0", ABLATIONS="seq2seq",
                 IL_FRAMES="6000", IL_SECONDS="600")
    proc = _run(out, 900, **lease)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    pm_steps, nopm_steps = _steps(out / "il"), _steps(out / "il_seq2seq")
    assert pm_steps == nopm_steps and len(pm_steps) >= 2  # same batches, same checkpoint steps
    shipped = {name: torch.load(out / "ship" / name / "alfred_seq2seq_pm_lite.pt", weights_only=True)
               for name in ("imitation", "imitation_seq2seq")}
    assert {c["total_steps"] for c in shipped.values()} == {pm_steps[-1]}
    assert not any("progress" in k for k in shipped["imitation_seq2seq"]["model_state_dict"])  # no PM head
    assert any("progress" in k for k in shipped["imitation"]["model_state_dict"])

    newest = max((out / "il_seq2seq").glob("checkpoints/*/*/*.pt"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    newest.unlink()
    proc = _run(out, 600, **lease)  # reuses both runs, trains nothing
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "imitation (" not in proc.stdout and f"ships at step {pm_steps[-2]:012d}" in proc.stdout
    for name in ("imitation", "imitation_seq2seq"):
        ckpt = torch.load(out / "ship" / name / "alfred_seq2seq_pm_lite.pt", weights_only=True)
        assert ckpt["total_steps"] == pm_steps[-2]
