"""ALFRED Seq2Seq+PM: pure imitation with the progress monitor (subgoal and overall-progress
heads, MSE weights 0.1 each as ALFRED's README command); otherwise `alfred_seq2seq_il.py`.

    allenact -b . baseline_configs/alfred/alfred_seq2seq_pm_il.py -o out/alfred_pm_il -s 123 \\
        --config_kwargs '{"data_root": "out/alfred_s2s", "visual_encoder": "random_resnet18", "model_size": "lite"}'
"""

from __future__ import annotations

from baseline_configs.alfred.alfred_seq2seq_il import AlfredSeq2SeqILConfig

__all__ = ["AlfredSeq2SeqPMILConfig"]


class AlfredSeq2SeqPMILConfig(AlfredSeq2SeqILConfig):
    PROGRESS_MONITOR = True
    TAG = "alfred_seq2seq_il"
