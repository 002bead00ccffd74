"""ALFRED Seq2Seq (no progress monitor): pure imitation on teacher-forced demonstrations (§6).

    allenact -b . baseline_configs/alfred/alfred_seq2seq_il.py -o out/alfred_il -s 123 \\
        --config_kwargs '{"data_root": "out/alfred_s2s", "visual_encoder": "random_resnet18", "model_size": "lite"}'

One offline stage (AllenAct's ``StageComponent`` over `AlfredDemoStorage`): batches of ``batch_size``
whole (trajectory, annotation) sequences, ALFRED's losses (`AlfredSeq2SeqOfflineLoss`: action CE,
balanced mask BCE, and with the PM the subgoal/progress MSE at 0.1), Adam at ``lr`` with ALFRED's
×0.1 decay halfway (its epoch 10 of 20). AllenAct counts updates here; ``training_frames`` is
turned into updates with the train split's mean sequence length. Ablations: ``"ablation":
"no_language"`` etc. (base config docstring).
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List

from allenact.algorithms.onpolicy_sync.storage import RolloutBlockStorage
from allenact.base_abstractions.sensor import Sensor
from allenact.utils.experiment_utils import (
    Builder,
    PipelineStage,
    StageComponent,
    TrainingPipeline,
    TrainingSettings,
)
import torch

from baseline_configs.alfred.alfred_seq2seq_base import AlfredSeq2SeqBaseConfig
from baseline_configs.alfred.options import AlfredSeq2SeqILOptions, ConfigError

__all__ = ["AlfredSeq2SeqILConfig", "HalfwayDecay"]


class HalfwayDecay:
    """LR factor 1 before update `at`, `factor` after (ALFRED: ×0.1 at epoch 10 of 20). Plain
    attributes only, so the scheduler state in checkpoints loads with weights_only=True."""

    def __init__(self, at: int, factor: float = 0.1) -> None:
        self.at, self.factor = int(at), float(factor)

    def __call__(self, step: int) -> float:
        return 1.0 if step < self.at else self.factor


class AlfredSeq2SeqILConfig(AlfredSeq2SeqBaseConfig):
    PROGRESS_MONITOR = False
    TAG = "alfred_seq2seq_il"

    OPTIONS = AlfredSeq2SeqILOptions

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.train_split, self.max_examples = self.options.train_split, self.options.max_examples
        self.check_dataset_encoder(self.data_root)
        self.training_updates = self._updates_for(self.training_frames)

    def _updates_for(self, frames: int) -> int:
        """Updates that serve about `frames` teacher-forced frames (mean train sequence length)."""
        from alfred_task.data.traj_data import load_split_file

        entries = list(load_split_file(self.splits).get(self.train_split, ()))[: self.max_examples]
        if not entries:
            raise ConfigError(f"split {self.train_split!r} of {self.splits} has no entries")
        lengths, seen = [], {}
        for e in entries:
            path = e.traj_path(self.data_root, self.train_split)
            if path not in seen:
                seen[path] = len(json.loads(path.read_text())["plan"]["low_actions"]) + 1
            lengths.append(seen[path])
        per_batch = sum(lengths) / len(lengths) * min(self.batch_size, len(lengths))
        return max(1, math.ceil(frames / per_batch))

    def train_sensors(self) -> List[Sensor]:
        return self.input_sensors()

    def train_processes(self) -> int:
        return 0  # offline: no simulator while training

    def storages(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "demos": self.demo_storage(
                self.data_root, self.splits, self.train_split, self.max_examples
            )
        }
        if self.eval_storage:
            out["onpolicy"] = Builder(RolloutBlockStorage)
        return out

    def training_pipeline(self, **kwargs) -> TrainingPipeline:
        from alfred_task.models.allenact_losses import AlfredSeq2SeqOfflineLoss
        from alfred_task.alfred_tasks import ACTION_NAMES

        n = self.training_updates
        loss = Builder(
            AlfredSeq2SeqOfflineLoss, {"weights": self.loss_weights(), "action_names": ACTION_NAMES}
        )
        component = StageComponent(
            uuid="il",
            storage_uuid="demos",
            loss_names=["seq2seq"],
            training_settings=TrainingSettings(num_mini_batch=1, update_repeats=1),
        )
        return TrainingPipeline(
            named_losses={"seq2seq": loss},
            named_storages=self.storages(),
            pipeline_stages=[
                PipelineStage(
                    loss_names=["seq2seq"], max_stage_steps=n, stage_components=[component]
                )
            ],
            optimizer_builder=Builder(torch.optim.Adam, {"lr": self.lr}),
            lr_scheduler_builder=Builder(
                torch.optim.lr_scheduler.LambdaLR, {"lr_lambda": HalfwayDecay(n // 2)}
            ),
            save_interval=self.save_interval
            or n,  # > 0, else AllenAct saves nothing (not even at the end)
            metric_accumulate_interval=self.metric_accumulate_interval or max(1, min(50, n // 10)),
            max_grad_norm=float("inf"),
            num_mini_batch=1,
            update_repeats=1,
            num_steps=1,
            gamma=0.99,
            use_gae=False,
            gae_lambda=1.0,
        )
