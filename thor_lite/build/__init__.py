"""thor_lite as an AI2-THOR build: an executable that ai2thor's own Controller can launch.

    from ai2thor.controller import Controller
    from thor_lite.build import executable_path
    c = Controller(local_executable_path=executable_path(), scene="FloorPlan1", x_display=":0")

The executable answers on the Unity side of ai2thor 5.0.0's FIFO protocol, so the genuine
client (its argument encoding, Event decoding and life cycle) runs on CPU without Unity.
"""
from __future__ import annotations

from typing import Any

__all__ = ["executable_path"]


def executable_path(*args: Any, **kwargs: Any) -> str:
    """Path of a launcher for `Controller(local_executable_path=...)` (see launcher.py)."""
    from .launcher import executable_path as _path

    return _path(*args, **kwargs)
