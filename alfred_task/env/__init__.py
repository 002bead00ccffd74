"""The ALFRED environment on any THOR backend: interaction by mask, navigation, goal conditions.

Above `data`, below planning, generation and evaluation.
"""
