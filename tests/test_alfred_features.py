"""Visual encoder selection for ALFRED features: ImageNet weights from the torch hub folder or a
clear, immediate error; seeded random ResNet-18 only when asked for; records of what was used."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import torch

from alfred_task.data.features import (
    RANDOM_ENCODER,
    ResnetFeatures,
    check_encoder,
    imagenet_weights_path,
)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture()
def torch_home(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    return tmp_path / "torch_home"


def _frames(n: int = 2) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, (300, 300, 3), dtype=np.uint8) for _ in range(n)]


def test_missing_imagenet_weights_fail_fast_naming_file_and_folder(torch_home):
    path = imagenet_weights_path()
    assert path == torch_home / "hub" / "checkpoints" / "resnet18-f37072fd.pth"
    t0 = time.perf_counter()
    with pytest.raises(FileNotFoundError) as e:
        ResnetFeatures("imagenet")
    assert time.perf_counter() - t0 < 5.0
    msg = str(e.value)
    assert "resnet18-f37072fd.pth" in msg and str(path.parent) in msg and RANDOM_ENCODER in msg
    assert "\n" not in msg


def test_imagenet_weights_read_from_hub_folder(torch_home):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        import torchvision

        state = torchvision.models.resnet18(weights=None).state_dict()
    imagenet_weights_path().parent.mkdir(parents=True)
    torch.save(state, imagenet_weights_path())
    feats = ResnetFeatures("imagenet")
    assert feats.encoder == {
        "name": "resnet18",
        "weights": "imagenet",
        "file": str(imagenet_weights_path()),
    }
    assert torch.equal(feats.body[0].weight, state["conv1.weight"])
    out = feats(_frames(1))
    assert out.shape == (1, 512, 7, 7) and out.dtype == torch.float32


def test_random_encoder_is_seeded_and_recorded():
    a, b = ResnetFeatures(RANDOM_ENCODER), ResnetFeatures(RANDOM_ENCODER)
    c = ResnetFeatures(f"{RANDOM_ENCODER}:7")
    assert (
        a.encoder == {"name": RANDOM_ENCODER, "weights": "random", "seed": 0}
        and c.encoder["seed"] == 7
    )
    frames = _frames(1)
    fa = a(frames)
    assert torch.equal(fa, b(frames)) and not torch.equal(fa, c(frames))
    state = torch.get_rng_state()
    ResnetFeatures(RANDOM_ENCODER)
    assert torch.equal(state, torch.get_rng_state())  # global RNG untouched
    with pytest.raises(ValueError, match="seed after ':'"):
        check_encoder(f"{RANDOM_ENCODER}:x")
    assert ResnetFeatures(RANDOM_ENCODER)([]).shape == (0, 512, 7, 7)


def test_state_dict_file_encoder(tmp_path):
    import torchvision

    torch.save(torchvision.models.resnet18(weights=None).state_dict(), tmp_path / "mine.pt")
    assert ResnetFeatures(str(tmp_path / "mine.pt")).encoder["weights"] == "file"
    (tmp_path / "junk.pt").write_bytes(b"junk")
    with pytest.raises(ValueError, match="junk.pt: not a resnet18 state_dict"):
        ResnetFeatures(str(tmp_path / "junk.pt"))


def test_a_relative_shipped_encoder_path_resolves_from_any_working_directory(tmp_path, monkeypatch):
    from alfred_task.data.features import check_encoder

    rel = "pretrained_model_ckpts/alfred_thor_resnet18/thor_resnet18.pt"
    repo = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(tmp_path)  # a checkpoint records the encoder by this relative path
    assert check_encoder(rel)["file"] == str((repo / rel).resolve())
    with pytest.raises(FileNotFoundError, match="nowhere.pt"):
        check_encoder("nowhere.pt")
