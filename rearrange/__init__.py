"""Visual Room Rearrangement (2023 challenge: 1-phase, 2-phase, walkthrough) as AllenAct plugins.

Owns the rearrangement task: the environment wrapper over any backend's Controller
(`environment`), tasks and samplers (`tasks`), sensors, the greedy expert, pose comparison and
metrics identical to the official code (`pose_metrics`), baseline models and losses, the
2023-schema dataset I/O (`dataset`), episode generation (`gen`) and agent evaluation with
leaderboard submissions (`eval`). It starts simulators only through `backends` and never
imports `alfred_task` or `thor_lite`.
"""
