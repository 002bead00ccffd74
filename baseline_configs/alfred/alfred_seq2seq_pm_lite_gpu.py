"""The recipe of the shipped ``pretrained_model_ckpts/alfred_seq2seq_pm_gpu/`` checkpoint: lite
Seq2Seq+PM by pure imitation on one GPU (batch 32, Adam 1e-3, 1 M teacher-forced frames, the
shipped thor_lite ResNet-18, sub-cell mask decoder, decoder fed the demonstration's actions).

    allenact -b . baseline_configs/alfred/alfred_seq2seq_pm_lite_gpu.py -o out/alfred_pm_gpu -s 0 \\
        --config_kwargs '{"data_root": "OUT/data/alfred_s2s_thor_aug", "vocab": "OUT/data/pp.vocab"}'

Only the data paths are left to ``--config_kwargs`` (with process counts and test settings); the
checkpoint's ``run.json`` records the paths its run used (``tests/test_alfred_recipes.py`` checks
that this recipe is the rest of those kwargs). ``save_interval`` 129 is the tenth of the planned
1,294 updates that ``scripts/train_alfred_gpu.sh`` sets under a deadline (the shipped file is
update 516).
"""

from __future__ import annotations

from types import MappingProxyType

from baseline_configs.alfred.alfred_seq2seq_pm_il import AlfredSeq2SeqPMILConfig

__all__ = ["AlfredSeq2SeqPMLiteGpuConfig"]


class AlfredSeq2SeqPMLiteGpuConfig(AlfredSeq2SeqPMILConfig):
    RECIPE = MappingProxyType(
        {
            "visual_encoder": "pretrained_model_ckpts/alfred_thor_resnet18/thor_resnet18.pt",
            "model_size": "lite",
            "prev_action_input": "taken",
            "spatial_mask": False,
            "subcell_mask": True,
            "lr": 0.001,
            "batch_size": 32,
            "training_frames": 1_000_000,
            "save_interval": 129,
        }
    )
