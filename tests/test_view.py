"""Smoke tests of the thor_lite.view CLI (needs headless EGL, like test_render)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from thor_lite.render import BoxRenderer, RendererUnavailable

try:
    _probe = BoxRenderer(4, 4)
    _probe.gl_renderer_name
    _probe.release()
except RendererUnavailable as exc:  # pragma: no cover - depends on the machine
    pytest.skip(f"headless EGL/OpenGL unavailable: {exc}", allow_module_level=True)

from thor_lite import view  # noqa: E402


def test_cli_writes_all_outputs(tmp_path):
    assert (
        view.main(
            [
                "FloorPlan1",
                "--out",
                str(tmp_path),
                "--width",
                "64",
                "--height",
                "48",
                "--steps",
                "4",
                "--quiet",
            ]
        )
        == 0
    )
    for kind in ("rgb", "depth", "seg"):
        with Image.open(tmp_path / f"FloorPlan1_{kind}.png") as im:
            assert im.size == (64, 48) and im.mode == "RGB"
            assert len(np.unique(np.asarray(im).reshape(-1, 3), axis=0)) > 2
    with Image.open(tmp_path / "FloorPlan1_topdown.png") as im:
        assert min(im.size) > 100
    with Image.open(tmp_path / "FloorPlan1_walk.gif") as im:
        assert im.size == (128, 48) and im.n_frames == 5  # start + 4 successful steps


def test_unknown_scene_exits_2(tmp_path, capsys):
    assert view.main(["Nope", "--out", str(tmp_path), "--quiet"]) == 2
    assert "Nope" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_depth_colormap():
    d = np.array([[0.0, 0.5, 5.0, 9.0]], np.float32)
    rgb = view.depth_to_rgb(d)
    assert rgb.shape == (1, 4, 3) and rgb.dtype == np.uint8
    assert not rgb[0, 0].any()  # no hit: black
    assert (rgb[0, 2] == rgb[0, 3]).all()  # clipped at 5 m
    assert view.depth_to_gray(d).tolist() == [[0, 26, 255, 255]]
