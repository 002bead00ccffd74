"""What the three Active Neural SLAM configs share: weights (pretrained or seeded random), the
pre-flight of the weight files, the 224 px frame the map needs, and rollout-length kwargs.

Config kwargs (`--config_kwargs`):
- pretrained (default true): load real weights. The walkthrough mapping config starts the map's
  ResNet-18 from ImageNet (torchvision's `resnet18-f37072fd.pth`); the frozen-map configs load
  the trained map (`pretrained_model_ckpts/pretrained_active_neural_slam_via_walkthrough_75m.pt`).
  A missing or unreadable file stops the run in seconds with one line naming the file and how to
  get it. With false the same architecture is built from a random init seeded by `map_seed`
  (tests, CPU experiments); the tag then ends in `_random_init`, so metrics, TensorBoard runs
  and checkpoints record which was used (allenact also stores the kwargs in `used_configs/`).
- map_checkpoint / resnet_weights: other weight files than the default locations.
- map_seed (default 0): the seed of the random map init.
"""

from __future__ import annotations

from typing import Any, Optional

from allenact.embodiedai.mapping.mapping_models.active_neural_slam import ActiveNeuralSLAM

from common.cli import fail
from rearrange.map_settings import MAP_FRAME_SIZE
from rearrange.map_weights import (
    PretrainedWeightsError,
    build_active_neural_slam,
    load_map_state_dict,
    load_resnet18_into_map,
    load_resnet18_state_dict,
)

RANDOM_INIT_TAG_SUFFIX = "_random_init"


class MapWeightsMixin:
    """Mix in before a RearrangeBaseExperimentConfig subclass; set `MAP_SOURCE`.

    MAP_SOURCE "imagenet": train the map, its ResNet-18 trunk starting from ImageNet weights;
    "map_checkpoint": load a trained map (kept frozen by the model)."""

    MAP_SOURCE: str = "map_checkpoint"

    def __init__(
        self,
        pretrained: bool = True,
        map_checkpoint: Optional[str] = None,
        resnet_weights: Optional[str] = None,
        map_seed: int = 0,
        screen_size: Optional[int] = None,
        **kwargs: Any,
    ) -> None:
        if screen_size is not None and screen_size != MAP_FRAME_SIZE:
            raise ValueError(
                f"screen_size must be {MAP_FRAME_SIZE} for the map configs (the Active Neural SLAM "
                f"LayerNorm expects 512x7x7 ResNet-18 features), not {screen_size!r}"
            )
        if not isinstance(pretrained, bool):
            raise ValueError(f"pretrained must be true or false, not {pretrained!r}")
        super().__init__(screen_size=MAP_FRAME_SIZE, **kwargs)  # type: ignore[call-arg]
        self.pretrained = pretrained
        self.map_checkpoint = map_checkpoint
        self.resnet_weights = resnet_weights
        self.map_seed = int(map_seed)
        if pretrained:
            self._preflight()

    def _preflight(self) -> None:
        """Fail now, in the main process and in seconds, rather than in every worker later."""
        try:
            self._pretrained_state()
        except PretrainedWeightsError as e:
            fail(type(self).__name__, e)  # one line, exit status 2, no traceback

    def _pretrained_state(self):
        if self.MAP_SOURCE == "imagenet":
            return load_resnet18_state_dict(self.resnet_weights)
        return load_map_state_dict(self.map_checkpoint)

    def build_map(self) -> ActiveNeuralSLAM:
        """The ANM with the weights this config was asked for."""
        anm = build_active_neural_slam(seed=self.map_seed)
        if self.pretrained:
            state = self._pretrained_state()
            if self.MAP_SOURCE == "imagenet":
                load_resnet18_into_map(anm, state)
            else:
                anm.load_state_dict(state)
        return anm

    def weights_tag(self, tag: str) -> str:
        return tag if self.pretrained else tag + RANDOM_INIT_TAG_SUFFIX


class RolloutLengthMixin:
    """`num_steps` / `update_repeats` kwargs for configs whose pipeline does not take them."""

    def __init__(
        self, num_steps: Optional[int] = None, update_repeats: Optional[int] = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[call-arg]
        for name, value in (("num_steps", num_steps), ("update_repeats", update_repeats)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        self.rollout_num_steps = num_steps
        self.rollout_update_repeats = update_repeats

    def pipeline(self, named_losses, stages, **kwargs: Any):
        if self.rollout_num_steps is not None:
            kwargs["num_steps"] = self.rollout_num_steps
        if self.rollout_update_repeats is not None:
            kwargs["update_repeats"] = self.rollout_update_repeats
        return super().pipeline(named_losses, stages, **kwargs)  # type: ignore[misc]
