"""Caches of compiled scene data and of built worlds are keyed on every setting that changes them."""

from __future__ import annotations

import pickle

import pytest

import thor_lite.scene_data as scene_data
from thor_lite import Controller
from thor_lite.controller import _BASE_WORLDS


def test_layout_dilation_is_part_of_the_world_cache_key(monkeypatch):
    monkeypatch.setenv("THOR_LITE_LAYOUT_DILATION", "1")
    c = Controller(scene="FloorPlan1", width=64, height=64)
    try:
        assert c._world.layout_dilation == 1
        wide = set(c._world.room_cells)
        monkeypatch.setenv("THOR_LITE_LAYOUT_DILATION", "0")
        c.reset("FloorPlan1")  # a cached world built with dilation 1 must not be reused
        assert c._world.layout_dilation == 0
        assert set(c._world.room_cells) == set(c._world.layout) < wide
        keys = [k for k in _BASE_WORLDS if k[0] == "FloorPlan1" and k[4] == 64]
        assert {k[8] for k in keys} >= {0, 1}  # the layout dilation
    finally:
        c.stop()


def test_layout_dilation_rejects_bad_values(monkeypatch):
    monkeypatch.setenv("THOR_LITE_LAYOUT_DILATION", "-2")
    with pytest.raises(scene_data.SceneDataError, match="THOR_LITE_LAYOUT_DILATION"):
        scene_data.layout_dilation()


def test_scene_cache_is_written_atomically_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("THOR_LITE_CACHE", str(tmp_path))
    monkeypatch.setattr(scene_data, "_SCENES", None)
    scenes = scene_data.all_scene_records()
    files = list(tmp_path.iterdir())
    assert (
        len(files) == 1 and files[0].name.startswith("ithor_scenes_") and files[0].suffix == ".pkl"
    )
    assert files[0].stat().st_mode & 0o777 == 0o644
    with open(files[0], "rb") as f:
        assert pickle.load(f).keys() == scenes.keys()
    monkeypatch.setattr(scene_data, "_SCENES", None)
    monkeypatch.setattr(scene_data, "_compile", lambda src: pytest.fail("cache not reused"))
    assert scene_data.all_scene_records().keys() == scenes.keys()
