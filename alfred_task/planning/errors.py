"""Planning failures, in one module so every planner and the executor raise the same types."""

from __future__ import annotations

__all__ = [
    "PlanningError",
    "UnsolvableError",
    "PlannerTimeoutError",
    "PlannerNotFoundError",
    "PlanExecutionError",
]


class PlanningError(RuntimeError):
    """Base class for planning failures."""


class UnsolvableError(PlanningError):
    """The goal cannot be reached from the given state."""


class PlannerTimeoutError(PlanningError):
    """The planner hit its time limit."""


class PlannerNotFoundError(PlanningError):
    """The Fast Downward driver/binary from `up-fast-downward` is not available."""


class PlanExecutionError(PlanningError):
    """A plan step is not applicable in the symbolic state."""
