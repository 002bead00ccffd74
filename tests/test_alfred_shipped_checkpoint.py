"""The shipped lite Seq2Seq+PM checkpoints (pretrained_model_ckpts/alfred_seq2seq_pm_il/, trained on
2 CPU cores, and alfred_seq2seq_pm_gpu/, the first GPU run) stay loadable: at most 20 MB, AllenAct's layout without optimizer state, strict load through
`--agent checkpoint`, the encoder, dimensions, mask head and inference options its README names,
and it acts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from alfred_task import constants as C
from alfred_task.evaluation.agents import CheckpointAgent

CKPTS = Path(__file__).resolve().parents[1] / "pretrained_model_ckpts"
SHIPPED = [
    CKPTS / name / "alfred_seq2seq_pm_lite.pt"
    for name in ("alfred_seq2seq_pm_il", "alfred_seq2seq_pm_gpu")
]

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class _Env:
    class last_event:  # noqa: N801 - what the agent reads
        frame = np.random.default_rng(0).integers(0, 256, (300, 300, 3), dtype=np.uint8)


@pytest.mark.parametrize("shipped", SHIPPED, ids=lambda p: p.parent.name)
def test_shipped_file_is_small_allenact_format_without_optimizer_state(shipped):
    assert shipped.stat().st_size <= 20 * 1000 * 1000
    ckpt = torch.load(shipped, map_location="cpu", weights_only=True)
    assert "model_state_dict" in ckpt and "total_steps" in ckpt
    assert "optimizer_state_dict" not in ckpt


@pytest.mark.parametrize("shipped", SHIPPED, ids=lambda p: p.parent.name)
def test_shipped_checkpoint_loads_strictly_and_acts(shipped):
    agent = CheckpointAgent(shipped).inner  # Seq2SeqAgent.load_state_dict is strict
    assert agent.visual_encoder["weights"] == "file"  # the shipped thor_lite ResNet-18
    assert Path(agent.visual_encoder["file"]).name == "thor_resnet18.pt"
    assert agent.model.dec.emb.weight.shape[1] == 64  # lite demb
    assert agent.model.dec.progress_monitor  # Seq2Seq+PM: subgoal and progress heads
    assert agent.model.dec.mask_dec.subcell and not agent.model.dec.mask_dec.spatial
    # the inference options its numbers were measured with, stored in its record
    assert (
        agent.obstruction_evasion and agent.mask_rule.spec == "top_k:700@PickupObject+SliceObject"
    )
    assert agent.interaction_retry == 4 and agent.retry_actions == {"PickupObject", "SliceObject"}
    traj = {
        "turk_annotations": {
            "anns": [
                {
                    "task_desc": "Put a cold apple on the table.",
                    "high_descs": ["Walk to the fridge.", "Pick up the apple."],
                }
            ]
        }
    }
    agent.reset(traj, 0, _Env)
    action, mask = agent.act(_Env)
    assert action in C.AGENT_ACTIONS
    assert (mask is None) == (not C.has_interaction(action))
    assert mask is None or mask.shape == C.MASK_SHAPE
