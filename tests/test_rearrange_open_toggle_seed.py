"""The 2023 open toggle's seed agrees with the official computation on the official val split.

Official: `int(md5(canonicaljson.encode_canonical_json(task_spec.__dict__)).hexdigest(), 16)`,
hashed after reset, when agent_rotation is already rounded to a multiple of 90. Here the dict is
rebuilt by hand from the raw pickle (not through our loader or RearrangeTaskSpec).
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import pickle
from collections import OrderedDict
from pathlib import Path

import canonicaljson
import pytest

from rearrange.dataset import load_dataset
from rearrange.environment import RearrangeTaskSpec
from rearrange.tasks import open_toggle_seed

SHARED_VAL = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "data"
    / "rearrangement"
    / "2023_val.pkl.gz"
)
needs_val = pytest.mark.skipif(
    not SHARED_VAL.is_file(), reason="official 2023 val split not available (../shared)"
)
NAMED = ("agent_position", "agent_rotation", "openable_data", "starting_poses", "target_poses")


def official_seed(scene: str, index: int, ep: dict) -> int:
    """RearrangeTaskSpec(**ep).__dict__ as the official code builds it, after an axis-aligned reset."""
    d = {
        "scene": ep.get("scene", scene),
        "stage": ep.get("stage", "val"),
        **{k: ep[k] for k in NAMED},
        "runtime_sample": False,
        "runtime_data": {},
        "metrics": {
            "index": index,
            **{k: v for k, v in ep.items() if k not in NAMED + ("scene", "stage")},
        },
    }
    d["agent_rotation"] = round(d["agent_rotation"] / 90.0) * 90
    return int(hashlib.md5(canonicaljson.encode_canonical_json(d)).hexdigest(), 16)


@pytest.fixture(scope="module")
def raw():
    with gzip.open(SHARED_VAL, "rb") as f:
        return pickle.load(f)


@needs_val
def test_seed_of_every_official_val_episode(raw):
    ours = load_dataset(SHARED_VAL, stage="val")
    n = 0
    for scene, eps in raw.items():
        for i, ep in enumerate(eps):
            spec = RearrangeTaskSpec(**copy.deepcopy(ours[scene][i]))
            spec.agent_rotation = (
                round(spec.agent_rotation / 90.0) * 90
            )  # what reset(force_axis_aligned_start) does
            assert open_toggle_seed(spec) == official_seed(scene, i, ep), f"{scene} episode {i}"
            n += 1
    assert n == 1000


@needs_val
def test_the_unshuffle_task_uses_that_seed(raw):
    """End to end for one episode: the spec hashed by the task is the one after reset."""
    from allenact.base_abstractions.sensor import SensorSuite

    from rearrange.tasks import RearrangeTaskSampler

    scene, index = "FloorPlan24", 3
    ep = load_dataset(SHARED_VAL, stage="val")[scene][index]
    assert (
        ep["agent_rotation"] == 150 and ep["openable_data"]
    )  # rounded to 180 by reset; has a toggle
    sampler = RearrangeTaskSampler(
        run_walkthrough_phase=False,
        run_unshuffle_phase=True,
        stage="val",
        scenes_to_task_spec_dicts=OrderedDict({scene: [copy.deepcopy(ep)]}),
        rearrange_env_kwargs={},
        sensors=SensorSuite([]),
        max_steps=10,
        epochs=1,
        seed=0,
        force_axis_aligned_start=True,
    )
    try:
        task = sampler.next_task()
        assert task.open_toggle_seed == official_seed(scene, index, raw[scene][index])
    finally:
        sampler.close()
