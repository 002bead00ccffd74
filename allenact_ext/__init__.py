"""Our extensions to AllenAct: compatibility fixes, frozen visual encoders and schedules.

Library code the experiment configs in `baseline_configs/` build on; it never imports a config.
"""
