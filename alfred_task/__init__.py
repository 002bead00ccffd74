"""ALFRED instruction following on any THOR backend.

Organised by stage, imports flowing downhill: `constants` and `agent_api` at the bottom; `data`
(trajectory formats, masks, vocabulary, features, IL datasets); `env` (the environment with
ALFRED's interaction-by-mask API, navigation, goal conditions); `planning` (symbolic state,
PDDL, planners, the online expert); `models` (Seq2Seq); then `gen` (demonstrations, templated
language), `evaluation` (task/subgoal evaluation, agents, metrics) and `training`. The AllenAct
plugin modules follow AllenAct's names: `task_types` (the 7 ALFRED task types), `alfred_tasks`,
`alfred_task_samplers`, `alfred_sensors`. It starts simulators only through `backends` and
never imports `rearrange` or `thor_lite`.
"""
