"""THOR actions, grouped by what they touch; importing this package registers them all."""

from . import interaction, navigation, scene_setup  # noqa: F401
from .registry import ACTIONS, ActionFailed, InvalidArguments  # noqa: F401
