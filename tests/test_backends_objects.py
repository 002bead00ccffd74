"""Dataset-name resolution on metadata dicts (`backends.find_object`), valid on both backends."""

from __future__ import annotations

from backends import find_object
from backends.objects import type_from_name


def _obj(name: str, object_type: str, xyz):
    x, y, z = xyz
    return {
        "name": name,
        "objectType": object_type,
        "objectId": f"{object_type}|{x:+.2f}|{y:+.2f}|{z:+.2f}",
        "position": {"x": x, "y": y, "z": z},
    }


OBJECTS = [
    _obj("Glassbottle_a6112717", "Bottle", (1.0, 0.9, -0.5)),
    _obj("Glassbottle_335b79c8", "Bottle", (3.0, 0.9, 2.0)),
    _obj("Mug_1", "Mug", (1.05, 0.9, -0.5)),
]


def test_exact_name_and_object_id_win():
    assert find_object(OBJECTS, name="Mug_1")["name"] == "Mug_1"
    assert find_object(OBJECTS, object_id=OBJECTS[1]["objectId"])["name"] == "Glassbottle_335b79c8"


def test_foreign_name_resolves_by_type_and_position():
    """A name from another build (other hash) is the nearest object of its type."""
    hit = find_object(OBJECTS, name="Mug_deadbeef", position=(1.0, 0.9, -0.5))
    assert hit["name"] == "Mug_1"


def test_asset_name_prefix_that_is_not_a_type():
    """THOR names bottles `Glassbottle_<hash>` while their objectType is `Bottle`."""
    assert type_from_name("Glassbottle_c5dfb511") == "Bottle"
    assert type_from_name("Apple_12ab") == "Apple"
    hit = find_object(OBJECTS, name="Glassbottle_c5dfb511", position=(2.9, 0.9, 2.1))
    assert hit is not None and hit["name"] == "Glassbottle_335b79c8"


def test_nothing_within_reach_is_none():
    assert find_object(OBJECTS, name="Glassbottle_c5dfb511", position=(9.0, 0.9, 9.0)) is None
    assert find_object(OBJECTS, name="Statue_1", position=(1.0, 0.9, -0.5)) is None
