"""Visual encoder trained on thor_lite frames (alfred_task.training.encoder_pretrain): labels come from the
instance masks cell by cell, the trained file is a resnet18 state_dict the feature extractor
accepts, and training is deterministic for a seed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from alfred_task.training.encoder_pretrain import TypeVocab, cell_targets


def test_cell_targets_keep_a_type_where_it_fills_enough_of_a_cell():
    h = w = 56  # grid 7: cells of 8×8 pixels
    apple = np.zeros((h, w), bool)
    apple[0:8, 0:4] = True  # half of cell 0
    pen = np.zeros((h, w), bool)
    pen[9, 1] = True  # one pixel (1/64) of cell 7 (row 1, col 0)
    mug_a = np.zeros((h, w), bool)
    mug_a[0, 24:26] = True  # two instances of one type in cell 3 add up to 3/64
    mug_b = np.zeros((h, w), bool)
    mug_b[1, 24] = True
    masks = {"Apple|1|2|3": apple, "Pen|0|0|0": pen, "Mug|a": mug_a, "Mug|b": mug_b}

    vocab = TypeVocab()
    pairs = cell_targets(masks, vocab, grid=7, min_fraction=0.05)
    names = vocab.names()
    got = {(int(c), names[t]) for c, t in pairs}
    assert got == {(0, "Apple")}  # pen (1/64) and mugs (3/64) are below 5 %
    pairs = cell_targets(masks, vocab, grid=7, min_fraction=3 / 64)  # neither mug alone reaches it
    assert {(int(c), vocab.names()[t]) for c, t in pairs} == {(0, "Apple"), (3, "Mug")}
    pairs = cell_targets(masks, vocab, grid=7, min_fraction=1 / 64)
    assert {(int(c), vocab.names()[t]) for c, t in pairs} == {(0, "Apple"), (3, "Mug"), (7, "Pen")}
    assert sorted(vocab.names()) == ["Apple", "Mug", "Pen"]  # one entry per type, not per instance
    assert cell_targets({}, vocab).shape == (0, 2)


def test_replayed_frames_are_labelled_with_the_objects_in_view(tmp_path):
    from alfred_task.training.encoder_pretrain import collect_frames, train_trajectories
    from alfred_task.gen.generate import generate

    generate(tmp_path / "d", 1, seed=3, workers=1, planner="template", split="train")
    files = train_trajectories(tmp_path / "d")
    traj = json.loads(files[0].read_text())
    frames, labels, owner, vocab = collect_frames(files, every=1, grid=28, progress=False)
    low = traj["plan"]["low_actions"]
    assert frames.shape == (len(low) + 1, 224, 224, 3) and frames.dtype == np.uint8
    assert owner == [0] * len(frames)
    # the frame the agent picks the target up from shows the target's type somewhere
    target = traj["pddl_params"]["object_target"]
    k = next(i for i, la in enumerate(low) if la["discrete_action"]["action"] == "PickupObject")
    assert vocab.index[target] in set(labels[k][:, 1].tolist())
    assert all(lab[:, 0].max() < 28 * 28 for lab in labels if len(lab))


def _tiny_set(n: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    frames = rng.integers(0, 256, (n, 224, 224, 3), dtype=np.uint8)
    labels = [np.asarray([[rng.integers(28 * 28), rng.integers(3)]], np.int32) for _ in range(n)]
    return frames, labels, [i // 2 for i in range(n)]


def test_trained_encoder_is_a_resnet18_file_the_feature_extractor_loads(tmp_path):
    import torch

    from alfred_task.training.encoder_pretrain import save_encoder, train_encoder
    from alfred_task.data.features import ResnetFeatures, dequantize_state

    frames, labels, owner = _tiny_set()
    net, record = train_encoder(
        frames,
        labels,
        owner,
        num_types=3,
        epochs=1,
        batch=4,
        progress=False,
        log_dir=tmp_path / "tb",
    )
    first = {k: v.clone() for k, v in net.resnet.state_dict().items()}
    assert (
        record["train_frames"] == 6 and record["held_out_frames"] == 2
    )  # one trajectory of four held out
    assert "held_out" in record["history"][-1]
    meta = save_encoder(net, tmp_path / "enc.pt", {**record, "types": ["A", "B", "C"]})
    assert json.loads(meta.read_text())["types"] == ["A", "B", "C"]
    assert not (tmp_path / "enc.pt.tmp").exists()
    assert (tmp_path / "enc.pt").stat().st_size < 0.3 * 4 * sum(
        p.numel() for p in net.resnet.parameters()
    )
    feats = ResnetFeatures(str(tmp_path / "enc.pt"))
    assert feats.encoder["weights"] == "file"
    x = torch.from_numpy(frames[:2])
    with torch.no_grad():
        trained = net.body(((x.permute(0, 3, 1, 2).float() / 255) - feats.mean) / feats.std)
        # the file holds int8 weights: its features are the dequantized network's, close to the float one's
        net.resnet.load_state_dict(
            dequantize_state(torch.load(tmp_path / "enc.pt", weights_only=True)), strict=False
        )
        ours = net.body(((x.permute(0, 3, 1, 2).float() / 255) - feats.mean) / feats.std)
    assert torch.allclose(feats(list(frames[:2])), ours, atol=1e-5)
    assert float((ours - trained).norm() / trained.norm()) < 0.05
    random = ResnetFeatures("random_resnet18")
    assert not torch.allclose(
        random(list(frames[:2])), ours, atol=1e-3
    )  # training changed the weights

    again, _ = train_encoder(frames, labels, owner, num_types=3, epochs=1, batch=4, progress=False)
    b = again.resnet.state_dict()
    assert all(torch.equal(first[k], b[k]) for k in first)  # same seed, same weights


def test_grid_must_be_a_multiple_of_the_feature_map():
    from alfred_task.training.encoder_pretrain import EncoderPretrainNet

    with pytest.raises(ValueError, match="multiple of 7"):
        EncoderPretrainNet(3, grid=10)


def test_compact_state_is_int8_per_channel_and_dequantizes_within_half_a_step():
    import torch

    from alfred_task.data.features import COMPACT_FORMAT, dequantize_state, quantize_state

    g = torch.Generator().manual_seed(0)
    state = {
        "conv.weight": torch.randn(4, 3, 3, 3, generator=g)
        * torch.tensor([1.0, 0.01, 5.0, 0.0]).view(4, 1, 1, 1),
        "bn.running_mean": torch.randn(4, generator=g),
        "bn.num_batches_tracked": torch.tensor(7),
    }
    q = quantize_state(state)
    assert q["__format__"] == COMPACT_FORMAT and q["conv.weight"]["q"].dtype == torch.int8
    back = dequantize_state(q)
    assert set(back) == set(state)
    step = q["conv.weight"]["scale"].view(4, 1, 1, 1)
    assert bool(((back["conv.weight"] - state["conv.weight"]).abs() <= step / 2 + 1e-7).all())
    assert (
        torch.equal(back["bn.running_mean"], state["bn.running_mean"])
        and int(back["bn.num_batches_tracked"]) == 7
    )
    assert not back["conv.weight"][3].any()  # an all-zero channel stays zero (no division by zero)
    again = dequantize_state(quantize_state(back))
    assert all(
        torch.allclose(again[k].float(), back[k].float(), rtol=1e-6, atol=0) for k in back
    )  # stable


def test_a_damaged_compact_file_is_one_clear_error(tmp_path):
    import torch

    from alfred_task.data.features import COMPACT_FORMAT, ResnetFeatures

    bad = tmp_path / "bad.pt"
    torch.save({"__format__": COMPACT_FORMAT, "conv1.weight": {"scale": torch.ones(64)}}, bad)
    with pytest.raises(ValueError, match="bad.pt: a damaged compact resnet18 state_dict"):
        ResnetFeatures(str(bad))
