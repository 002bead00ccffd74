"""Teacher-forced ALFRED data: sequences from traj_data.json (+ features), batches, the AllenAct
streaming storage and ALFRED's losses. Real fixtures (../shared/data/alfred) skip cleanly when
absent; the generated-dataset test makes one demonstration itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from alfred_task import constants as C
from alfred_task.data.il_dataset import MAX_SUBGOALS, AlfredILDataset, DemoDataError, load_features
from alfred_task.training.il_storage import AlfredDemoStorage, to_allenact_batch
from alfred_task.models.allenact_losses import alfred_rollout_losses
from alfred_task.models.losses import LossWeights
from alfred_task.models.observations import EXPERT_ACTION_UUID, EXPERT_MASK_UUID, LANG_GOAL_UUID
from alfred_task.data.masks import decompress_mask

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "alfred"


@pytest.fixture(scope="module")
def fixtures() -> Path:
    if not (SHARED / "splits_mini.json").is_file():
        pytest.skip(f"ALFRED fixtures not available ({SHARED} missing)")
    return SHARED


@pytest.fixture(scope="module")
def train_ds(fixtures) -> AlfredILDataset:
    return AlfredILDataset(
        fixtures / "json_2.1.0", fixtures / "splits_mini.json", "train", load_features=False
    )


def _traj(ds: AlfredILDataset, i: int) -> dict:
    return json.loads((ds.examples[i].traj_dir / "traj_data.json").read_text())


def test_sequences_follow_alfred_preprocessing(train_ds):
    stop_w = train_ds.vocab.word.word2index(C.STOP, train=False)
    assert len(train_ds) == 24  # 8 train trajectories x 3 annotations
    for i, ex in enumerate(train_ds.examples):
        traj = _traj(train_ds, i)
        low = traj["plan"]["low_actions"]
        assert ex.num_steps == len(low) + 1
        assert ex.action_low[-1] == C.ACTION_LOW_VOCAB.index(C.STOP)
        assert [C.ACTION_LOW_VOCAB[a] for a in ex.action_low[:-1]] == [
            la["discrete_action"]["action"] for la in low
        ]
        assert ex.lang_goal[-1] == C.GOAL_INDEX and ex.lang_instr[-1] == stop_w
        assert ex.valid_interact.sum() == sum(
            C.has_interaction(la["discrete_action"]["action"]) for la in low
        )
        assert (
            list(ex.high_idx[:-1]) == [la["high_idx"] for la in low]
            or len(low) != len(ex.high_idx) - 1
        )


def test_batch_shapes_padding_and_targets(train_ds):
    idx = [0, 5, 11]
    b = train_ds.batch(idx)
    exs = [train_ds.examples[i] for i in idx]
    t_max = max(ex.num_steps for ex in exs)
    assert (
        b["action_low"].shape == b["pad_mask"].shape == b["subgoals_completed"].shape == (3, t_max)
    )
    assert b["seq_len"].tolist() == [ex.num_steps for ex in exs]
    assert "frames" not in b  # load_features=False
    for row, ex in enumerate(exs):
        n = ex.num_steps
        assert b["pad_mask"][row].sum() == n and not b["pad_mask"][row, n:].any()
        assert (b["action_low"][row, n:] == 0).all()
        assert b["subgoal_progress"][row, n - 1] == pytest.approx(1.0)
        assert torch.allclose(
            b["subgoals_completed"][row, :n], torch.tensor(ex.high_idx / MAX_SUBGOALS).float()
        )
        assert b["lang_goal"][row, : b["lang_goal_len"][row]].tolist() == ex.lang_goal.tolist()
    # masks are packed in (b, t) order of the interaction steps, decoded from the RLE
    vi = b["action_low_valid_interact"]
    assert b["action_low_mask"].shape == (int(vi.sum()), 300, 300)
    first = np.stack([decompress_mask(r) for r in exs[0].masks_rle])
    assert np.array_equal(b["action_low_mask"][: len(first)].numpy().astype(bool), first)
    small = AlfredILDataset.__new__(AlfredILDataset)
    small.__dict__.update(train_ds.__dict__, mask_size=75)
    assert small.batch(idx)["action_low_mask"].shape == (int(vi.sum()), 75, 75)


def test_order_is_seeded_and_covers_each_example_once(train_ds):
    a = [t for b in train_ds.batches(5, seed=3, epoch=0) for t in zip(b["task"], b["repeat_idx"])]
    again = [
        t for b in train_ds.batches(5, seed=3, epoch=0) for t in zip(b["task"], b["repeat_idx"])
    ]
    other = [
        t for b in train_ds.batches(5, seed=3, epoch=1) for t in zip(b["task"], b["repeat_idx"])
    ]
    assert a == again and a != other
    assert (
        sorted(a) == sorted((ex.task, ex.repeat_idx) for ex in train_ds.examples)
        and len(set(a)) == 24
    )


def test_features_per_step_and_per_image_layouts(train_ds, tmp_path):
    ex = train_ds.examples[0]
    traj_dir = tmp_path / "t"
    shutil.copytree(ex.traj_dir, traj_dir)
    moved = type(ex)(**{**ex.__dict__, "traj_dir": traj_dir})
    n = ex.num_steps
    per_step = torch.randn(n, 512, 7, 7)
    torch.save(per_step, traj_dir / "feat_conv.pt")
    assert torch.equal(load_features(moved), per_step)
    per_image = torch.randn(len(ex.images), 512, 7, 7)  # full dataset: one per listed image
    torch.save(per_image, traj_dir / "feat_conv.pt")
    first = [ex.images.index(t) for t in range(n - 1)]
    assert torch.equal(load_features(moved), per_image[first + first[-1:]])
    torch.save(torch.randn(3, 512, 7, 7), traj_dir / "feat_conv.pt")
    with pytest.raises(DemoDataError, match="3 features for"):
        load_features(moved)


def test_streaming_storage_epochs_partitions_and_frames(train_ds):
    store = AlfredDemoStorage("unused", "unused", batch_size=4, seed=1, dataset=train_ds)
    seen, frames = [], 0
    while True:
        try:
            b = store.next_batch()
        except EOFError:
            break
        seen += list(zip(b["task"], b["repeat_idx"]))
        frames += int(b["seq_len"].sum())
        assert b["bsize"] == int(b["seq_len"].sum())
    assert len(seen) == 24 and store.total_experiences == frames == train_ds.num_frames
    assert store.updates_for_frames(train_ds.num_frames) == 6  # 24 examples in batches of 4
    store.reset_stream()
    b = store.next_batch()
    assert store.epoch == 1 and list(zip(b["task"], b["repeat_idx"])) != seen[:4]
    parts = []
    for k in range(2):
        s = AlfredDemoStorage("unused", "unused", batch_size=4, seed=1, dataset=train_ds)
        s.set_partition(k, 2)
        got = []
        with pytest.raises(EOFError):
            while True:
                b = s.next_batch()
                got += list(zip(b["task"], b["repeat_idx"]))
        parts.append(set(got))
    assert not parts[0] & parts[1] and len(parts[0] | parts[1]) == 24


def _perfect_extras(b: dict, scale: float = 30.0) -> dict:
    """The wrapper's extras ([T, B]) of a model that reproduces the demonstration exactly."""
    actions = b["action_low"].T
    logits = torch.full((*actions.shape, len(C.ACTION_LOW_VOCAB)), -scale)
    logits.scatter_(2, actions[..., None], scale)
    sel = torch.tensor([C.has_interaction(a) for a in C.ACTION_LOW_VOCAB])[actions]
    gold = to_allenact_batch(b)["observations"][EXPERT_MASK_UUID][sel].float()
    return {
        "alfred_vocab_logits": logits,
        "alfred_mask_steps": sel,
        "alfred_mask_logits": (gold * 2 - 1) * scale,
        "alfred_subgoal": b["subgoals_completed"].T.clone(),
        "alfred_progress": b["subgoal_progress"].T.clone(),
    }


def test_allenact_batch_carries_the_demonstration_as_expert_labels(train_ds):
    b = train_ds.batch([0, 1, 2])
    ab = to_allenact_batch(b)
    obs = ab["observations"]
    n_b, n_t = b["action_low"].shape
    assert obs[EXPERT_ACTION_UUID].shape == (n_t, n_b, 2) and ab["masks"].shape == (n_t, n_b, 1)
    assert (
        torch.equal(obs[EXPERT_ACTION_UUID][..., 1].bool(), b["pad_mask"].T)
        and ab["masks"][0].sum() == 0
    )
    assert torch.equal(obs[LANG_GOAL_UUID][-1], b["lang_goal"]) and ab["bsize"] == int(
        b["seq_len"].sum()
    )
    assert int(obs[EXPERT_MASK_UUID].sum()) == int(
        b["action_low_mask"].sum()
    )  # every gold pixel, unpacked
    w = LossWeights(subgoal_aux=0.1, progress_aux=0.1)
    names = C.ACTION_LOW_VOCAB
    total, info = alfred_rollout_losses(obs, _perfect_extras(b), w, names)
    assert total.item() < 1e-6 and set(info) == {
        "action_low",
        "action_low_mask",
        "subgoal_aux",
        "progress_aux",
        "total",
    }
    bad = _perfect_extras(b)
    bad["alfred_mask_logits"], bad["alfred_progress"] = (
        -bad["alfred_mask_logits"],
        1 - bad["alfred_progress"],
    )
    _, info_bad = alfred_rollout_losses(obs, bad, w, names)
    assert info_bad["action_low_mask"] > 10 and info_bad["progress_aux"] > 0.01
    zero = dict(_perfect_extras(b), alfred_vocab_logits=torch.zeros(n_t, n_b, len(names)))
    _, info_zero = alfred_rollout_losses(obs, zero, w, names)
    frac = float(b["pad_mask"].float().mean())  # mean over all positions, padding included (ALFRED)
    assert info_zero["action_low"] == pytest.approx(np.log(len(names)) * frac, rel=1e-5)


def test_generated_dataset_records_encoder_resumes_and_feeds_the_batches(tmp_path):
    from alfred_task.data.dataset_meta import DatasetMetaError, read_meta
    from alfred_task.gen.generate import generate, main

    out = tmp_path / "data"
    summary = generate(
        out,
        1,
        seed=5,
        workers=1,
        features="random_resnet18",
        planner="template",
        split="valid_seen",
    )
    assert summary["splits"]["valid_seen"] == 3 and summary["failed"] == 0
    meta = read_meta(out)
    assert (
        meta["visual_encoder"]["name"] == "random_resnet18" and meta["visual_encoder"]["seed"] == 0
    )
    assert meta["runs"]["valid_seen"] == {"seed": 5, "planner": "template", "backend": "thor_lite"}
    (traj_file,) = list((out / "valid_seen").glob("*/*/traj_data.json"))
    stale = traj_file.parent.parent / ".tmp_killed"  # what a SIGKILLed writer leaves behind
    (stale / "raw_images").mkdir(parents=True)
    mtime = traj_file.stat().st_mtime_ns
    generate(
        out,
        1,
        seed=5,
        workers=1,
        features="random_resnet18",
        planner="template",
        split="valid_seen",
    )
    assert (
        traj_file.stat().st_mtime_ns == mtime and not stale.exists()
    )  # finished demo skipped, temp removed
    with pytest.raises(DatasetMetaError, match="visual_encoder"):
        generate(
            out,
            2,
            seed=5,
            workers=1,
            features="random_resnet18",
            planner="template",
            split="valid_seen",
            encoder_seed=1,
        )
    with pytest.raises(DatasetMetaError, match="other settings"):
        generate(
            out,
            2,
            seed=6,
            workers=1,
            features="random_resnet18",
            planner="template",
            split="valid_seen",
        )
    assert (
        len(list((out / ".progress" / "valid_seen").glob("*.json"))) == 1
    )  # refused before any work
    assert (
        main(
            [
                "--out",
                str(out),
                "--num",
                "2",
                "--seed",
                "6",
                "--split",
                "valid_seen",
                "--visual-encoder",
                "random_resnet18",
                "--planner",
                "template",
                "--workers",
                "1",
            ]
        )
        == 2
    )
    ds = AlfredILDataset(out, out / "splits.json", "valid_seen")
    b = ds.batch([0, 1])
    feats = torch.load(traj_file.parent / "feat_conv.pt")
    assert b["frames"].shape == (2, feats.shape[0], 512, 7, 7) and torch.equal(
        b["frames"][0], feats
    )


def test_imagenet_without_cached_weights_fails_in_one_line(tmp_path, capsys):
    from alfred_task.data.features import imagenet_weights_path
    from alfred_task.gen.generate import main

    if imagenet_weights_path().is_file():
        pytest.skip("ImageNet weights are cached on this machine")
    out = tmp_path / "out"
    assert main(["--out", str(out), "--num", "1", "--features", "imagenet"]) == 2
    err = capsys.readouterr().err
    assert (
        str(imagenet_weights_path()) in err
        and "random_resnet18" in err
        and len(err.strip().splitlines()) == 1
    )
    assert not out.exists()


def test_unusable_splits_are_named(fixtures, train_ds):
    root, splits = fixtures / "json_2.1.0", fixtures / "splits_mini.json"
    with pytest.raises(DemoDataError, match="'nope' is not in the split file"):
        AlfredILDataset(root, splits, "nope", vocab=train_ds.vocab, load_features=False)
    with pytest.raises(DemoDataError, match="no plan"):
        AlfredILDataset(root, splits, "tests_seen", vocab=train_ds.vocab, load_features=False)
    with pytest.raises(DemoDataError, match="features not found"):
        AlfredILDataset(root, splits, "valid_seen", vocab=train_ds.vocab).batch([0])


def test_vocab_is_the_one_preprocessing_writes(fixtures, train_ds, tmp_path):
    from alfred_task.data.preprocess import preprocess_splits

    written, _ = preprocess_splits(
        fixtures / "json_2.1.0", fixtures / "splits_mini.json", tmp_path, progress=False
    )

    def words(v):
        return [v.word.index2word(i) for i in range(len(v.word))]

    assert words(train_ds.vocab) == words(written) and len(written.word) > 100
