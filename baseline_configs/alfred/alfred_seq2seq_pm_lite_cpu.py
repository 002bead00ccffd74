"""The recipe recorded for the shipped ``pretrained_model_ckpts/alfred_seq2seq_pm_il/`` checkpoint
(its ``config_kwargs.json``): lite Seq2Seq+PM by pure imitation on 2 CPU cores (batch 8, Adam
1e-3, the shipped thor_lite ResNet-18, sub-cell mask decoder, decoder fed the demonstration's
actions).

    allenact -b . baseline_configs/alfred/alfred_seq2seq_pm_lite_cpu.py -o out/alfred_pm_cpu -s 0 \\
        --config_kwargs '{"data_root": "out/alfred_s2s_thor_aug"}'

That checkpoint was trained by ``benchmarks/alfred_seq2seq_learning.py`` (800 updates, ×0.1 after
update 600: its README has the command); this config is the same model and optimiser under
AllenAct, with ``training_frames`` left at the base default. Only the data paths are left to
``--config_kwargs``; ``tests/test_alfred_recipes.py`` checks this recipe against the record.
"""

from __future__ import annotations

from types import MappingProxyType

from baseline_configs.alfred.alfred_seq2seq_pm_il import AlfredSeq2SeqPMILConfig

__all__ = ["AlfredSeq2SeqPMLiteCpuConfig"]


class AlfredSeq2SeqPMLiteCpuConfig(AlfredSeq2SeqPMILConfig):
    RECIPE = MappingProxyType(
        {
            "visual_encoder": "pretrained_model_ckpts/alfred_thor_resnet18/thor_resnet18.pt",
            "model_size": "lite",
            "ablation": "none",
            "prev_action_input": "taken",
            "subcell_mask": True,
            "lr": 0.001,
            "batch_size": 8,
        }
    )
