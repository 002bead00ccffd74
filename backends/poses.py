"""Agent poses as both backends' actions take them."""

from __future__ import annotations

from typing import Any, Dict


def teleport_kwargs(pose: Dict[str, Any]) -> Dict[str, Any]:
    """`TeleportFull` arguments (forced) putting the agent at a pose of `GetInteractablePoses`
    (keys x, y, z, rotation, horizon, standing)."""
    return {
        "position": {"x": pose["x"], "y": pose["y"], "z": pose["z"]},
        "rotation": {"x": 0.0, "y": pose["rotation"], "z": 0.0},
        "horizon": pose["horizon"],
        "standing": pose["standing"],
        "forceAction": True,
    }
