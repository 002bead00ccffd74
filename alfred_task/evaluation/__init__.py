"""ALFRED task and subgoal evaluation (`python -m alfred_task.evaluation`), agents and metrics.

A top stage: runs agents and models in the environment; nothing below imports it.
"""
