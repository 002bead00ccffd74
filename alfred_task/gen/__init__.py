"""Demonstration generation (`python -m alfred_task.gen`), templated language and subgoal augmentation.

A top stage: uses the expert and the environment, imported by nothing in the library.
"""
