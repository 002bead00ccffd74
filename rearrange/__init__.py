"""Visual Room Rearrangement task code (in progress)."""
