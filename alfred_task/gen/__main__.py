"""`python -m alfred_task.gen`: generate demonstrations (the CLI lives in `generate.py`)."""

import sys

from alfred_task.gen.generate import main

if __name__ == "__main__":
    sys.exit(main())
