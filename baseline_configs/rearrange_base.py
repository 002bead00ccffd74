"""Base experiment config of the 2023 rearrangement baselines (thor_lite by default).

Every concrete config inherits from this class. Construction arguments can be given on the
command line, e.g. `allenact ... --config_kwargs '{"num_train_processes": 2, "training_steps": 20000}'`:

- backend: "thor_lite" (default, CPU) or "thor" (the real AI2-THOR Unity build)
- num_train_processes / num_valid_processes / num_test_processes: samplers (default: from the
  CPU count without CUDA, 40/2/20 as in the official configs with GPUs)
- training_steps, data_dir, test_stage ("combined" as for leaderboard submissions, or
  "val"/"test"), episodes_per_scene (limit, for quick runs), max_test_episodes_per_scene
- train_split: "train" (4000 episodes, made once by `python -m rearrange.gen --stage train`)
  or "train_subset" (the 800 shipped train episodes that the combined split uses)
- screen_size: frame size in pixels (default 224 as in the official configs; CPU-only runs
  train several times faster at 64; at least `simple_cnn_min_size()` = 36)
- num_machines: nodes of a multi-node run (default 1). Every node runs the same command with
  `--distributed_ip_and_port <node0>:<port> --machine_id K -s <seed>`; the process counts
  above are per node, and each node runs the trainers of its own devices

The AllenAct compatibility fixes (`allenact_ext.compat.install_allenact_fixes`) are installed here,
when this module is imported, and not in `__init__`: allenact imports the config module in its
main process and again in every forkserver/spawn worker (to unpickle the config), while
`__init__` runs only in the main process. Workers need the numpy fixes (map builders,
checkpoint loading); the main process needs the exit-status guard before the runner starts.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import os
from abc import abstractmethod
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple

import gym
import torch
from allenact.base_abstractions.experiment_config import ExperimentConfig, MachineParams
from allenact.algorithms.onpolicy_sync.losses import PPO
from allenact.algorithms.onpolicy_sync.losses.ppo import PPOConfig
from allenact.base_abstractions.sensor import ExpertActionSensor, Sensor, SensorSuite
from allenact.embodiedai.sensors.vision_sensors import IMAGENET_RGB_MEANS, IMAGENET_RGB_STDS
from allenact.utils.experiment_utils import Builder, LinearDecay, PipelineStage, TrainingPipeline

from backends import DEFAULT_BACKEND, open_x_displays
from allenact_ext.compat import install_allenact_fixes
from allenact_ext.schedules import StepwiseLinearDecay
from rearrange.constants import (
    MAX_UNSHUFFLE_STEPS,
    MAX_WALKTHROUGH_STEPS,
    REARRANGE_ACTIONS,
    SCREEN_SIZE,
    default_controller_kwargs,
)
from rearrange.dataset import load_stage
from rearrange.sensors import RGBRearrangeSensor

install_allenact_fixes()  # see the module docstring for why at import time


def simple_cnn_min_size() -> int:
    """Smallest square frame that AllenAct's SimpleCNN (the SimpleConv baselines' encoder, built
    with its default kernels and strides) still maps to at least 1x1; 36 for allenact 0.5.4.

    Computed from SimpleCNN's own defaults, layer by layer backwards, so a smaller frame is
    rejected when the config is built instead of crashing the training workers."""
    from allenact.embodiedai.models.basic_models import SimpleCNN

    params = inspect.signature(SimpleCNN.__init__).parameters
    layers = zip(
        *(
            params[name].default
            for name in ("kernel_sizes", "layers_stride", "paddings", "dilations")
        )
    )
    need = 1  # output pixels wanted after the last layer
    for (k, _), (s, _), (p, _), (d, _) in reversed(list(layers)):
        # Conv2d: out = floor((in + 2p - d(k-1) - 1) / s) + 1, so in >= (out-1)s + d(k-1) + 1 - 2p
        need = (need - 1) * s + d * (k - 1) + 1 - 2 * p
    return need


def checked_visual_layer_norm(
    config: Any, simpleconv_base: type, value: Any, name: str = "visual_layer_norm"
) -> bool:
    """A SimpleConv-model flag config kwarg (`visual_layer_norm`, or `name`, e.g.
    `goal_difference`), checked: a bool, and only where the config builds the SimpleConv model
    of `simpleconv_base` (the ResNet/map configs derived from it have no such option, and
    silently ignoring the kwarg would mislabel their results)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, not {value!r}")
    if value and type(config).create_model is not simpleconv_base.create_model:
        raise ValueError(
            f"{name} applies to the SimpleConv configs only, not {type(config).__name__}"
        )
    return value


def partition_sequence(seq: Sequence[Any], parts: int) -> List[List[Any]]:
    """Split into `parts` contiguous chunks whose sizes differ by at most one."""
    out, start = [], 0
    for i in range(parts):
        size = len(seq) // parts + (1 if i < len(seq) % parts else 0)
        out.append(list(seq[start : start + size]))
        start += size
    return out


class RearrangeBaseExperimentConfig(ExperimentConfig):
    SCREEN_SIZE = SCREEN_SIZE
    MAX_STEPS = {"walkthrough": MAX_WALKTHROUGH_STEPS, "unshuffle": MAX_UNSHUFFLE_STEPS}
    REQUIRE_DONE_ACTION = True
    FORCE_AXIS_ALIGNED_START = True
    RANDOMIZE_START_ROTATION_DURING_TRAINING = False
    TRAINING_STEPS = int(75e6)
    SAVE_INTERVAL = int(1e6)
    ACTIONS: Tuple[str, ...] = REARRANGE_ACTIONS

    def __init__(
        self,
        backend: str = DEFAULT_BACKEND,
        num_train_processes: Optional[int] = None,
        num_valid_processes: Optional[int] = None,
        num_test_processes: Optional[int] = None,
        training_steps: Optional[int] = None,
        save_interval: Optional[int] = None,
        data_dir: Optional[str] = None,
        test_stage: str = "val",
        episodes_per_scene: Optional[int] = None,
        max_test_episodes_per_scene: Optional[int] = None,
        train_scenes: Optional[Sequence[str]] = None,
        test_scenes: Optional[Sequence[str]] = None,
        metric_accumulate_interval: Optional[int] = None,
        lr: float = 3e-4,
        train_split: str = "train",
        screen_size: Optional[int] = None,
        num_machines: int = 1,
    ) -> None:
        self.backend = backend
        if int(num_machines) < 1:
            raise ValueError(f"num_machines must be at least 1, not {num_machines!r}")
        self.num_machines = int(num_machines)
        if screen_size is not None:
            minimum = simple_cnn_min_size()
            if (
                isinstance(screen_size, bool)
                or not isinstance(screen_size, int)
                or screen_size < minimum
            ):
                raise ValueError(
                    f"screen_size must be an integer of at least {minimum} pixels (the smallest "
                    f"frame SimpleCNN's three convolutions reduce to 1x1), not {screen_size!r}"
                )
            # Instance attribute shadows the class default; CPU-only runs use small frames for speed.
            self.SCREEN_SIZE = int(screen_size)
        self.cuda = torch.cuda.is_available()
        cpus = os.cpu_count() or 1
        self.num_train_processes = num_train_processes or (
            40 if self.cuda else max(1, min(cpus, 8))
        )
        self.num_valid_processes = (
            2 if num_valid_processes is None and self.cuda else (num_valid_processes or 0)
        )
        self.num_test_processes = num_test_processes or (20 if self.cuda else max(1, min(cpus, 8)))
        self.training_steps = int(training_steps or self.TRAINING_STEPS)
        self.save_interval = int(save_interval or min(self.SAVE_INTERVAL, self.training_steps))
        self.data_dir = data_dir
        self.test_stage = test_stage
        self.episodes_per_scene = episodes_per_scene
        self.max_test_episodes_per_scene = max_test_episodes_per_scene
        self.train_scenes = list(train_scenes) if train_scenes else None
        self.test_scenes = list(test_scenes) if test_scenes else None
        self.metric_accumulate_interval = metric_accumulate_interval
        self.lr = lr
        if train_split not in ("train", "train_subset"):
            raise ValueError(f"train_split must be 'train' or 'train_subset', not {train_split!r}")
        self.train_split = train_split

    # --- what concrete configs provide -----------------------------------------------------
    @abstractmethod
    def sensors(self) -> Sequence[Sensor]: ...

    @abstractmethod
    def training_pipeline(self, **kwargs) -> TrainingPipeline: ...

    @abstractmethod
    def create_model(self, **kwargs) -> torch.nn.Module: ...

    @classmethod
    def actions(cls) -> Tuple[str, ...]:
        return cls.ACTIONS

    def thor_controller_kwargs(self, mode: str, device: Optional[int] = None) -> Dict[str, Any]:
        kwargs: Dict[str, Any] = default_controller_kwargs(self.SCREEN_SIZE)
        if self.backend == "thor":
            displays = open_x_displays()
            if displays:
                kwargs["x_display"] = displays[(device or 0) % len(displays)]
            else:
                import ai2thor.platform  # type: ignore

                kwargs["platform"] = ai2thor.platform.CloudRendering
                kwargs["gpu_device"] = device if device is not None else 0
        return kwargs

    # --- machines --------------------------------------------------------------------------
    def machine_params(self, mode: str = "train", **kwargs) -> MachineParams:
        gpus = list(range(torch.cuda.device_count())) if self.cuda else []
        if mode == "train":
            n = self.num_train_processes
            devices = gpus[: max(1, min(len(gpus), n))] if gpus else ["cpu"]
        elif mode == "valid":
            n = self.num_valid_processes
            devices = gpus[-1:] if gpus else ["cpu"]
        elif mode == "test":
            n = self.num_test_processes
            devices = gpus if gpus else ["cpu"]
        else:
            raise ValueError(f"unknown mode {mode!r} (expected train, valid or test)")
        nprocesses = [len(p) for p in partition_sequence(range(n), len(devices))] if n else 0
        local_ids = None
        if mode == "train" and self.num_machines > 1:
            # AllenAct wants the global worker lists on every node, and this node's share of them
            # when it passes machine_id (the runner asks once, to pick the trainers to start).
            per_node = len(devices)
            devices, nprocesses = devices * self.num_machines, nprocesses * self.num_machines
            machine_id = kwargs.get("machine_id")
            if machine_id is not None:
                if not 0 <= int(machine_id) < self.num_machines:
                    raise ValueError(
                        f"--machine_id {machine_id} is outside 0..{self.num_machines - 1} "
                        f"(num_machines={self.num_machines})"
                    )
                local_ids = list(
                    range(int(machine_id) * per_node, (int(machine_id) + 1) * per_node)
                )
        return MachineParams(
            nprocesses=nprocesses,
            devices=devices,
            local_worker_ids=local_ids,
            sensor_preprocessor_graph=self.sensor_preprocessor_graph_builder(mode),
        )

    def sensor_preprocessor_graph_builder(self, mode: str) -> Optional[Builder]:
        return None

    # --- samplers --------------------------------------------------------------------------
    def make_sampler_fn(self, **kwargs):
        from rearrange.tasks import RearrangeTaskSampler

        # A sampler process runs one simulator; torch's default of one thread per core would make
        # every sampler's few tensor ops contend with the other samplers and the trainer.
        torch.set_num_threads(1)
        return RearrangeTaskSampler(**kwargs)

    def _data(self, stage: str) -> "OrderedDict[str, List[Dict[str, Any]]]":
        data = load_stage(self.train_split if stage == "train" else stage, self.data_dir)
        limit = self.episodes_per_scene if stage == "train" else self.max_test_episodes_per_scene
        if limit:
            data = OrderedDict((s, eps[:limit]) for s, eps in data.items())
        return data

    def stagewise_task_sampler_args(
        self,
        stage: str,
        process_ind: int,
        total_processes: int,
        devices: Optional[Sequence[int]] = None,
        seeds: Optional[Sequence[int]] = None,
        deterministic_cudnn: bool = False,
    ) -> Dict[str, Any]:
        data = self._data("val" if stage == "valid_subset" else stage)
        if stage == "train" and self.train_scenes:
            data = OrderedDict((s, data[s]) for s in self.train_scenes)
        if stage != "train" and self.test_scenes:
            data = OrderedDict((s, data[s]) for s in self.test_scenes if s in data)
        if stage == "valid_subset":
            data = OrderedDict((s, eps[::5]) for s, eps in data.items())
        scenes = list(data)
        if stage == "combined":  # balance: 2 train scenes for each val/test scene
            tr = [s for s in scenes if data[s][0].get("stage") == "train"]
            ot = [s for s in scenes if s not in tr]
            scenes = [x for pair in zip(tr[0::2], tr[1::2], ot) for x in pair] + tr[2 * len(ot) :]
        if total_processes > len(scenes):
            if total_processes % len(scenes) != 0:
                raise ValueError(
                    f"{total_processes} processes cannot share {len(scenes)} scenes evenly"
                )
            scenes = scenes * (total_processes // len(scenes))
        mine = partition_sequence(scenes, total_processes)[process_ind]
        device = devices[process_ind % len(devices)] if devices else None
        if isinstance(device, torch.device):
            device = device.index
        seed = int(hashlib.md5("|".join(mine).encode()).hexdigest(), 16) % (2**31)
        return {
            "run_walkthrough_phase": self.run_walkthrough_phase,
            "run_unshuffle_phase": self.run_unshuffle_phase,
            "stage": "val" if stage == "valid_subset" else stage,
            "scenes_to_task_spec_dicts": OrderedDict((s, copy.deepcopy(data[s])) for s in mine),
            "rearrange_env_kwargs": {
                "backend": self.backend,
                "force_cache_reset": stage != "train",
                "controller_kwargs": self.thor_controller_kwargs(stage, device),
            },
            "sensors": SensorSuite(self.sensors_for(stage)),
            "max_steps": self.MAX_STEPS,
            "discrete_actions": self.actions(),
            "require_done_action": self.REQUIRE_DONE_ACTION,
            "force_axis_aligned_start": self.FORCE_AXIS_ALIGNED_START,
            "randomize_start_rotation": stage == "train"
            and self.RANDOMIZE_START_ROTATION_DURING_TRAINING,
            "epochs": float("inf") if stage == "train" else 1,
            "seed": seed if seeds is None else seeds[process_ind],
        }

    def sensors_for(self, stage: str) -> List[Sensor]:
        """Expert sensors are privileged: only training samplers get them."""
        sensors = list(self.sensors())
        if stage != "train":
            sensors = [s for s in sensors if not isinstance(s, ExpertActionSensor)]
        return sensors

    def train_task_sampler_args(
        self,
        process_ind: int,
        total_processes: int,
        devices=None,
        seeds=None,
        deterministic_cudnn: bool = False,
    ) -> Dict[str, Any]:
        return self.stagewise_task_sampler_args(
            "train", process_ind, total_processes, devices, seeds
        )

    def valid_task_sampler_args(
        self,
        process_ind: int,
        total_processes: int,
        devices=None,
        seeds=None,
        deterministic_cudnn: bool = False,
    ) -> Dict[str, Any]:
        return self.stagewise_task_sampler_args(
            "valid_subset", process_ind, total_processes, devices, seeds
        )

    def test_task_sampler_args(
        self,
        process_ind: int,
        total_processes: int,
        devices=None,
        seeds=None,
        deterministic_cudnn: bool = False,
    ) -> Dict[str, Any]:
        return self.stagewise_task_sampler_args(
            self.test_stage, process_ind, total_processes, devices, seeds
        )

    # --- sensors and model inputs shared by the 1- and 2-phase configs --------------------
    def rgb_sensors(self, goal_sensor_cls: type) -> List[Sensor]:
        """The current view ("rgb") and a goal-state view ("unshuffled_rgb") of the same size."""
        size, norm = self.SCREEN_SIZE, self.rgb_normalisation()
        return [
            RGBRearrangeSensor(
                height=size, width=size, use_resnet_normalization=True, uuid="rgb", **norm
            ),
            goal_sensor_cls(
                height=size,
                width=size,
                use_resnet_normalization=True,
                uuid="unshuffled_rgb",
                **norm,
            ),
        ]

    def rgb_normalisation(self) -> Dict[str, Sequence[float]]:
        """Mean/std the RGB sensors normalise with: ImageNet's (CLIP configs override it)."""
        return {"mean": IMAGENET_RGB_MEANS, "stdev": IMAGENET_RGB_STDS}

    def observation_space(self, model_kwargs: Dict[str, Any]) -> gym.spaces.Dict:
        """The preprocessed spaces when allenact passes a preprocessor graph, else the sensors'."""
        graph = model_kwargs.get("sensor_preprocessor_graph")
        if graph is not None:
            return graph.observation_spaces
        return gym.spaces.Dict({s.uuid: s.observation_space for s in self.sensors()})

    # --- pipeline helpers ------------------------------------------------------------------
    def pipeline(
        self,
        named_losses: Dict[str, Any],
        stages: List[PipelineStage],
        lr_scheduler_builder: Optional[Builder] = None,
        num_mini_batch: int = 1,
        update_repeats: int = 3,
        num_steps: int = 64,
    ) -> TrainingPipeline:
        """A TrainingPipeline with the settings every baseline shares (Adam, GAE, clipping)."""
        return TrainingPipeline(
            save_interval=self.save_interval,
            metric_accumulate_interval=self._metric_interval(),
            optimizer_builder=Builder(torch.optim.Adam, dict(lr=self.lr)),
            num_mini_batch=num_mini_batch,
            update_repeats=update_repeats,
            max_grad_norm=0.5,
            num_steps=num_steps,
            named_losses=named_losses,
            gamma=0.99,
            use_gae=True,
            gae_lambda=0.95,
            advance_scene_rollout_period=None,
            pipeline_stages=stages,
            lr_scheduler_builder=lr_scheduler_builder,
        )

    def _metric_interval(self) -> int:
        if self.metric_accumulate_interval is not None:
            return self.metric_accumulate_interval
        return (
            self.num_train_processes * 500 if self.cuda else max(1, self.num_train_processes * 64)
        )

    @staticmethod
    def lr_schedule(steps: int):
        return Builder(
            torch.optim.lr_scheduler.LambdaLR,
            {"lr_lambda": LinearDecay(steps=steps // 3, startp=1.0, endp=1.0 / 3)},
        )

    run_walkthrough_phase = False
    run_unshuffle_phase = True


class ImitationMixin:
    """Behaviour cloning then DAgger, shared by every config that imitates the expert.

    Mix in before a RearrangeBaseExperimentConfig subclass; the class sets `IL_PARAMS` with the
    official "bc_tf1_steps" (teacher forcing held at 1) and "dagger_steps" (decay to 0). Unset
    lengths are capped at 25 % / 50 % of training, so short runs keep the official shape: BC
    first, then DAgger, then on-policy. Training samplers also get the expert's action.
    """

    IL_PARAMS: Dict[str, Any]
    training_steps: int

    def __init__(
        self, bc_tf1_steps: Optional[int] = None, dagger_steps: Optional[int] = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[call-arg]
        p, t = self.IL_PARAMS, self.training_steps
        self.bc_tf1_steps = int(
            bc_tf1_steps if bc_tf1_steps is not None else min(p["bc_tf1_steps"], 0.25 * t)
        )
        self.dagger_steps = int(
            dagger_steps if dagger_steps is not None else min(p["dagger_steps"], 0.5 * t)
        )

    def sensors(self) -> Sequence[Sensor]:
        return [
            *super().sensors(),  # type: ignore[misc]
            ExpertActionSensor(gym.spaces.Discrete(len(self.actions()))),
        ]  # type: ignore[attr-defined]

    def teacher_forcing(self) -> StepwiseLinearDecay:
        return StepwiseLinearDecay(self.bc_tf1_steps, self.dagger_steps)


class PPOMixin:
    """PPO on the task reward, as the official PPO configs (1-phase and walkthrough) train.

    clip 0.1, value 0.5, entropy 0.01 (allenact's `PPOConfig`); the clip parameter decays
    linearly to 0 over training and the learning rate from 1 to 1/3 over the first third.
    Mix in before a RearrangeBaseExperimentConfig subclass.
    """

    training_steps: int

    def training_pipeline(self, **kwargs: Any) -> TrainingPipeline:
        steps = self.training_steps
        return self.pipeline(  # type: ignore[attr-defined]
            named_losses={"ppo_loss": PPO(clip_decay=LinearDecay(steps), **PPOConfig)},
            stages=[PipelineStage(loss_names=["ppo_loss"], max_stage_steps=steps)],
            lr_scheduler_builder=self.lr_schedule(steps),  # type: ignore[attr-defined]
        )
