"""`object_visibility` tries a few points per object before the rest (unless only a few points are
candidates); the answer must be the one a single pass over every point gives, on seeded random
poses in several scenes and both rules."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from thor_lite import Controller, visibility
from thor_lite.world import AgentState

SCENES = ("FloorPlan1", "FloorPlan212", "FloorPlan305", "FloorPlan420")


@pytest.mark.parametrize("first_hit", (False, True))
@pytest.mark.parametrize("scene", SCENES)
def test_two_passes_equal_one(scene, first_hit, monkeypatch):
    c = Controller(scene=scene, width=64, height=64)
    try:
        w = c._world
        w.profile = replace(w.profile, first_hit_visibility=first_hit)
        w.clear_cache()
        positions = c.step("GetReachablePositions").metadata["actionReturn"]
        rng = random.Random(scene)
        seen_any = 0
        for _ in range(25):
            p = rng.choice(positions)
            x, z = p["x"], p["z"]
            agent = AgentState(
                x,
                w.agent.y,
                z,
                rng.choice((0.0, 90.0, 180.0, 270.0)),
                rng.choice((-30.0, 0.0, 30.0, 60.0)),
            )
            for dist in (1.5, 5.0):
                default = visibility.object_visibility(w, agent=agent, max_distance=dist)
                monkeypatch.setattr(visibility, "SINGLE_PASS_POINTS", 0)  # always two passes
                two = visibility.object_visibility(w, agent=agent, max_distance=dist)
                monkeypatch.setattr(visibility, "FIRST_PASS_POINTS", 10**9)
                one = visibility.object_visibility(w, agent=agent, max_distance=dist)
                monkeypatch.setattr(visibility, "FIRST_PASS_POINTS", 3)
                monkeypatch.setattr(visibility, "SINGLE_PASS_POINTS", 32)
                w.clear_cache()  # nothing remembered from the poses and distances before
                fresh = visibility.object_visibility(w, agent=agent, max_distance=dist)
                assert two == one == default == fresh
                seen_any += sum(v for v, _ in one.values())
        assert seen_any > 0
    finally:
        c.stop()
