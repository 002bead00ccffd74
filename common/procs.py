"""Stopping a whole process tree on SIGTERM/SIGINT (process tree from psutil).

Pools and runners start workers through a forkserver, and workers start their own samplers or
planners: killing only the main process leaves all of them running (re-parented to init).
`stop_children_on_signals` snapshots every descendant when the signal arrives, sends
them SIGTERM together (so a parent dying first does not hide its children), SIGKILLs whatever
is left after a grace period and then exits the main process with status 128 + signum.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from typing import Iterator, Optional, Set

import psutil

__all__ = [
    "descendants",
    "alive",
    "stop_descendants",
    "stop_children_on_signals",
    "SignalGuard",
    "ignore_sigint",
]

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def descendants(root: int) -> Set[int]:
    """Every live process below `root` (children, grandchildren, ...); zombies excluded."""
    try:
        procs = psutil.Process(root).children(recursive=True)
    except psutil.NoSuchProcess:
        return set()
    return {p.pid for p in procs if alive(p.pid)}


def alive(pid: int) -> bool:
    """Running or stopped (a zombie waiting to be reaped counts as gone)."""
    try:
        return psutil.Process(pid).status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.NoSuchProcess:
        return False


def _is_resource_tracker(pid: int) -> bool:
    """multiprocessing's resource tracker ignores SIGTERM/SIGINT on purpose and exits, after
    unlinking leaked shared memory, once the last process holding its pipe is gone."""
    try:
        return "multiprocessing.resource_tracker" in " ".join(psutil.Process(pid).cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def _kill(pids: Set[int], sig: int) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, sig)


def stop_descendants(grace: float = 3.0, root: Optional[int] = None) -> Set[int]:
    """SIGTERM every descendant of `root` (default: this process), SIGKILL survivors after
    `grace` seconds; returns the pids that were signalled. Resource trackers are left to exit
    by themselves when this process does."""
    root = os.getpid() if root is None else root
    signalled: Set[int] = set()
    trackers: Set[int] = set()
    for _ in range(3):  # a process forking right now adds children after the first snapshot
        new = descendants(root) - signalled - trackers
        trackers |= {p for p in new if _is_resource_tracker(p)}
        new -= trackers
        if not new:
            break
        _kill(new, signal.SIGTERM)
        signalled |= new
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(p) for p in signalled):
        time.sleep(0.05)
    left = {p for p in signalled if alive(p)} | (descendants(root) - signalled - trackers)
    if left:
        _kill(left, signal.SIGKILL)
        signalled |= left
    return signalled


class SignalGuard:
    """State of one `stop_children_on_signals` block: the signal received, if any."""

    def __init__(self, prog: str, grace: float, hard_exit_after: float) -> None:
        self.prog = prog
        self.grace = grace
        self.hard_exit_after = hard_exit_after
        self.signum: Optional[int] = None

    def handle(self, signum: int, frame) -> None:
        # Later signals are ignored from here on, until the process is gone: `timeout`, a terminal
        # or a scheduler often deliver one request twice (to the process and to its group), and a
        # second delivery must not cut the stop short (no message, orphaned children) or kill the
        # interpreter while it exits. The hard-exit thread below bounds how long stopping takes.
        for s in SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        self.signum = signum
        # a pool's worker-handler thread re-spawning the workers stopped below fails against the
        # stopped forkserver: that is this shutdown, not an error to print a traceback for
        threading.excepthook = _quiet_thread_exception
        stopped = stop_descendants(self.grace)
        name = signal.Signals(signum).name
        print(
            f"{self.prog}: received {name}; stopped {len(stopped)} child process(es); exiting",
            file=sys.stderr,
            flush=True,
        )
        # Unwinding runs `finally` blocks (temporary files removed, pools joined); if some
        # library swallows the exit or hangs in cleanup, this thread ends the process anyway.
        threading.Thread(target=self._hard_exit, daemon=True).start()
        raise SystemExit(128 + signum)

    def _hard_exit(self) -> None:
        time.sleep(self.hard_exit_after)
        # a pool's worker-handler thread may have started a fresh forkserver and workers
        # after the first sweep (it saw its workers die); they must not outlive us
        stop_descendants(grace=0.5)
        _release_multiprocessing_semaphores()
        os._exit(128 + (self.signum or 0))


def _release_multiprocessing_semaphores() -> None:
    """Run multiprocessing's remaining exit finalizers before a hard exit.

    The usual hang this thread cuts short is `Pool.terminate` joining its task-handler thread,
    which waits for a sentinel the worker-handler thread never sent (it died trying to respawn
    the stopped workers). Those finalizers (run once each; the pool's own is already running)
    unlink the pools' named semaphores, which `os._exit` would otherwise leave to the resource
    tracker and its "leaked semaphore objects" warning. Private stdlib API, so best effort.
    """
    import multiprocessing.util as mp_util

    run = getattr(mp_util, "_run_finalizers", None)
    if run is not None:
        with contextlib.suppress(Exception):
            run(0)


def ignore_sigint() -> None:
    """Pool worker initializer: a terminal's Ctrl-C reaches the whole process group, and the
    parent's `stop_children_on_signals` stops the workers, so they need not print a
    KeyboardInterrupt traceback each."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _quiet_thread_exception(args: threading.ExceptHookArgs) -> None:
    """Thread exceptions after a stop signal (see SignalGuard.handle) are not reported."""


@contextlib.contextmanager
def stop_children_on_signals(
    prog: str, grace: float = 3.0, hard_exit_after: float = 3.0
) -> Iterator[SignalGuard]:
    """While inside: SIGTERM/SIGINT stop every descendant and exit with 128 + signum.

    Only the main thread can install handlers; elsewhere this is a no-op. Previous handlers are
    restored on leaving, unless a signal came (then further signals stay ignored while the process
    exits). If the exit was swallowed by code inside (e.g. a `return` in a `finally`), it is
    raised again here.
    """
    guard = SignalGuard(prog, grace, hard_exit_after)
    if threading.current_thread() is not threading.main_thread():
        yield guard
        return
    old = {s: signal.signal(s, guard.handle) for s in SIGNALS}
    try:
        yield guard
    finally:
        if (
            guard.signum is None
        ):  # after a stop request signals stay ignored: the process is exiting
            for s, h in old.items():
                signal.signal(s, h)
    if guard.signum is not None:
        stop_descendants(grace)  # anything a pool respawned while unwinding
        raise SystemExit(128 + guard.signum)
