"""The protocol every ALFRED evaluation agent follows (see `alfred_task.evaluation.agents` for the details).

Why its own module: the online expert (`expert`) and the Seq2Seq agent (`models.agent`) implement
it, and the agents module builds them by reference; with the protocol here neither imports the
registry, so there is no import cycle between them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Optional, Tuple

import numpy as np

__all__ = ["ActionMask", "Agent"]

ActionMask = Tuple[str, Optional[np.ndarray]]


class Agent(ABC):
    """Base class of every evaluable agent (see the module doc for the protocol)."""

    #: True when `snapshot`/`restore` capture everything `act` depends on (besides the env), so
    #: subgoal evaluation may resume the agent from a saved prefix state instead of replaying it
    supports_snapshot: bool = False

    @abstractmethod
    def reset(self, traj: dict, repeat_idx: int, env) -> None:
        """Start an episode: ``traj`` is the traj_data dict, ``repeat_idx`` the annotation."""

    @abstractmethod
    def act(self, env) -> ActionMask:
        """Next (low action name or "<<stop>>", mask or None)."""

    def teacher_force(self, env, action: str, mask: Optional[np.ndarray], success: bool) -> None:
        """The harness executed ``action`` for the agent (expert prefix of subgoal evaluation)."""

    def episode_error(self) -> Optional[str]:
        """Why the agent gave up this episode (e.g. the expert found no plan), else None.

        The harness records it as the episode's ``failure``; ask after the episode ended.
        """
        return None

    def snapshot(self) -> Any:
        """The agent's episode state (after `reset` and teacher forcing), for `restore`."""
        raise NotImplementedError(f"{type(self).__name__} does not support snapshots")

    def restore(self, state: Any) -> None:
        """Go back to a `snapshot`; later `act` calls answer as they would have from there."""
        raise NotImplementedError(f"{type(self).__name__} does not support snapshots")
