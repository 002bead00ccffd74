"""Base AllenAct config of ALFRED's Seq2Seq(+PM) baselines (reference alfred.md §6), thor_lite by default.

Concrete configs: ``alfred_seq2seq_il.py`` / ``alfred_seq2seq_pm_il.py`` (pure imitation on
teacher-forced demonstrations) and ``alfred_seq2seq_pm_dagger.py`` (online, expert labels).
Construction arguments (``--config_kwargs '{...}'`` or ``--config_kwargs options.json``), typed,
defaulted and checked in `baseline_configs.alfred.options` (an unknown key is one line); named
recipes fix some of them in leaf configs (``alfred_seq2seq_pm_lite_gpu.py``, ``..._cpu.py``):

- data_root: a generated dataset (``bash scripts/gen_alfred_dataset.sh OUT ENCODER``) or real
  ALFRED json tree; splits: its split file (default ``<data_root>/splits.json``); vocab: a
  ``pp.vocab`` (default: built over every split, as ALFRED's preprocessing does)
- visual_encoder: ``imagenet`` (fails at once, naming the weights file, when it is absent),
  ``random_resnet18[:seed]`` (must be asked for) or a resnet18 state_dict; for imitation it must
  be the encoder that made the dataset's ``feat_conv.pt`` (checked against ``dataset_meta.json``)
- model_size: ``official`` (ALFRED's dimensions) or ``lite`` (CPU); demb/dhid/dframe/pframe override
- ablation: ALFRED's names ``none``, ``no_vision``, ``no_language``, ``goal_only``, ``instructions_only``
- lr (1e-4), batch_size (8), training_frames, save_interval, seed-independent process counts
  num_train_processes / num_test_processes (default from CUDA / CPU count, as the rearrangement configs)
- test_split (``valid_seen``), test_limit (first K entries), max_steps (ALFRED's 1000), backend, planner
- sampler_torch_threads (1): torch threads in each sampler process (the inline ResNet-18); AllenAct
  leaves torch's default, one per core, and N samplers × N threads on N shared cores made one
  ResNet call 3.5–5× slower (benchmarks/alfred_dagger_sampler.py); trainer_torch_threads (None =
  torch's default; the DAgger config uses 1 on CPU, where the samplers need the cores)
- prev_action_input: the decoder's previous-action input in training, ``argmax`` (ALFRED's default:
  its own prediction) or ``taken`` (ALFRED's ``--dec_teacher_forcing``: the demonstration's / the
  executed action). Evaluation always feeds the action executed (teacher-forced prefixes: the
  expert's), so ``taken`` trains on exactly what evaluation feeds; see the README's ALFRED
  learning section for why that matters for an under-trained model
- mask_dice_weight (0 = ALFRED's loss): weight of a soft Dice term added to ALFRED's balanced mask BCE
  (`alfred_task.models.losses`: why the balanced BCE alone rewards blob masks)
- spatial_mask (false = ALFRED's model): the mask decoder also reads the frame's 7×7 features,
  modulated by the decoder state (`alfred_task.models.modules.MaskDecoder`; two extra modules)
- subcell_mask (false = ALFRED's model): the mask decoder adds a 28×28 map whose sub-cell logits
  are the decoder state's queries against each 7×7 cell's features (same module; two extra modules)

Evaluation: ``allenact -b . <cfg> --eval -c <ckpt> --deterministic_agents`` (argmax actions and
the model's own masks at sigmoid > 0.5, as ALFRED's agent; AllenAct's test mode, see
`eval_storage`) runs the test split; per-episode numerators/denominators land in AllenAct's metrics file and
``python -m alfred_task.evaluation.allenact_metrics <metrics json>`` turns them into ALFRED's SR/GC/PLW.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Sequence, Type

import gym
import torch
from allenact.base_abstractions.experiment_config import ExperimentConfig, MachineParams
from allenact.base_abstractions.sensor import Sensor
from allenact.utils.experiment_utils import Builder, TrainingPipeline

from alfred_task.models.losses import LossWeights
from baseline_configs.alfred.options import MODEL_SIZES, AlfredSeq2SeqOptions, ConfigError
from allenact_ext.compat import install_allenact_fixes

install_allenact_fixes()  # workers re-import this module (see rearrange_base's docstring)

__all__ = ["AlfredSeq2SeqBaseConfig", "ConfigError", "MODEL_SIZES"]


class AlfredSeq2SeqBaseConfig(ExperimentConfig):
    PROGRESS_MONITOR = True
    TAG = "alfred_seq2seq"
    #: batch norm on running statistics in training mode too (`AlfredSeq2SeqActorCritic`); the
    #: DAgger config turns it on, offline imitation batches are diverse enough for batch statistics
    freeze_batchnorm = False

    #: the options this config takes (``--config_kwargs``), checked before anything is built
    OPTIONS: ClassVar[Type[AlfredSeq2SeqOptions]] = AlfredSeq2SeqOptions
    #: a named recipe's fixed options (leaf configs); kwargs may add the others, not change these
    RECIPE: ClassVar[Mapping[str, Any]] = {}

    def __init__(self, **kwargs: Any) -> None:
        self.options = self.OPTIONS.from_kwargs(self.with_recipe(kwargs))
        o = self.options
        self.data_root = Path(o.data_root)
        self.splits = Path(o.splits) if o.splits else self.data_root / "splits.json"
        if not self.splits.is_file():
            raise ConfigError(
                f"splits: {self.splits} not found (generate a dataset with "
                f"bash scripts/gen_alfred_dataset.sh {o.data_root} ENCODER, or pass data_root/splits)"
            )
        self.vocab_path = o.vocab
        self.visual_encoder = o.visual_encoder
        self.encoder_record = self._check_encoder(o.visual_encoder)
        self.dims = o.dims
        self.model_size, self.ablation = o.model_size, o.ablation
        self.prev_action_input = o.prev_action_input
        self.mask_dice_weight = o.mask_dice_weight
        self.spatial_mask, self.subcell_mask = o.spatial_mask, o.subcell_mask
        self.lr, self.batch_size, self.training_frames = o.lr, o.batch_size, o.training_frames
        self.save_interval = o.save_interval
        self.cuda = torch.cuda.is_available()
        cpus = os.cpu_count() or 1
        self.num_train_processes = int(
            o.num_train_processes or (16 if self.cuda else max(1, min(cpus, 4)))
        )
        self.num_test_processes = int(
            o.num_test_processes or (8 if self.cuda else max(1, min(cpus, 4)))
        )
        self.test_split, self.test_limit, self.max_steps = o.test_split, o.test_limit, o.max_steps
        self.backend, self.planner = o.backend, o.planner
        self.metric_accumulate_interval = o.metric_accumulate_interval
        self.sampler_torch_threads = o.sampler_torch_threads
        self.trainer_torch_threads = o.trainer_torch_threads
        self._mode: Optional[str] = None  # the mode of AllenAct's last machine_params call
        self._vocab = None

    @classmethod
    def with_recipe(cls, kwargs: Mapping[str, Any]) -> Dict[str, Any]:
        """`kwargs` on top of `RECIPE`: an option the recipe fixes may only be repeated, not changed."""
        for k, v in kwargs.items():
            if k in cls.RECIPE and v != cls.RECIPE[k]:
                raise ConfigError(
                    f"{k}: {v!r} differs from {cls.RECIPE[k]!r}, fixed by the {cls.__name__} recipe "
                    f"(its base config takes any value)"
                )
        return {**cls.RECIPE, **kwargs}

    @property
    def eval_storage(self) -> bool:
        """AllenAct's test stage needs a rollout storage, pure offline training must not have one
        (it would step simulators for nothing); ``allenact --eval`` is the one run that tests, and
        there the policy hands the task its own masks with its actions (`emit_masks`). AllenAct's
        engines call `machine_params` with their mode before `create_model` and
        `training_pipeline`, so the mode says it (the ``eval_storage`` option overrides)."""
        if self.options.eval_storage is not None:
            return self.options.eval_storage
        return self._mode == "test"

    # --- inputs -----------------------------------------------------------------------------
    @staticmethod
    def _check_encoder(spec: str) -> Dict[str, Any]:
        from alfred_task.data.features import check_encoder

        try:
            return check_encoder(spec)
        except (ValueError, FileNotFoundError) as e:
            raise ConfigError(f"visual_encoder: {e}") from None

    def check_dataset_encoder(self, data_root: Path) -> None:
        """The features on disk must come from the encoder the run names (evaluation re-featurises
        frames with it): compare with the dataset's ``dataset_meta.json`` when it has one."""
        from alfred_task.data.dataset_meta import visual_encoder_of

        made = visual_encoder_of(data_root)
        if made is None:
            return
        keys = ("name", "weights", "seed", "file")
        differs = any(made.get(k) != self.encoder_record.get(k) for k in keys if k != "file")
        if not differs and made.get("weights") == "file":
            # a weights file may sit elsewhere (a clone, the shipped copy): same numbers, any path
            from alfred_task.data.features import ResnetFeatures

            try:
                digest = ResnetFeatures(self.visual_encoder).describe()["weights_sha256"]
            except ValueError as e:
                raise ConfigError(f"visual_encoder: {e}") from None
            differs = made.get("weights_sha256") != digest
        if differs:
            raise ConfigError(
                f"visual_encoder {self.visual_encoder!r} is not the encoder that made "
                f"{data_root}'s features ({ {k: made.get(k) for k in keys if made.get(k)} })"
            )

    def demo_storage(
        self, data_root: Path, splits: Path, split: str, max_examples: Optional[int]
    ) -> Builder:
        """Teacher-forced demonstration batches (`AlfredDemoStorage`) numericalised with this run's
        vocabulary, so offline batches and online observations index the same embeddings."""
        from alfred_task.training.il_storage import AlfredDemoStorage

        return Builder(
            AlfredDemoStorage,
            {
                "data_root": str(data_root),
                "splits": str(splits),
                "split": split,
                "batch_size": self.batch_size,
                "mask_size": self.dims["pframe"],
                "max_examples": max_examples,
                "vocab": self.vocab,
            },
        )

    @property
    def vocab(self):
        """ALFRED's vocabulary (pp.vocab, or built over every split), built once per process."""
        if self._vocab is None:
            from alfred_task.data.il_dataset import resolve_vocab
            from alfred_task.data.traj_data import load_split_file

            self._vocab = resolve_vocab(
                self.vocab_path, self.data_root, load_split_file(self.splits)
            )
        return self._vocab

    def tag(self) -> str:
        pm = "_pm" if self.PROGRESS_MONITOR else ""
        abl = "" if self.ablation == "none" else f"_{self.ablation}"
        return f"{self.TAG}{pm}{abl}_{self.model_size}"

    def input_sensors(self) -> List[Sensor]:
        """Language and features: what the policy reads, in every mode."""
        from alfred_task.alfred_sensors import (
            GoalTokensSensor,
            InstructionTokensSensor,
            ResnetFeatureSensor,
        )
        from alfred_task.data.features import RANDOM_ENCODER

        spec, seed = self.visual_encoder, 0
        if spec.startswith(RANDOM_ENCODER + ":"):
            spec, seed = RANDOM_ENCODER, int(spec.split(":", 1)[1])
        return [GoalTokensSensor(), InstructionTokensSensor(), ResnetFeatureSensor(spec, seed=seed)]

    @abstractmethod
    def train_sensors(self) -> List[Sensor]: ...

    # --- model ------------------------------------------------------------------------------
    def model_kwargs(self) -> Dict[str, Any]:
        """What `build_actor_critic` (evaluation) needs to rebuild the network."""
        return {
            "num_words": len(self.vocab.word),
            **self.dims,
            "progress_monitor": self.PROGRESS_MONITOR,
            "ablation": self.ablation,
            "mask_lang_padding": True,
            "prev_action_input": self.prev_action_input,
            "spatial_mask": self.spatial_mask,
            "subcell_mask": self.subcell_mask,
        }

    def create_model(self, **kwargs) -> torch.nn.Module:
        from alfred_task.models.agent import AGENT_REF
        from alfred_task.models.trained import AlfredSeq2SeqTrainedPolicy
        from alfred_task.alfred_tasks import ACTION_NAMES

        if self.trainer_torch_threads is not None:  # create_model runs in the trainer process
            torch.set_num_threads(self.trainer_torch_threads)
        spaces = {s.uuid: s.observation_space for s in self.input_sensors()}
        record = {
            "agent": AGENT_REF,
            "kwargs": {
                "model_kwargs": self.model_kwargs(),
                "vocab": self.vocab.to_record(),
                "visual_encoder": self.visual_encoder,
            },
        }
        return AlfredSeq2SeqTrainedPolicy(
            gym.spaces.Discrete(len(ACTION_NAMES)),
            gym.spaces.Dict(spaces),
            action_names=ACTION_NAMES,
            eval_record=record,
            freeze_batchnorm=self.freeze_batchnorm,
            emit_masks=self.eval_storage,
            **self.model_kwargs(),
        )

    def loss_weights(self) -> LossWeights:
        """ALFRED's README command: action 1, mask 1, subgoal and progress aux 0.1 (PM only)."""
        aux = 0.1 if self.PROGRESS_MONITOR else 0.0
        return LossWeights(
            action=1.0, mask=1.0, subgoal_aux=aux, progress_aux=aux, mask_dice=self.mask_dice_weight
        )

    # --- machines ---------------------------------------------------------------------------
    def machine_params(self, mode: str = "train", **kwargs) -> MachineParams:
        gpus = list(range(torch.cuda.device_count())) if self.cuda else []
        if mode == "train":
            n, devices = self.train_processes(), gpus[:1] or ["cpu"]
        elif mode == "valid":
            n, devices = 0, ["cpu"]
        elif mode == "test":
            n, devices = self.num_test_processes, gpus[:1] or ["cpu"]
        else:
            raise ValueError(f"unknown mode {mode!r} (expected train, valid or test)")
        self._mode = mode  # see eval_storage
        return MachineParams(nprocesses=n, devices=devices)

    def train_processes(self) -> int:
        return self.num_train_processes

    @abstractmethod
    def training_pipeline(self, **kwargs) -> TrainingPipeline: ...

    # --- samplers ---------------------------------------------------------------------------
    def make_sampler_fn(self, **kwargs):
        from alfred_task.alfred_task_samplers import AlfredTaskSampler

        torch.set_num_threads(self.sampler_torch_threads)  # runs in the sampler's process
        return AlfredTaskSampler(**kwargs)

    def sampler_args(
        self,
        split: str,
        sensors: Sequence[Sensor],
        process_ind: int,
        total: int,
        seed: int,
        deterministic: bool,
    ) -> Dict[str, Any]:
        from alfred_task.data.traj_data import load_split_file

        entries = list(load_split_file(self.splits).get(split, ()))
        if not entries:
            raise ConfigError(f"split {split!r} of {self.splits} has no entries")
        if deterministic and self.test_limit:
            entries = entries[: int(self.test_limit)]
        mine = entries[process_ind::total]
        if not deterministic and not mine:  # more training samplers than entries: all of them each
            mine = entries
        return {
            "data_root": str(self.data_root),
            "splits": {split: mine},
            "split": split,
            "sensors": list(sensors),
            "vocab": self.vocab,
            "max_steps": self.max_steps,
            "seed": seed,
            "deterministic": deterministic,
            "backend": self.backend,
            "planner": self.planner,
        }

    def test_task_sampler_args(
        self,
        process_ind: int,
        total_processes: int,
        devices=None,
        seeds=None,
        deterministic_cudnn: bool = False,
    ) -> Dict[str, Any]:
        seed = seeds[process_ind] if seeds else process_ind
        return self.sampler_args(
            self.test_split, self.input_sensors(), process_ind, total_processes, seed, True
        )

    def valid_task_sampler_args(
        self,
        process_ind: int,
        total_processes: int,
        devices=None,
        seeds=None,
        deterministic_cudnn: bool = False,
    ) -> Dict[str, Any]:
        return self.test_task_sampler_args(process_ind, total_processes, devices, seeds)

    def run_record(self) -> Dict[str, Any]:
        """What result files record about the run's inputs (encoder, dims, ablation)."""
        return {
            "visual_encoder": self.visual_encoder,
            "encoder": self.encoder_record,
            "dims": self.dims,
            "ablation": self.ablation,
            "progress_monitor": self.PROGRESS_MONITOR,
            "prev_action_input": self.prev_action_input,
            "mask_dice_weight": self.mask_dice_weight,
            "spatial_mask": self.spatial_mask,
            "subcell_mask": self.subcell_mask,
            "freeze_batchnorm": self.freeze_batchnorm,
        }
