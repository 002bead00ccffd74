"""Observation uuids the ALFRED Seq2Seq AllenAct wrapper reads (one source of truth for sensors,
datasets and losses). Shapes are per step and sampler; AllenAct adds [T, B] in front."""

from __future__ import annotations

#: int64 [Lg]: word ids of the goal ending with <<goal>>, right-padded with 0 (<<pad>>)
LANG_GOAL_UUID = "alfred_lang_goal"
#: int64 [Li]: word ids of all step instructions concatenated, ending with <<stop>>, right-padded with 0
LANG_INSTR_UUID = "alfred_lang_instr"
#: float32 [512, 7, 7]: ResNet-18 conv features of the current frame (`alfred_task.data.features`)
RESNET_UUID = "alfred_resnet18"
#: int64 [2]: (expert action index in the task's action list, expert success) - AllenAct's ExpertActionSensor
EXPERT_ACTION_UUID = "expert_action"
#: uint8 [300, 300]: the expert's interaction mask at this step (zeros where the action has none)
EXPERT_MASK_UUID = "alfred_expert_mask"
#: int64 [1]: absolute subgoal index (high_idx) of the expert's action at this step
EXPERT_HIGH_IDX_UUID = "alfred_expert_high_idx"
#: float32 [1]: overall-progress target (t+1)/T of the expert's demonstration at this step
EXPERT_PROGRESS_UUID = "alfred_expert_progress"

#: int64 [1]: the action_low id of the last action taken (0 = <<pad>> before the first); not read by the model
PREV_ACTION_UUID = "alfred_prev_action"
#: uint8 [S, S, 3]: the raw frame, for `alfred_task.alfred_sensors.ResnetFeaturePreprocessor` (features on the trainer's device)
RGB_UUID = "alfred_rgb"

__all__ = [
    "PREV_ACTION_UUID",
    "RGB_UUID",
    "LANG_GOAL_UUID",
    "LANG_INSTR_UUID",
    "RESNET_UUID",
    "EXPERT_ACTION_UUID",
    "EXPERT_MASK_UUID",
    "EXPERT_HIGH_IDX_UUID",
    "EXPERT_PROGRESS_UUID",
]
