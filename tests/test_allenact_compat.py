"""The AllenAct compatibility fixes: no import side effects, one idempotent installer."""

from __future__ import annotations

import subprocess
import sys

STATE = (
    "import numpy as np; "
    "from allenact.algorithms.onpolicy_sync.runner import OnPolicyRunner; "
    "print(hasattr(np, 'NaN'), getattr(OnPolicyRunner, '_exit_status_guard', False))"
)


def _run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()


def test_importing_the_module_changes_nothing():
    out = _run("import allenact_ext.compat; " + STATE)
    assert out == ["False", "False"]


def test_install_applies_every_fix_once():
    code = (
        "import logging, torch, numpy as np\n"
        "from allenact_ext.compat import install_allenact_fixes\n"
        "from allenact.algorithms.onpolicy_sync.runner import OnPolicyRunner\n"
        "install_allenact_fixes(); first = OnPolicyRunner.log_and_close\n"
        "install_allenact_fixes()\n"
        "safe = torch.serialization.get_safe_globals()\n"
        "print(np.NaN is np.nan, OnPolicyRunner.log_and_close is first,\n"
        "      OnPolicyRunner._exit_status_guard, np.ndarray in safe and np.dtype in safe,\n"
        "      logging._warnings_showwarning is None)\n"
    )
    assert _run(code) == ["True", "True", "True", "True", "True"]


def test_the_base_config_installs_the_fixes():
    out = _run("import baseline_configs.rearrange_base; " + STATE)
    assert out == ["True", "True"]
