"""`python -m alfred_task.evaluation`: the evaluation CLI (`cli.py`).

SIGTERM/SIGINT stop the worker pool (forkserver/spawn processes) too, exit 128 + signum.
"""

import sys

from common.procs import stop_children_on_signals

from alfred_task.evaluation.cli import main

if __name__ == "__main__":
    with stop_children_on_signals("python -m alfred_task.evaluation"):
        sys.exit(main())
