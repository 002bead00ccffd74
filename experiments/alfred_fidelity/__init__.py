"""ALFRED fidelity diagnostics: where thor_lite and THOR 2.1.0 disagree on real trajectories."""
