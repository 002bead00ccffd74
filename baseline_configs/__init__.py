"""AllenAct experiment configs for the rearrangement and ALFRED baselines (in progress)."""
