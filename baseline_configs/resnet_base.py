"""What every config on frozen ResNet/CLIP features adds to its raw-RGB parent config.

`ResNetPreprocessorMixin` goes first in the bases of a concrete config, e.g.
``class OnePhaseRGBResNetDaggerExperimentConfig(OnePhaseResNetModelMixin, OnePhaseRGBDaggerExperimentConfig)``.
It adds the preprocessor graph (one frozen trunk per RGB uuid, `visual_encoders`), the sensors'
normalisation (ImageNet or CLIP), the ``pretrained`` / ``pretrained_seed`` config kwargs with
the weight pre-flight, and a tag that records a random-init run (``<official tag>-randinit``),
so checkpoints, logs and metrics of the two kinds of run never mix.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import gym
from allenact.base_abstractions.preprocessor import SensorPreprocessorGraph
from allenact.base_abstractions.sensor import SensorSuite
from allenact.utils.experiment_utils import Builder
from allenact.utils.system import get_logger

from allenact_ext.visual_encoders import (
    CLIP_RGB_MEANS,
    CLIP_RGB_STDS,
    ENCODERS,
    check_pretrained_weights,
    feature_uuid,
    resnet_preprocessor_builders,
)

RANDOM_INIT_TAG_SUFFIX = "-randinit"


class ResNetPreprocessorMixin:
    """Frozen `VISUAL_ENCODER` features of the `RGB_UUIDS` frames ("RN18", "RN50" or "CLIP-RN50").

    Config kwargs: ``pretrained`` (default True, as officially: the weights must be on disk, see
    `visual_encoders.check_pretrained_weights`; False: the same trunk randomly initialised from
    ``pretrained_seed``, for tests and CPU experiments).
    """

    VISUAL_ENCODER: str = "RN18"
    RGB_UUIDS: Tuple[str, ...] = ("rgb", "unshuffled_rgb")
    OFFICIAL_TAG: str
    SCREEN_SIZE: int

    def __init__(self, pretrained: bool = True, pretrained_seed: int = 0, **kwargs: Any) -> None:
        if not isinstance(pretrained, bool):
            raise ValueError(f"pretrained must be true or false, not {pretrained!r}")
        if isinstance(pretrained_seed, bool) or not isinstance(pretrained_seed, int):
            raise ValueError(f"pretrained_seed must be an integer, not {pretrained_seed!r}")
        super().__init__(**kwargs)  # type: ignore[call-arg]
        if self.SCREEN_SIZE % 32:
            raise ValueError(
                f"screen_size must be a multiple of 32 for the {ENCODERS[self.VISUAL_ENCODER].name} "
                f"encoder, not {self.SCREEN_SIZE}"
            )
        self.pretrained = pretrained
        self.pretrained_seed = pretrained_seed
        if pretrained:
            check_pretrained_weights(
                self.VISUAL_ENCODER
            )  # fails in seconds, before any worker starts
        get_logger().info(f"{self.tag()}: visual encoder {self.visual_encoder_description()}")

    def tag(self) -> str:
        return self.OFFICIAL_TAG + ("" if self.pretrained else RANDOM_INIT_TAG_SUFFIX)

    def visual_encoder_description(self) -> str:
        """For logs and result files: which trunk and which weights."""
        spec = ENCODERS[self.VISUAL_ENCODER]
        weights = "pretrained" if self.pretrained else f"random init (seed {self.pretrained_seed})"
        return f"{spec.name}, {weights}"

    def rgb_normalisation(self) -> Dict[str, Sequence[float]]:
        if self.VISUAL_ENCODER.startswith("CLIP"):
            return {"mean": CLIP_RGB_MEANS, "stdev": CLIP_RGB_STDS}
        return super().rgb_normalisation()  # type: ignore[misc]

    def feature_uuids(self) -> List[str]:
        return [feature_uuid(u) for u in self.RGB_UUIDS]

    def preprocessors(self) -> List[Builder]:
        return resnet_preprocessor_builders(
            self.VISUAL_ENCODER,
            self.RGB_UUIDS,
            self.SCREEN_SIZE,
            self.pretrained,
            self.pretrained_seed,
        )

    def sensor_preprocessor_graph_builder(self, mode: str) -> Optional[Builder]:
        stage = "train" if mode == "train" else "test"
        sources = SensorSuite(self.sensors_for(stage)).observation_spaces  # type: ignore[attr-defined]
        return Builder(
            SensorPreprocessorGraph,
            {"source_observation_spaces": sources, "preprocessors": self.preprocessors()},
        )

    def observation_space(self, model_kwargs: Dict[str, Any]) -> gym.spaces.Dict:
        """allenact's preprocessed spaces, or the same graph's (its trunks are built lazily: cheap)."""
        graph = model_kwargs.get("sensor_preprocessor_graph")
        if graph is None:
            graph = self.sensor_preprocessor_graph_builder("train")()
        return graph.observation_spaces
