"""`experiments.alfred_masks.fine_mask_head` and the study's agent ``mask_head`` option: the 14×14
features are the encoder's own layer3 (its layer4 of them is the 7×7 map the policy reads), a saved
head loads to the same function, and the agent uses it, with the checks that keep a wrong file out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from alfred_task.evaluation.agents import CheckpointAgent
from alfred_task.models.mask_rules import frame_logits
from experiments.alfred_masks.agent import MaskHeadCheckpointAgent
from experiments.alfred_masks.fine_mask_head import (
    FineMaskHead,
    layer3_features,
    load_head,
    save_head,
)

REPO = Path(__file__).resolve().parents[1]
CKPT = REPO / "pretrained_model_ckpts" / "alfred_seq2seq_pm_gpu" / "alfred_seq2seq_pm_lite.pt"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def agent():
    return CheckpointAgent(CKPT).inner


def _frame(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (300, 300, 3), dtype=np.uint8)


def test_layer3_features_are_the_encoders_own_path_to_its_7x7_map(agent):
    frame = _frame()
    f14 = layer3_features(agent.features, torch.from_numpy(frame)[None])
    assert f14.shape == (1, 256, 14, 14)
    with torch.no_grad():
        assert torch.allclose(agent.features.body[7](f14), agent.features([frame]), atol=1e-5)


def _head_file(tmp_path: Path, agent, kind: str = "state+f14", encoder=None, cond_dim=None) -> Path:
    torch.manual_seed(0)
    head = FineMaskHead(kind, cond_dim or agent.model.dec.cont_dim)
    path = tmp_path / f"{kind}.pt"
    save_head(path, head, encoder or agent.features.encoder, {"label_size": 100})
    return path


def test_a_saved_head_loads_to_the_same_function(tmp_path, agent):
    path = _head_file(tmp_path, agent)
    torch.manual_seed(0)
    same = FineMaskHead("state+f14", agent.model.dec.cont_dim).eval()
    loaded, record = load_head(path)
    cond, f7, f14 = (
        torch.randn(2, same.cond_dim),
        torch.randn(2, 512, 7, 7),
        torch.randn(2, 256, 14, 14),
    )
    with torch.no_grad():
        assert torch.equal(loaded(cond, f7, f14), same(cond, f7, f14))
    assert loaded(cond, f7, f14).shape == (2, 56, 56) and record["meta"]["label_size"] == 100
    (tmp_path / "not_a_head.pt").write_bytes(b"\0" * 10)
    with pytest.raises(ValueError, match="not_a_head.pt: cannot be read"):
        load_head(tmp_path / "not_a_head.pt")
    torch.save({"weights": 1}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="other.pt: not a alfred_fine_mask_head/1 file"):
        load_head(tmp_path / "other.pt")


def test_the_agent_takes_its_masks_from_the_head(tmp_path, agent):
    path = _head_file(tmp_path, agent)
    with_head = MaskHeadCheckpointAgent(
        CKPT, mask_head=str(path), mask_head_actions=["PickupObject"]
    ).inner
    head, _ = load_head(path)
    frame = _frame(1)
    cont = torch.randn(1, agent.model.dec.cont_dim)
    feat = agent.model.prepare_frames(agent.features([frame]))
    with torch.no_grad():
        want = frame_logits(
            frame_logits(
                head(cont, feat, layer3_features(agent.features, torch.from_numpy(frame)[None])),
                (100, 100),
            ),
            (300, 300),
        )[0]
        got = with_head._mask_logits(cont, feat, frame, "PickupObject")
        plain = agent._mask_logits(cont, feat, frame, "PickupObject")
        put = with_head._mask_logits(cont, feat, frame, "PutObject")
    assert torch.allclose(got, want, atol=1e-6) and got.shape == (300, 300)
    assert not torch.allclose(got, plain)  # the model's own decoder is no longer asked for a pickup
    assert torch.equal(
        put, agent._mask_logits(cont, feat, frame, "PutObject")
    )  # but still for the rest


def test_mask_head_actions_must_name_interactions(tmp_path, agent):
    path = _head_file(tmp_path, agent)
    for bad in (["MoveAhead"], [], "PickupObject"):
        with pytest.raises(
            Exception, match="mask_head_actions must be a non-empty list of interaction actions"
        ):
            MaskHeadCheckpointAgent(CKPT, mask_head=str(path), mask_head_actions=bad)


@pytest.mark.parametrize(
    "kind, encoder, cond_dim, message",
    [
        ("type+f14", None, 30, "oracle"),
        ("state+f14", {"weights": "random", "seed": 3}, None, "trained on encoder"),
        ("state", None, 17, "decoder state of width 17"),
    ],
)
def test_a_head_that_does_not_fit_the_agent_is_refused(
    tmp_path, agent, kind, encoder, cond_dim, message
):
    path = _head_file(tmp_path, agent, kind, encoder, cond_dim)
    with pytest.raises(Exception, match=message):
        MaskHeadCheckpointAgent(CKPT, mask_head=str(path))


@pytest.mark.slow
def test_probe_trains_heads_on_collected_rollouts_and_the_agent_loads_them(tmp_path):
    """End to end: own-state rollouts with RGB frames -> the probe's heads -> an agent that uses one."""
    import json
    import subprocess
    import sys

    from experiments.alfred_masks import closed_loop_masks as clm

    clm.collect(
        CKPT,
        REPO / "data" / "alfred_lite",
        "train",
        episodes=8,
        seed=0,
        out=tmp_path / "rolls",
        max_steps=40,
        keep_rgb=True,
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments.alfred_masks.mask_probe",
            "--rollouts",
            str(tmp_path / "rolls"),
            "--heads",
            "state+f14,type+f14",
            "--steps",
            "4",
            "--held-out",
            "0.3",
            "--save-heads",
            str(tmp_path / "heads"),
            "--out",
            str(tmp_path / "probe"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((tmp_path / "probe" / "probe.json").read_text())
    assert set(report["curves"]) == {"state+f14", "type+f14"} and report["rows"]["fitted"] > 0
    assert (tmp_path / "probe" / "probe.png").is_file()
    assert sorted(p.name for p in (tmp_path / "heads").iterdir()) == [
        "state+f14.pt"
    ]  # the oracle is not saved
    MaskHeadCheckpointAgent(CKPT, mask_head=str(tmp_path / "heads" / "state+f14.pt"))
