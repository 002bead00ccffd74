"""ALFRED task code (in progress)."""
