"""`experiments.alfred_masks.closed_loop_masks`: labels on the agent's own states, and a mask-decoder-only fit.

Real episodes of the shipped checkpoint on the shipped `data/alfred_lite` trajectories; the
demonstration features of the fit are random (the fit's mechanics, not its numbers, are tested)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from experiments.alfred_masks import closed_loop_masks as clm
from alfred_task.evaluation.agents import CheckpointAgent, expert_steps
from alfred_task.evaluation.episodes import prefix_end, replay_steps, run_task_episode
from alfred_task.evaluation.inputs import load_traj, resolve_entries
from alfred_task.evaluation.runner import make_env
from alfred_task.evaluation.subgoals import SubgoalTracker

REPO = Path(__file__).resolve().parents[1]
CKPT = REPO / "pretrained_model_ckpts" / "alfred_seq2seq_pm_gpu" / "alfred_seq2seq_pm_lite.pt"
ALFRED = REPO / "data" / "alfred_lite"
PREFIX = clm.MASK_DECODER_PREFIX

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def env():
    e = make_env("thor_lite", 300)
    yield e
    e.stop()


@pytest.fixture(scope="module")
def agent():
    return CheckpointAgent(CKPT).inner


def _train_entries():
    return resolve_entries(ALFRED, ALFRED / "splits.json", "train")


def _at_first_pickup(env, agent):
    """A train episode teacher-forced through the expert up to its first PickupObject subgoal
    whose target is in view; (traj, tracker)."""
    for e in _train_entries():
        traj = load_traj(e.path)
        high = [h["discrete_action"]["action"] for h in traj["plan"]["high_pddl"]]
        if "PickupObject" not in high:
            continue
        steps = expert_steps(traj)
        env.init_episode(traj)
        tracker = SubgoalTracker(traj, env)
        agent.reset(traj, e.repeat_idx, env)
        assert (
            replay_steps(
                env, agent, tracker, steps, 0, prefix_end(steps, high.index("PickupObject"))
            )
            is None
        )
        target = tracker.rid(tracker.current()["objectId"])
        if env.last_event.instance_masks.get(target) is not None:
            return traj, tracker
    pytest.fail("no train episode of data/alfred_lite reaches a visible pickup target")


def test_labeller_records_the_target_mask_and_the_agents_own_decoder_features(env, agent):
    traj, tracker = _at_first_pickup(env, agent)
    labeller = clm.StepLabeller(env, agent, keep_rgb=True)
    state = agent.snapshot()
    labeller(tracker)
    assert all(a is b for a, b in zip(agent.snapshot(), state))  # no state change
    (row,) = labeller.rows
    subgoal, cont, feat, packed, side = row
    target = tracker.rid(tracker.current()["objectId"])
    gold = np.asarray(env.last_event.instance_masks[target], dtype=bool)
    assert subgoal == "PickupObject" and side == 300
    assert np.array_equal(
        np.unpackbits(packed)[: side * side].reshape(side, side).astype(bool), gold
    )
    with torch.no_grad():
        _lo, cont_again, _h, _c, feat_again = agent._decode(np.asarray(env.last_event.frame))
    assert torch.equal(cont, cont_again[0]) and torch.equal(
        feat.float(), feat_again[0].half().float()
    )
    (rgb,) = labeller.rgb  # the frame the agent decided on, and the target's object type
    assert rgb.dtype == torch.uint8 and np.array_equal(
        rgb.numpy(), np.asarray(env.last_event.frame)
    )
    assert labeller.target_types == [target.split("|")[0]] and target.startswith(
        labeller.target_types[0] + "|"
    )
    # at the start the tracker is on a GotoLocation: nothing to label
    env.init_episode(traj)
    agent.reset(traj, 0, env)
    labeller(SubgoalTracker(traj, env))
    labeller(None)
    assert len(labeller.rows) == len(labeller.rgb) == len(labeller.target_types) == 1


def test_before_step_hook_sees_every_decision_and_changes_nothing(env, agent):
    e = resolve_entries(ALFRED, ALFRED / "splits.json", "valid_seen")[0]
    traj = load_traj(e.path)
    plain = run_task_episode(env, agent, traj, e.repeat_idx, max_steps=12)
    seen = []
    hooked = run_task_episode(
        env,
        agent,
        traj,
        e.repeat_idx,
        max_steps=12,
        before_step=lambda tr: seen.append(tr.get_subgoal_idx()),
    )
    assert hooked == plain
    decisions = plain["path_len"] + (plain["end_reason"] in ("stop", "max_fails"))
    assert len(seen) == decisions and seen == sorted(seen)


def _random_feature_copy(tmp: Path, n: int) -> Path:
    """data/alfred_lite with random ResNet features for its first `n` train trajectories (only
    those stay in the train split)."""
    root = tmp / "demos"
    shutil.copytree(ALFRED, root)
    splits = json.loads((root / "splits.json").read_text())
    kept, gen = [], torch.Generator().manual_seed(0)
    for e in splits["train"]:
        traj_dir = root / "train" / e["task"]
        if len({k["task"] for k in kept} | {e["task"]}) > n:
            break
        kept.append(e)
        steps = (
            len(json.loads((traj_dir / "traj_data.json").read_text())["plan"]["low_actions"]) + 1
        )
        if not (traj_dir / "feat_conv.pt").exists():
            torch.save(
                torch.randn(steps, 512, 7, 7, generator=gen).abs(), traj_dir / "feat_conv.pt"
            )
    splits["train"] = kept
    (root / "splits.json").write_text(json.dumps(splits))
    return root


def test_demonstration_steps_are_the_decoder_features_of_step_by_step_decoding(agent, tmp_path):
    from alfred_task.data.il_dataset import AlfredILDataset

    root = _random_feature_copy(tmp_path, 1)
    model = agent.model.eval()
    got = clm.demo_interaction_steps(agent.policy, root, agent.vocab, limit=1)
    b = AlfredILDataset(
        root, root / "splits.json", "train", vocab=agent.vocab, mask_size=model.pframe
    ).batch([0])
    sel = b["action_low_valid_interact"][0]
    assert len(got["cont"]) == int(sel.sum()) > 0 and got["masks"].shape == (
        len(got["cont"]),
        100,
        100,
    )
    with torch.no_grad():  # the agent's own inference path, teacher-forced with the gold actions
        state = model.start(b["lang_goal"], b["lang_instr"])
        conts = []
        for t in range(int(b["seq_len"][0])):
            _lo, cont, (h, c), _s, _p = model.dec.step(
                state.enc,
                model.prepare_frames(b["frames"][:, t]),
                state.e_prev,
                (state.h, state.c),
                state.valid,
            )
            conts.append(cont[0])
            state = type(state)(state.enc, state.valid, h, c, model.dec.emb(b["action_low"][:, t]))
    expect = torch.stack(conts)[sel[: len(conts)]]
    assert torch.allclose(got["cont"], expect, atol=1e-5)


@pytest.mark.slow
def test_collect_then_fit_changes_only_the_mask_decoder_and_fits_its_labels(tmp_path):
    rolls = tmp_path / "rolls"
    summary = clm.collect(CKPT, ALFRED, "train", episodes=12, seed=0, out=rolls, max_steps=40)
    assert summary["episodes"] == 12 and summary["labelled_steps"] > 0
    blob = torch.load(rolls / "rollouts_0of1.pt", weights_only=False)
    assert len(blob["records"]) == 12 and len(blob["subgoal"]) == len(blob["cont"]) == len(
        blob["masks"]
    )
    assert set(blob["subgoal"]) <= set(clm.LABELLED_SUBGOALS)
    assert (
        len(blob["target_type"]) == len(blob["subgoal"]) and "rgb" not in blob
    )  # frames only with keep_rgb
    assert int(blob["episode"].max()) < 12 and blob["episode"].tolist() == sorted(
        blob["episode"].tolist()
    )

    demos = _random_feature_copy(tmp_path, 2)
    out = tmp_path / "ft" / "ft.pt"
    res = clm.fit(
        CKPT, rolls, demos, out, steps=40, batch=16, lr=1e-3, seed=0, held_out=0.0, eval_every=20
    )
    first, last = res["curve"][0]["rollouts_train"], res["curve"][-1]["rollouts_train"]
    assert last["bce"] < first["bce"]
    old = torch.load(CKPT, weights_only=False)["model_state_dict"]
    new = torch.load(out, weights_only=False)["model_state_dict"]
    assert new.keys() == old.keys()
    changed = {
        k for k, v in old.items() if isinstance(v, torch.Tensor) and not torch.equal(v, new[k])
    }
    assert changed and all(k.startswith(PREFIX) for k in changed)
    assert all(new[k].dtype == old[k].dtype for k in changed)
    assert new["_extra_state"] == old["_extra_state"]
    CheckpointAgent(out)  # loads strictly
    assert (
        json.loads(out.with_suffix(".json").read_text())["steps"] == 40
        and out.with_suffix(".png").is_file()
    )


@pytest.mark.slow
def test_collect_exclude_from_takes_the_rest_of_the_split(tmp_path):
    first = clm.collect(CKPT, ALFRED, "train", episodes=5, seed=0, out=tmp_path / "a", max_steps=5)
    rest = clm.collect(
        CKPT,
        ALFRED,
        "train",
        episodes=10_000,
        seed=0,
        out=tmp_path / "b",
        max_steps=5,
        exclude_from=tmp_path / "a",
    )

    def eps(folder):
        return [
            (r["trial"], r["repeat_idx"])
            for r in torch.load(folder / "rollouts_0of1.pt", weights_only=False)["records"]
        ]

    a, b = eps(tmp_path / "a"), eps(tmp_path / "b")
    assert first["episodes"] == 5 and rest["episodes"] == len(_train_entries()) - 5
    assert not set(a) & set(b) and len(set(a) | set(b)) == len(_train_entries())
    with pytest.raises(clm.UsageError, match="--exclude-from .*none: no rollouts"):
        clm.collect(
            CKPT,
            ALFRED,
            "train",
            episodes=1,
            seed=0,
            out=tmp_path / "c",
            exclude_from=tmp_path / "none",
        )


def test_fit_refuses_rollouts_of_another_model(tmp_path):
    rolls = tmp_path / "r"
    rolls.mkdir()
    _fake_rollouts(rolls / "rollouts_0of1.pt", ["t"], 1)
    with pytest.raises(clm.UsageError, match="width 7"):
        clm.fit(CKPT, rolls, ALFRED, tmp_path / "o.pt", steps=1)
    assert not (tmp_path / "o.pt").exists()


def _fake_rollouts(path: Path, trials: list, rows: int, width: int = 7) -> None:
    """A rollouts file in `collect`'s format: `trials` episodes, `rows` labelled steps of the last one."""
    packed = np.packbits(np.ones((rows, 300 * 300), dtype=bool), axis=1)
    torch.save(
        {
            "meta": {"mask_side": 300},
            "records": [{"trial": t, "repeat_idx": 0} for t in trials],
            "subgoal": ["PickupObject"] * rows,
            "episode": torch.full((rows,), len(trials) - 1, dtype=torch.long),
            "cont": torch.zeros(rows, width),
            "frames": torch.zeros(rows, 512, 7, 7).half(),
            "masks": torch.from_numpy(packed),
        },
        path,
    )


def test_rollout_files_join_with_episode_ids_across_files(tmp_path):
    _fake_rollouts(tmp_path / "rollouts_0of2.pt", ["a", "b"], 0)  # a shard without a labelled step
    _fake_rollouts(tmp_path / "rollouts_1of2.pt", ["c"], 2)
    got = clm.load_rollouts(tmp_path, 100)
    assert got["episode"].tolist() == [2, 2] and [got["trial_of"][i] for i in got["episode"]] == [
        "c#0",
        "c#0",
    ]
    assert got["masks"].shape == (2, 100, 100) and bool(got["masks"].all())
    train, held = clm.held_out_split(got["trial_of"], got["episode"], 1.0, 0)
    assert train.tolist() == [] and held.tolist() == [0, 1]


def test_shift_cells_moves_features_and_mask_together():
    frames = torch.zeros(3, 2, 7, 7)
    masks = torch.zeros(3, 70, 70)
    frames[:, :, 3, 3] = 1.0  # the object in the centre cell ...
    masks[:, 30:40, 30:40] = 1.0  # ... and its pixels
    got_f, got_m = clm.shift_cells(frames, masks, torch.tensor([[0, 0], [1, -2], [-3, 3]]))
    assert torch.equal(got_f[0], frames[0]) and torch.equal(got_m[0], masks[0])
    assert got_f[1, :, 4, 1].eq(1).all() and got_f[1].sum() == 2
    assert got_m[1, 40:50, 10:20].eq(1).all() and got_m[1].sum() == 100
    assert (
        got_f[2, :, 0, 6].eq(1).all()
        and got_m[2, 0:10, 60:70].eq(1).all()
        and got_m[2].sum() == 100
    )
    edge = torch.zeros(1, 1, 7, 7)
    edge[0, 0, :, 6] = 1.0  # a column at the right edge leaves the view when moved right
    assert clm.shift_cells(edge, torch.zeros(1, 70, 70), torch.tensor([[0, 1]]))[0].sum() == 0
