"""ALFRED instruction following on any THOR backend.

Owns the ALFRED task: constants and data formats (`traj_schema`, `traj_data`, `masks`,
`preprocess`), the environment with ALFRED's interaction-by-mask API (`environment`), goal
conditions and task types, symbolic planning (`planning`: state, PDDL, Fast Downward, template
planner, executor), the online expert, demonstration generation with templated language
(`gen`, `language`) and task/subgoal evaluation (`eval`, `metrics`, `subgoals`, `agents`).
It starts simulators only through `backends` and never imports `rearrange` or `thor_lite`.
"""
