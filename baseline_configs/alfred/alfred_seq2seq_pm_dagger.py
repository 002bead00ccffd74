"""ALFRED Seq2Seq+PM trained online with DAgger on thor_lite: the learner acts, the online expert
(`alfred_task.planning.expert.AlfredExpert`, replanning from whatever state the learner reached) labels
every step with its action, interaction mask, subgoal index and progress.

    allenact -b . baseline_configs/alfred/alfred_seq2seq_pm_dagger.py -o out/alfred_pm_dagger -s 123 \\
        --config_kwargs '{"data_root": "out/alfred_s2s", "visual_encoder": "random_resnet18", "model_size": "lite"}'

Teacher forcing as in the rearrangement DAgger configs (`StepwiseLinearDecay`): the expert's action
is taken with probability 1 for ``bc_tf1_steps`` environment steps, then the probability falls
linearly to 0 over ``dagger_steps`` (defaults: 10 % and 50 % of ``training_frames``). The loss is
ALFRED's (`AlfredSeq2SeqLoss`) on the stored expert labels, whoever acted. When the learner
interacts, the task uses the expert's mask if the learner chose the expert's action, else the
object nearest the image centre (`alfred_task.alfred_tasks`); evaluation uses the model's own masks.
Steps count environment frames over all samplers (AllenAct's on-policy counting).
``freeze_batchnorm`` (default true): batch norm (visual encoder, mask decoder) uses its running
statistics in training too (`alfred_task.models.actor_critic`): a rollout's frames come from a
couple of episodes, and training-mode batch norm on them raised an imitation checkpoint's action
CE on expert-driven frames from 0.29 to 1.95 (session 12).

``demo_data_root`` (default none: online frames only): DAgger's *aggregation* with the
demonstrations. Every update then has two components in the one pipeline stage, the online
rollout (expert labels on the states the learner reached) and a batch of ``batch_size``
teacher-forced demonstration sequences from that dataset's ``demo_split`` (ALFRED's offline loss,
as the imitation configs), so recovery states are learnt without forgetting the demonstrations
(online-only fine-tunes drifted away from them: docs/logs/alfred_seq2seq_experiments.md).
The stage still counts online
frames. Its features must come from ``visual_encoder``; when it is not ``data_root``, ``vocab``
(a pp.vocab over both) is required, so demonstrations and episodes index the same embeddings.
"""

from __future__ import annotations

from pathlib import Path
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
from baseline_configs.alfred.options import AlfredSeq2SeqDaggerOptions, ConfigError
from allenact_ext.schedules import StepwiseLinearDecay

__all__ = ["AlfredSeq2SeqPMDaggerConfig"]


class AlfredSeq2SeqPMDaggerConfig(AlfredSeq2SeqBaseConfig):
    PROGRESS_MONITOR = True
    TAG = "alfred_seq2seq_dagger"

    OPTIONS = AlfredSeq2SeqDaggerOptions

    def __init__(self, **kwargs: Any) -> None:
        if not torch.cuda.is_available() and "trainer_torch_threads" not in self.RECIPE:
            # CPU: the policy steps between the samplers' ResNet calls
            kwargs.setdefault("trainer_torch_threads", 1)
        super().__init__(**kwargs)
        o = self.options
        self.freeze_batchnorm = o.freeze_batchnorm
        self.train_split, self.num_steps = o.train_split, o.num_steps
        self.bc_tf1_steps, self.dagger_steps = o.teacher_forcing_steps()
        self.demo_data_root = Path(o.demo_data_root) if o.demo_data_root else None
        if self.demo_data_root is not None:
            self.demo_splits = (
                Path(o.demo_splits) if o.demo_splits else self.demo_data_root / "splits.json"
            )
            if not self.demo_splits.is_file():
                raise ConfigError(f"demo_splits: {self.demo_splits} not found")
            if (
                self.vocab_path is None
                and self.demo_data_root.resolve() != self.data_root.resolve()
            ):
                raise ConfigError(
                    f"demo_data_root: {o.demo_data_root} and data_root {self.data_root} must share one "
                    f"vocabulary: pass vocab, a pp.vocab covering both (python -m alfred_task.data.preprocess "
                    f"--data {o.demo_data_root} --splits {self.demo_splits} --out DIR writes DIR/pp.vocab)"
                )
            self.check_dataset_encoder(self.demo_data_root)
            self.demo_split = o.demo_split

    def train_sensors(self) -> List[Sensor]:
        from alfred_task.alfred_sensors import (
            AlfredExpertActionSensor,
            ExpertHighIdxSensor,
            ExpertMaskSensor,
            ExpertProgressSensor,
        )

        expert = [AlfredExpertActionSensor(), ExpertMaskSensor(size=self.dims["pframe"])]
        if self.PROGRESS_MONITOR:
            expert += [ExpertHighIdxSensor(), ExpertProgressSensor()]
        return [*self.input_sensors(), *expert]

    def train_task_sampler_args(
        self,
        process_ind: int,
        total_processes: int,
        devices=None,
        seeds=None,
        deterministic_cudnn: bool = False,
    ) -> Dict[str, Any]:
        seed = seeds[process_ind] if seeds else process_ind
        return self.sampler_args(
            self.train_split, self.train_sensors(), process_ind, total_processes, seed, False
        )

    def teacher_forcing(self) -> StepwiseLinearDecay:
        return StepwiseLinearDecay(self.bc_tf1_steps, self.dagger_steps)

    def training_pipeline(self, **kwargs) -> TrainingPipeline:
        from alfred_task.models.allenact_losses import AlfredSeq2SeqLoss
        from alfred_task.alfred_tasks import ACTION_NAMES

        losses = {
            "seq2seq": Builder(
                AlfredSeq2SeqLoss, {"weights": self.loss_weights(), "action_names": ACTION_NAMES}
            )
        }
        storages, components = None, None
        if self.demo_data_root is not None:
            from alfred_task.models.allenact_losses import AlfredSeq2SeqOfflineLoss

            losses["demos"] = Builder(
                AlfredSeq2SeqOfflineLoss,
                {"weights": self.loss_weights(), "action_names": ACTION_NAMES},
            )
            storages = {
                "onpolicy": Builder(RolloutBlockStorage),
                "demos": self.demo_storage(
                    self.demo_data_root, self.demo_splits, self.demo_split, None
                ),
            }
            components = [
                StageComponent(
                    uuid=uuid,
                    storage_uuid=storage,
                    loss_names=[loss_name],
                    training_settings=TrainingSettings(num_mini_batch=1, update_repeats=1),
                )
                for uuid, storage, loss_name in (
                    ("online", "onpolicy", "seq2seq"),
                    ("demos", "demos", "demos"),
                )
            ]
        stage = PipelineStage(
            loss_names=list(losses),
            max_stage_steps=self.training_frames,
            teacher_forcing=self.teacher_forcing(),
            stage_components=components,
        )
        return TrainingPipeline(
            named_losses=losses,
            named_storages=storages,
            pipeline_stages=[stage],
            optimizer_builder=Builder(torch.optim.Adam, {"lr": self.lr}),
            save_interval=self.save_interval
            or self.training_frames,  # > 0, else AllenAct saves nothing
            metric_accumulate_interval=self.metric_accumulate_interval
            or self.num_steps * self.num_train_processes,
            max_grad_norm=float("inf"),
            num_mini_batch=1,
            update_repeats=1,
            num_steps=self.num_steps,
            gamma=0.99,
            use_gae=False,
            gae_lambda=1.0,
            advance_scene_rollout_period=None,
        )
