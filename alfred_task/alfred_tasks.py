"""ALFRED as an AllenAct task on thor_lite (or AI2-THOR), with the online expert labelling every step.

Why: DAgger needs the learner to act and an expert that answers from whatever state it reached;
:class:`alfred_task.planning.expert.AlfredExpert` replans from any state, so every step gets a label
(``expert_action`` and ``expert_mask`` sensors in :mod:`alfred_task.alfred_sensors`).

Actions are the ids of ALFRED's ``action_low`` vocabulary (`constants.ACTION_LOW_VOCAB`, 15
entries), so model logits, expert labels and offline ``action_low`` targets share one index.
``<<stop>>`` ends the episode; ``<<pad>>``/``<<seg>>`` are sent to the env and fail as in ALFRED's
evaluation. The episode also ends after `MAX_FAILS` failed actions or ``max_steps``.

An action is an action id or, from a policy built with ``emit_masks`` (``allenact --eval``),
``{"action": id, "mask": the mask decoder's P×P logits}``: the task then interacts with the
model's own mask (upsampled to the frame, sigmoid > 0.5: ALFRED's agent), as ``python -m
alfred_task.evaluation --agent checkpoint`` does. A plain id (training) needs a mask from elsewhere: the
expert's mask when the learner chose the expert's interaction, else the instance mask of the
visible interactable object nearest the image centre (``interaction_mask``); the mask head is
trained on the ``expert_mask`` labels.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import gym
import numpy as np
from allenact.base_abstractions.misc import RLStepResult
from allenact.base_abstractions.sensor import Sensor
from allenact.base_abstractions.task import Task

from alfred_task import constants as C
from alfred_task.env.environment import INTERACTABLE_KEYS, AlfredEnv
from alfred_task.planning.expert import AlfredExpert, ExpertAction, ExpertError
from alfred_task.planning import PlanningError
from alfred_task.task_types import make_task

ACTION_NAMES: Tuple[str, ...] = tuple(C.ACTION_LOW_VOCAB)
STOP_ID = ACTION_NAMES.index(C.STOP)


def center_object_mask(env: AlfredEnv) -> Optional[np.ndarray]:
    """Instance mask of the visible interactable object whose pixels lie nearest the centre."""
    ev = env.last_event
    meta = {o["objectId"]: o for o in ev.metadata["objects"]}
    best: Tuple[float, str] = (float("inf"), "")
    for oid, m in sorted(ev.instance_masks.items()):
        if oid not in meta or not any(meta[oid].get(k) for k in INTERACTABLE_KEYS) or not m.any():
            continue
        rows, cols = np.nonzero(m)
        h, w = m.shape
        d = float(np.min((rows - h / 2) ** 2 + (cols - w / 2) ** 2))
        best = min(best, (d, oid))
    return None if not best[1] else np.asarray(ev.instance_masks[best[1]], dtype=bool)


class AlfredOnlineTask(Task[AlfredEnv]):
    """One (trajectory, annotation) episode; the expert answers lazily and once per step."""

    @classmethod
    def class_action_names(cls, **kwargs: Any) -> Tuple[str, ...]:
        return ACTION_NAMES

    def __init__(
        self,
        env: AlfredEnv,
        sensors: Sequence[Sensor],
        task_info: Dict[str, Any],
        max_steps: int,
        planner: str = "template",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            env=env, sensors=sensors, task_info=task_info, max_steps=max_steps, **kwargs
        )
        traj = task_info["traj"]
        self.goal = make_task(traj)
        self.planner = planner
        self.expert: Optional[AlfredExpert] = None
        self._expert_cache: Tuple[int, Optional[ExpertAction]] = (-1, None)
        self.expert_failures = 0
        self.num_fails = 0
        self._stopped = False
        self.prev_action = 0  # <<pad>> before the first step: the model uses its `go` vector
        self.actions_taken: List[str] = []
        #: interaction steps, and those that used the policy's own mask (`emit_masks`)
        self.interactions = self.model_mask_interactions = 0

    @property
    def action_space(self) -> gym.spaces.Discrete:
        return gym.spaces.Discrete(len(ACTION_NAMES))

    def render(self, mode: str = "rgb", *args: Any, **kwargs: Any) -> np.ndarray:
        return self.env.last_event.frame

    def close(self) -> None:
        pass  # the sampler owns the env

    def reached_terminal_state(self) -> bool:
        return self._stopped or self.num_fails >= C.MAX_FAILS

    # --- the expert -----------------------------------------------------------------------------
    def expert_step(self) -> Optional[ExpertAction]:
        """The expert's next action from the current state (None when it cannot plan); cached
        per agent step so the action and mask sensors share one query."""
        key = self.env.num_actions
        if self._expert_cache[0] == key:
            return self._expert_cache[1]
        try:
            if self.expert is None:
                traj = self.task_info["traj"]
                self.expert = AlfredExpert(
                    self.env, traj["task_type"], traj["pddl_params"], self.planner
                )
            act: Optional[ExpertAction] = self.expert.next_action()
        except (ExpertError, PlanningError):
            self.expert_failures += 1
            act = None
        self._expert_cache = (key, act)
        return act

    def query_expert(self, **kwargs: Any) -> Tuple[int, bool]:
        act = self.expert_step()
        if act is None:
            return 0, False
        return ACTION_NAMES.index(act.action), True

    # --- acting ----------------------------------------------------------------------------------
    def interaction_mask(self, name: str) -> Optional[np.ndarray]:
        act = self.expert_step() if self.expert is not None else None
        if act is not None and act.action == name and act.mask is not None:
            return act.mask
        return center_object_mask(self.env)

    def model_mask(self, logits: Any) -> np.ndarray:
        """The frame mask ALFRED's agent sends for the mask decoder's flattened P×P `logits`."""
        from alfred_task.models.mask_rules import MaskRule, frame_logits

        flat = np.asarray(logits, dtype=np.float32).reshape(-1)
        side = int(round(flat.size**0.5))
        if side * side != flat.size:
            raise ValueError(f"mask logits of {flat.size} values are not a square map")
        md = self.env.last_event.metadata
        shape = (int(md["screenHeight"]), int(md["screenWidth"]))
        return MaskRule()(frame_logits(flat.reshape(1, side, side), shape)[0])

    def _step(self, action: Union[int, Mapping[str, Any]]) -> RLStepResult:
        logits = None
        if isinstance(action, Mapping):
            action, logits = action["action"], action["mask"]
        name = ACTION_NAMES[int(action)]
        self.prev_action = int(action)
        self.actions_taken.append(name)
        if name == C.STOP:
            self._stopped = True
        else:
            self.interactions += int(C.has_interaction(name))
            if C.has_interaction(name) and logits is not None:
                mask = self.model_mask(logits)
                self.model_mask_interactions += 1
            else:
                mask = self.interaction_mask(name) if C.has_interaction(name) else None
            if C.has_interaction(name) and mask is None:
                mask = np.zeros(C.MASK_SHAPE, dtype=bool)
            ok = self.env.va_interact(name, mask)[0]
            self.num_fails += 0 if ok else 1
        return RLStepResult(
            observation=self.get_observations(),
            reward=0.0,
            done=self.is_done(),
            info={"action_name": name},
        )

    def metrics(self) -> Dict[str, Any]:
        if not self.is_done():
            return {}
        s, ts = self.goal.goal_conditions_met(self.env)
        success = float(s == ts)
        expert_len = len(self.task_info["traj"]["plan"]["low_actions"])
        steps = max(len([a for a in self.actions_taken if a != C.STOP]), 1)
        info = {k: self.task_info[k] for k in ("task", "repeat_idx", "task_type")}
        weight = min(1.0, expert_len / steps)
        # numerators/denominators of ALFRED's micro-averaged GC and L*-weighted PLW (§5.2): AllenAct
        # averages per-episode scalars, and ratios of those means are ALFRED's aggregates
        # (`alfred_task.evaluation.allenact_metrics`)
        return {
            "ep_length": self.num_steps_taken(),
            "task_info": info,
            "success": success,
            "goal_condition_success": s / max(ts, 1),
            "success_plw": success * weight,
            "num_fails": float(self.num_fails),
            "expert_failures": float(self.expert_failures),
            "stopped": float(self._stopped),
            "gc_completed": float(s),
            "gc_total": float(ts),
            "expert_len": float(expert_len),
            "plw_success_num": success * weight * expert_len,
            "plw_gc_num": s / max(ts, 1) * weight * expert_len,
            "interactions": float(self.interactions),
            "model_mask_interactions": float(self.model_mask_interactions),
        }
