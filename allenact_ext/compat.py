"""Fixes for running AllenAct 0.5.4 on Python 3.11 / numpy 2 / torch 2.14.

Importing this module changes nothing; `install_allenact_fixes()` applies every fix, once:

- numpy 2 removed `np.NaN`, which allenact's map builders still use.
- moviepy 1.0.3 turns on `logging.captureWarnings(True)` at import, hiding every warning.
- torch >= 2.6 loads checkpoints with `weights_only=True`; allenact's checkpoints hold numpy
  scalars and schedule objects, so we allow-list the numpy types they contain.
- allenact exits 0 when a train/valid/test worker crashes; we make that exit status 1, so
  scripts and CI can trust the exit code.
- SIGTERM to the `allenact` process kills only it: its Train-N/Valid/Test workers (forkserver
  children) and their VectorSampledTask processes keep running. While the runner's
  `start_train`/`start_test` run, SIGTERM/SIGINT now stop every descendant
  (`common.procs.stop_children_on_signals`) and allenact exits with 128 + signum.

`baseline_configs/rearrange_base.py` and the ALFRED configs call it (rearrange_base's docstring says why there).
"""

from __future__ import annotations

import logging

import numpy as np

_installed = False


def _restore_np_nan() -> None:
    if not hasattr(np, "NaN"):
        np.NaN = np.nan  # type: ignore[attr-defined]


def _allow_numpy_in_checkpoints() -> None:
    import torch

    safe = [np.dtype, np.ndarray]
    try:
        from numpy._core.multiarray import scalar  # numpy 2

        safe.append(scalar)
    except ImportError:  # pragma: no cover
        pass
    safe += [type(np.dtype(t)) for t in ("float64", "float32", "int64", "int32", "bool")]
    torch.serialization.add_safe_globals(safe)


class _ErrorRecorder(logging.Handler):
    MARKERS = ("Encountered Exception. Terminating runner", "abnormally terminated")

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.failed = False

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if any(m in msg for m in self.MARKERS):
            self.failed = True


def _install_exit_status_guard() -> None:
    from allenact.algorithms.onpolicy_sync.runner import OnPolicyRunner
    from allenact.utils.system import get_logger

    if getattr(OnPolicyRunner, "_exit_status_guard", False):
        return
    original = OnPolicyRunner.log_and_close

    def log_and_close(self, *args, **kwargs):
        recorder = _ErrorRecorder()
        logger = get_logger()
        logger.addHandler(recorder)
        try:
            result = original(self, *args, **kwargs)
        finally:
            logger.removeHandler(recorder)
        if recorder.failed:
            raise SystemExit(
                "allenact: a worker process failed (see the errors above); exit status 1"
            )
        return result

    OnPolicyRunner.log_and_close = log_and_close
    OnPolicyRunner._exit_status_guard = True


def _install_signal_guard() -> None:
    from allenact.algorithms.onpolicy_sync.runner import OnPolicyRunner

    from common.procs import stop_children_on_signals

    if getattr(OnPolicyRunner, "_signal_guard", False):
        return

    def guarded(method):
        def run(self, *args, **kwargs):
            # Only the main process runs these; workers keep allenact's own handlers.
            with stop_children_on_signals("allenact"):
                return method(self, *args, **kwargs)

        run.__wrapped__ = method  # type: ignore[attr-defined]
        return run

    OnPolicyRunner.start_train = guarded(OnPolicyRunner.start_train)
    OnPolicyRunner.start_test = guarded(OnPolicyRunner.start_test)
    OnPolicyRunner._signal_guard = True


def install_allenact_fixes() -> None:
    """Apply every fix above; idempotent, so each config module may call it."""
    global _installed
    if _installed:
        return
    import allenact.utils.tensor_utils  # noqa: F401  (imports moviepy, which hijacks warnings)

    _restore_np_nan()
    logging.captureWarnings(False)
    _allow_numpy_in_checkpoints()
    _install_exit_status_guard()
    _install_signal_guard()
    _installed = True
