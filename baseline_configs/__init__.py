"""AllenAct experiment configs (`allenact -b . baseline_configs/<track>/<config>.py`).

Owns experiment wiring only: which task sampler, sensors, model, losses and pipeline run, and
the machine parameters. `rearrange_base` holds what every rearrangement config shares and
installs the AllenAct compatibility fixes (`allenact_ext.compat`) with one explicit call.
Library code the configs build on (encoders, schedules, AllenAct fixes) lives in `allenact_ext`.
"""
