"""AllenAct sensors for ALFRED's Seq2Seq agents (inputs §6.1, expert labels for DAgger).

=================  ==========================  =====================================================
uuid               space                        value
=================  ==========================  =====================================================
``lang_goal``      Box int64 [max_goal_len]     word ids of task_desc + ``<<goal>>``, 0-padded
``lang_instr``     Box int64 [max_instr_len]    word ids of the step instructions + ``<<stop>>``
``frames``         Box float32 [512, 7, 7]      ResNet-18 conv features of the current frame
                                                (``ResnetFeatureSensor`` in the sampler, or ``rgb``
                                                uint8 [300, 300, 3] + ``ResnetFeaturePreprocessor``)
``expert_action``  [action id, success] int64   the online expert's next action (action_low ids)
``expert_mask``    Box uint8 [S, S]             its interaction mask (zeros for navigation/stop)
``prev_action``    Box int64 [1]                the last action id (0 = <<pad>> at the start)
=================  ==========================  =====================================================

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

from . import constants as C

__all__ = ["LanguageSensor", "GoalTokensSensor", "InstructionTokensSensor", "ResnetFeatureSensor", "FrameSensor",
           "ResnetFeaturePreprocessor",
           "AlfredExpertActionSensor", "ExpertMaskSensor", "PrevActionSensor"]

MAX_GOAL_LEN = 64
MAX_INSTR_LEN = 512


class LanguageSensor(Sensor):
    """0-padded word ids of ``task.task_info[key]`` (one fixed length so AllenAct can batch them)."""

    def __init__(self, key: str, max_len: int, uuid: Optional[str] = None, **kwargs: Any) -> None:
        self.key, self.max_len = key, int(max_len)
        space = gym.spaces.Box(low=0, high=np.iinfo(np.int64).max, shape=(self.max_len,), dtype=np.int64)
        super().__init__(uuid=uuid or key, observation_space=space, **kwargs)

    def get_observation(self, env: Any, task: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        ids = task.task_info[self.key]
        if len(ids) > self.max_len:
            raise ValueError(f"{task.task_info.get('task')} repeat_idx {task.task_info.get('repeat_idx')}: "
                             f"{self.key} has {len(ids)} tokens, more than max_len={self.max_len}")
        out = np.zeros(self.max_len, dtype=np.int64)
        out[:len(ids)] = ids
        return out


class GoalTokensSensor(LanguageSensor):
    def __init__(self, max_len: int = MAX_GOAL_LEN, uuid: str = "lang_goal", **kwargs: Any) -> None:
        super().__init__("lang_goal", max_len, uuid, **kwargs)


class InstructionTokensSensor(LanguageSensor):
    def __init__(self, max_len: int = MAX_INSTR_LEN, uuid: str = "lang_instr", **kwargs: Any) -> None:
        super().__init__("lang_instr", max_len, uuid, **kwargs)


class ResnetFeatureSensor(Sensor):
    """ResNet-18 conv features of the current frame, computed in the sampler process.

    `encoder` is what ``alfred_task.features.ResnetFeatures`` accepts ("imagenet",
    "random_resnet18" with `seed`, or a state_dict path); "imagenet" without the cached weights
    fails when the sensor is built, naming the file.
    """

    def __init__(self, encoder: str = "imagenet", seed: int = 0, uuid: str = "frames", **kwargs: Any) -> None:
        from .features import check_encoder, seeded_spec

        check_encoder(seeded_spec(encoder, seed))
        self.encoder_name, self.seed = encoder, int(seed)
        self._net: Any = None
        space = gym.spaces.Box(low=-np.inf, high=np.inf, shape=(512, 7, 7), dtype=np.float32)
        super().__init__(uuid=uuid, observation_space=space, **kwargs)

    @property
    def net(self) -> Any:
        if self._net is None:  # built lazily in the sampler process
            from .features import ResnetFeatures, seeded_spec

            self._net = ResnetFeatures(seeded_spec(self.encoder_name, self.seed))
        return self._net

    def get_observation(self, env: Any, task: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        with torch.inference_mode():
            return self.net([env.last_event.frame])[0].numpy()


class FrameSensor(Sensor):
    """``rgb``: the raw uint8 frame, for `ResnetFeaturePreprocessor` (features on the trainer's GPU)."""

    def __init__(self, size: int = C.SCREEN_SIZE, uuid: str = "rgb", **kwargs: Any) -> None:
        space = gym.spaces.Box(low=0, high=255, shape=(size, size, 3), dtype=np.uint8)
        super().__init__(uuid=uuid, observation_space=space, **kwargs)

    def get_observation(self, env: Any, task: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        return np.ascontiguousarray(env.last_event.frame, dtype=np.uint8)


class ResnetFeaturePreprocessor(Preprocessor):
    """``rgb`` -> ``frames`` [512, 7, 7] in the trainer process, batched, on its device (GPU runs:
    samplers only render, the encoder runs once per step for all of them)."""

    def __init__(self, encoder: str = "imagenet", seed: int = 0, input_uuids: Sequence[str] = ("rgb",),
                 output_uuid: str = "frames", device: Optional[torch.device] = None, **kwargs: Any) -> None:
        from .features import check_encoder, seeded_spec

        check_encoder(seeded_spec(encoder, seed))
        self.encoder_name, self.seed, self.device = encoder, int(seed), torch.device(device or "cpu")
        self._net: Any = None
        space = gym.spaces.Box(low=-np.inf, high=np.inf, shape=(512, 7, 7), dtype=np.float32)
        super().__init__(input_uuids=list(input_uuids), output_uuid=output_uuid, observation_space=space)

    def to(self, device: torch.device) -> "ResnetFeaturePreprocessor":
        self.device = torch.device(device)
        if self._net is not None:
            self._net.to(self.device)
        return self

    def process(self, obs: Dict[str, Any], *args: Any, **kwargs: Any) -> torch.Tensor:
        if self._net is None:
            from .features import ResnetFeatures, seeded_spec

            self._net = ResnetFeatures(seeded_spec(self.encoder_name, self.seed)).to(self.device)
        frames = obs[self.input_uuids[0]]
        lead = frames.shape[:-3]
        out = self._net.encode(frames.reshape(-1, *frames.shape[-3:]))
        return out.reshape(*lead, *out.shape[1:])


class AlfredExpertActionSensor(AbstractExpertActionSensor):
    """``expert_action``: the online expert's next action id and whether it could plan."""

    def __init__(self, uuid: str = "expert_action", **kwargs: Any) -> None:
        super().__init__(action_space=gym.spaces.Discrete(len(C.ACTION_LOW_VOCAB)), uuid=uuid, **kwargs)

    def query_expert(self, task: Any, expert_sensor_group_name: Optional[str]) -> tuple:
        return task.query_expert()


class ExpertMaskSensor(Sensor):
    """``expert_mask``: the expert's interaction mask, nearest-resized to `size` (uint8 0/1)."""

    def __init__(self, size: int = C.SCREEN_SIZE, uuid: str = "expert_mask", **kwargs: Any) -> None:
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


class PrevActionSensor(Sensor):
    """``prev_action``: the id of the last action taken (0 = <<pad>> before the first)."""

    def __init__(self, uuid: str = "prev_action", **kwargs: Any) -> None:
        space = gym.spaces.Box(low=0, high=len(C.ACTION_LOW_VOCAB) - 1, shape=(1,), dtype=np.int64)
        super().__init__(uuid=uuid, observation_space=space, **kwargs)

    def get_observation(self, env: Any, task: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        return np.array([task.prev_action], dtype=np.int64)
