"""Walkthrough PPO + Active Neural SLAM map supervision (official tag WalkthroughRGBMappingPPO).

The agent explores the goal-state room (walkthrough phase only, 11 navigation actions,
snapToGrid off, exploration reward). Besides PPO, the ANM map head is trained on ground-truth
egocentric maps built from depth: free space in 3 height bins (`BinnedPointCloudMapLoss`) and
72 object types (`SemanticMapFocalLoss`), loss weights [1, 1, 100], 32-step rollouts, lr 3e-4
with decay (§6.3). The trained map is what the frozen-map configs load: export it with
`python -m rearrange.export_map --checkpoint <this run's .pt>`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import gym
import torch
from allenact.algorithms.onpolicy_sync.losses import PPO
from allenact.algorithms.onpolicy_sync.losses.ppo import PPOConfig
from allenact.base_abstractions.sensor import Sensor
from allenact.embodiedai.mapping.mapping_losses import BinnedPointCloudMapLoss, SemanticMapFocalLoss
from allenact.utils.experiment_utils import LinearDecay, PipelineStage, TrainingPipeline

from baseline_configs.map_common import MapWeightsMixin, RolloutLengthMixin
from baseline_configs.rearrange_base import RearrangeBaseExperimentConfig
from rearrange.constants import NAVIGATION_ACTIONS
from rearrange.map_models import WalkthroughActorCriticResNetWithPassiveMap
from rearrange.map_sensors import MAP_TARGET_SENSOR_TYPES, egomotion_sensors, map_target_sensors
from rearrange.map_settings import (
    BINNED_PC_MAP_UUID,
    HEIGHT_LOGITS_KEY,
    SEMANTIC_LOGITS_KEY,
    SEMANTIC_MAP_UUID,
)
from rearrange.sensors import DepthRearrangeSensor, UnshuffledRGBRearrangeSensor


class WalkthroughRGBMappingPPOExperimentConfig(
    MapWeightsMixin, RolloutLengthMixin, RearrangeBaseExperimentConfig
):
    MAP_SOURCE = "imagenet"
    ACTIONS = NAVIGATION_ACTIONS
    FORCE_AXIS_ALIGNED_START = False
    EGOCENTRIC_RGB_UUID = "unshuffled_rgb"  # the official walkthrough configs' uuid
    run_walkthrough_phase = True
    run_unshuffle_phase = False

    def __init__(self, num_train_processes: Optional[int] = None, **kwargs: Any) -> None:
        if num_train_processes is None and torch.cuda.is_available():
            num_train_processes = 5 * torch.cuda.device_count()  # official: 5 per GPU
        super().__init__(num_train_processes=num_train_processes, **kwargs)

    def tag(self) -> str:
        return self.weights_tag("WalkthroughRGBMappingPPO")

    def sensors(self) -> Sequence[Sensor]:
        size = self.SCREEN_SIZE
        ego = egomotion_sensors()
        return [
            UnshuffledRGBRearrangeSensor(
                height=size,
                width=size,
                use_resnet_normalization=True,
                uuid=self.EGOCENTRIC_RGB_UUID,
            ),
            *ego,
            DepthRearrangeSensor(height=size, width=size, use_normalization=False, uuid="depth"),
            *map_target_sensors(ego[-1]),
        ]

    def sensors_for(self, stage: str) -> List[Sensor]:
        """The map targets are privileged (object types, depth-built maps): training only."""
        sensors = super().sensors_for(stage)
        return (
            sensors
            if stage == "train"
            else [s for s in sensors if not isinstance(s, MAP_TARGET_SENSOR_TYPES)]
        )

    def thor_controller_kwargs(self, mode: str, device: Optional[int] = None) -> Dict[str, Any]:
        return {
            **super().thor_controller_kwargs(mode, device),
            "snapToGrid": False,
            "renderDepthImage": True,
        }

    def create_model(self, **kwargs: Any) -> WalkthroughActorCriticResNetWithPassiveMap:
        return WalkthroughActorCriticResNetWithPassiveMap(
            action_space=gym.spaces.Discrete(len(self.actions())),
            observation_space=self.observation_space(kwargs),
            map=self.build_map(),
            rgb_uuid=self.EGOCENTRIC_RGB_UUID,
        )

    def training_pipeline(self, **kwargs: Any) -> TrainingPipeline:
        steps = self.training_steps
        losses = {
            "ppo_loss": PPO(clip_decay=LinearDecay(steps), **PPOConfig),
            "binned_map_loss": BinnedPointCloudMapLoss(
                binned_pc_uuid=BINNED_PC_MAP_UUID, map_logits_uuid=HEIGHT_LOGITS_KEY
            ),
            "semantic_map_loss": SemanticMapFocalLoss(
                semantic_map_uuid=SEMANTIC_MAP_UUID, map_logits_uuid=SEMANTIC_LOGITS_KEY
            ),
        }
        stage = PipelineStage(
            loss_names=list(losses), loss_weights=[1.0, 1.0, 100.0], max_stage_steps=steps
        )
        return self.pipeline(
            losses,
            [stage],
            lr_scheduler_builder=self.lr_schedule(steps),
            num_mini_batch=1,
            update_repeats=3,
            num_steps=32,
        )
