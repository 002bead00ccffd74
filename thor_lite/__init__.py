"""thor_lite: an embedded, CPU-only simulator that speaks AI2-THOR 5.0's Controller API.

from thor_lite import Controller
c = Controller(scene="FloorPlan1", width=224, height=224, renderDepthImage=True)
event = c.step(action="MoveAhead")
"""

from .controller import Controller
from .event import Event
from .scene_data import SceneDataError

__all__ = ["Controller", "Event", "SceneDataError"]
__version__ = "0.1.0"
