"""AllenAct sensors for ALFRED's Seq2Seq agents (inputs §6.1, expert labels for DAgger).

=================  ==========================  =====================================================
uuid               space                        value
=================  ==========================  =====================================================
``LANG_GOAL``      Box int64 [max_goal_len]     word ids of task_desc + ``<<goal>>``, 0-padded
``LANG_INSTR``     Box int64 [max_instr_len]    word ids of the step instructions + ``<<stop>>``
``RESNET``         Box float32 [512, 7, 7]      ResNet-18 conv features of the current frame
                                                (``ResnetFeatureSensor`` in the sampler, or ``RGB``
                                                uint8 [300, 300, 3] + ``ResnetFeaturePreprocessor``)
``EXPERT_ACTION``  [action id, success] int64   the online expert's next action (action_low ids)
``EXPERT_MASK``    Box uint8 [S, S]             its interaction mask (zeros for navigation/stop)
``EXPERT_HIGH_IDX`` Box int64 [1]               the subgoal index of the expert's next action
``EXPERT_PROGRESS`` Box float32 [1]             (t+1)/(L*+1), L* = the demonstration's length
``PREV_ACTION``    Box int64 [1]                the last action id (0 = <<pad>> at the start)
=================  ==========================  =====================================================

The uuid strings are `alfred_task.models.observations`' ``<NAME>_UUID`` constants, which the
model, the offline storage and the losses read too.

Why inline features: the samplers see the frame anyway and ALFRED's model reads 512×7×7 maps,
so storing features (100 KB/step) instead of 300×300 frames keeps rollouts small and the encoder
identical to the one that featurised the offline demonstrations.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import gym
import numpy as np
import torch
from allenact.base_abstractions.preprocessor import Preprocessor
from allenact.base_abstractions.sensor import AbstractExpertActionSensor, Sensor

from alfred_task import constants as C
from alfred_task.models.observations import (
    EXPERT_ACTION_UUID,
    EXPERT_HIGH_IDX_UUID,
    EXPERT_MASK_UUID,
    EXPERT_PROGRESS_UUID,
    LANG_GOAL_UUID,
    LANG_INSTR_UUID,
    PREV_ACTION_UUID,
    RESNET_UUID,
    RGB_UUID,
)

__all__ = [
    "LanguageSensor",
    "GoalTokensSensor",
    "InstructionTokensSensor",
    "ResnetFeatureSensor",
    "FrameSensor",
    "ResnetFeaturePreprocessor",
    "AlfredExpertActionSensor",
    "ExpertMaskSensor",
    "ExpertHighIdxSensor",
    "ExpertProgressSensor",
    "PrevActionSensor",
]

MAX_GOAL_LEN = 64
MAX_INSTR_LEN = 512


class LanguageSensor(Sensor):
    """0-padded word ids of ``task.task_info[key]`` (one fixed length so AllenAct can batch them)."""

    def __init__(self, key: str, max_len: int, uuid: Optional[str] = None, **kwargs: Any) -> None:
        self.key, self.max_len = key, int(max_len)
        space = gym.spaces.Box(
            low=0, high=np.iinfo(np.int64).max, shape=(self.max_len,), dtype=np.int64
        )
        super().__init__(uuid=uuid or key, observation_space=space, **kwargs)

    def get_observation(self, env: Any, task: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        ids = task.task_info[self.key]
        if len(ids) > self.max_len:
            raise ValueError(
                f"{task.task_info.get('task')} repeat_idx {task.task_info.get('repeat_idx')}: "
                f"{self.key} has {len(ids)} tokens, more than max_len={self.max_len}"
            )
        out = np.zeros(self.max_len, dtype=np.int64)
        out[: len(ids)] = ids
        return out


class GoalTokensSensor(LanguageSensor):
    def __init__(
        self, max_len: int = MAX_GOAL_LEN, uuid: str = LANG_GOAL_UUID, **kwargs: Any
    ) -> None:
        super().__init__("lang_goal", max_len, uuid, **kwargs)


class InstructionTokensSensor(LanguageSensor):
    def __init__(
        self, max_len: int = MAX_INSTR_LEN, uuid: str = LANG_INSTR_UUID, **kwargs: Any
    ) -> None:
        super().__init__("lang_instr", max_len, uuid, **kwargs)


class ResnetFeatureSensor(Sensor):
    """ResNet-18 conv features of the current frame, computed in the sampler process.

    `encoder` is what ``alfred_task.data.features.ResnetFeatures`` accepts ("imagenet",
    "random_resnet18" with `seed`, or a state_dict path); "imagenet" without the cached weights
    fails when the sensor is built, naming the file.
    """

    def __init__(
        self, encoder: str = "imagenet", seed: int = 0, uuid: str = RESNET_UUID, **kwargs: Any
    ) -> None:
        from alfred_task.data.features import check_encoder, seeded_spec

        check_encoder(seeded_spec(encoder, seed))
        self.encoder_name, self.seed = encoder, int(seed)
        self._net: Any = None
        space = gym.spaces.Box(low=-np.inf, high=np.inf, shape=(512, 7, 7), dtype=np.float32)
        super().__init__(uuid=uuid, observation_space=space, **kwargs)

    @property
    def net(self) -> Any:
        if self._net is None:  # built lazily in the sampler process
            from alfred_task.data.features import ResnetFeatures, seeded_spec

            self._net = ResnetFeatures(seeded_spec(self.encoder_name, self.seed))
        return self._net

    def get_observation(self, env: Any, task: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        with torch.inference_mode():
            return self.net([env.last_event.frame])[0].numpy()


class FrameSensor(Sensor):
    """``rgb``: the raw uint8 frame, for `ResnetFeaturePreprocessor` (features on the trainer's GPU)."""

    def __init__(self, size: int = C.SCREEN_SIZE, uuid: str = RGB_UUID, **kwargs: Any) -> None:
        space = gym.spaces.Box(low=0, high=255, shape=(size, size, 3), dtype=np.uint8)
        super().__init__(uuid=uuid, observation_space=space, **kwargs)

    def get_observation(self, env: Any, task: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        return np.ascontiguousarray(env.last_event.frame, dtype=np.uint8)


class ResnetFeaturePreprocessor(Preprocessor):
    """``rgb`` -> ``frames`` [512, 7, 7] in the trainer process, batched, on its device (GPU runs:
    samplers only render, the encoder runs once per step for all of them)."""

    def __init__(
        self,
        encoder: str = "imagenet",
        seed: int = 0,
        input_uuids: Sequence[str] = (RGB_UUID,),
        output_uuid: str = RESNET_UUID,
        device: Optional[torch.device] = None,
        **kwargs: Any,
    ) -> None:
        from alfred_task.data.features import check_encoder, seeded_spec

        check_encoder(seeded_spec(encoder, seed))
        self.encoder_name, self.seed, self.device = (
            encoder,
            int(seed),
            torch.device(device or "cpu"),
        )
        self._net: Any = None
        space = gym.spaces.Box(low=-np.inf, high=np.inf, shape=(512, 7, 7), dtype=np.float32)
        super().__init__(
            input_uuids=list(input_uuids), output_uuid=output_uuid, observation_space=space
        )

    def to(self, device: torch.device) -> "ResnetFeaturePreprocessor":
        self.device = torch.device(device)
        if self._net is not None:
            self._net.to(self.device)
        return self

    def process(self, obs: Dict[str, Any], *args: Any, **kwargs: Any) -> torch.Tensor:
        if self._net is None:
            from alfred_task.data.features import ResnetFeatures, seeded_spec

            self._net = ResnetFeatures(seeded_spec(self.encoder_name, self.seed)).to(self.device)
        frames = obs[self.input_uuids[0]]
        lead = frames.shape[:-3]
        out = self._net.encode(frames.reshape(-1, *frames.shape[-3:]))
        return out.reshape(*lead, *out.shape[1:])


class AlfredExpertActionSensor(AbstractExpertActionSensor):
    """``expert_action``: the online expert's next action id and whether it could plan."""

    def __init__(self, uuid: str = EXPERT_ACTION_UUID, **kwargs: Any) -> None:
        super().__init__(
            action_space=gym.spaces.Discrete(len(C.ACTION_LOW_VOCAB)), uuid=uuid, **kwargs
        )

    def query_expert(self, task: Any, expert_sensor_group_name: Optional[str]) -> tuple:
        return task.query_expert()


class ExpertMaskSensor(Sensor):
    """``expert_mask``: the expert's interaction mask, nearest-resized to `size` (uint8 0/1)."""

    def __init__(
        self, size: int = C.SCREEN_SIZE, uuid: str = EXPERT_MASK_UUID, **kwargs: Any
    ) -> None:
        self.size = int(size)
        space = gym.spaces.Box(low=0, high=1, shape=(self.size, self.size), dtype=np.uint8)
        super().__init__(uuid=uuid, observation_space=space, **kwargs)

    def get_observation(self, env: Any, task: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        out = np.zeros((self.size, self.size), dtype=np.uint8)
        act = None if task.is_done() else task.expert_step()
        if act is None or act.mask is None:
            return out
        m = np.asarray(act.mask, dtype=np.uint8)
        if m.shape != out.shape:
            rows = np.arange(self.size) * m.shape[0] // self.size
            cols = np.arange(self.size) * m.shape[1] // self.size
            m = m[rows][:, cols]
        return m


class ExpertHighIdxSensor(Sensor):
    """The subgoal index (high_idx) of the expert's next action: the progress monitor's subgoal
    target, ``high_idx / 25`` in the loss (0 when the expert cannot plan; that step is masked)."""

    def __init__(self, uuid: str = EXPERT_HIGH_IDX_UUID, **kwargs: Any) -> None:
        space = gym.spaces.Box(low=0, high=np.iinfo(np.int64).max, shape=(1,), dtype=np.int64)
        super().__init__(uuid=uuid, observation_space=space, **kwargs)

    def get_observation(self, env: Any, task: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        act = None if task.is_done() else task.expert_step()
        return np.array([0 if act is None else act.high_idx], dtype=np.int64)


class ExpertProgressSensor(Sensor):
    """Overall-progress target online: (t+1)/(L*+1), capped at 1, with L* the demonstration's
    low-action count. Offline ALFRED uses (t+1)/T of the demonstration itself; a learner that
    strays has no exact T, so the demonstration's length stands in for it."""

    def __init__(self, uuid: str = EXPERT_PROGRESS_UUID, **kwargs: Any) -> None:
        space = gym.spaces.Box(low=0.0, high=1.0, shape=(1,), dtype=np.float32)
        super().__init__(uuid=uuid, observation_space=space, **kwargs)

    def get_observation(self, env: Any, task: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        total = len(task.task_info["traj"]["plan"]["low_actions"]) + 1
        return np.array([min(1.0, (len(task.actions_taken) + 1) / total)], dtype=np.float32)


class PrevActionSensor(Sensor):
    """``prev_action``: the id of the last action taken (0 = <<pad>> before the first)."""

    def __init__(self, uuid: str = PREV_ACTION_UUID, **kwargs: Any) -> None:
        space = gym.spaces.Box(low=0, high=len(C.ACTION_LOW_VOCAB) - 1, shape=(1,), dtype=np.int64)
        super().__init__(uuid=uuid, observation_space=space, **kwargs)

    def get_observation(self, env: Any, task: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        return np.array([task.prev_action], dtype=np.int64)
