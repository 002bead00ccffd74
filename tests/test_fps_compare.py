"""benchmarks/thor_lite_fps_compare.py reads thor_lite_fps.py's own table format."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    path = ROOT / "benchmarks" / "thor_lite_fps_compare.py"
    spec = importlib.util.spec_from_file_location("thor_lite_fps_compare", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fps_table(rows):
    """A table the way thor_lite_fps.py writes it (markdown_table with its header)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _common import markdown_table
    header = ["res", "mix", "images read", "steps/s", "ms/step", "interactions ok", "repeats (s)"]
    return "\n".join(["# thor_lite steps per second", "", *markdown_table(header, rows, "rllrrrl")])


def test_parse_and_ratio_per_case():
    mod = _module()
    before = [mod.parse_fps_table(_fps_table([[224, "nav", "all", f"{v:.1f}", "3.6", "-", "1.0"],
                                              [300, "interact", "none", "200.0", "5", "40%", "1.0"]]))
              for v in (100.0, 300.0, 200.0)]
    after = [mod.parse_fps_table(_fps_table([[224, "nav", "all", f"{v:.1f}", "3.6", "-", "1.0"]]))
             for v in (150.0, 250.0, 50.0)]
    assert before[0] == {("224", "nav", "all"): 100.0, ("300", "interact", "none"): 200.0}
    rows = mod.compare_rows(before, after)
    assert len(rows) == 1  # a case the after tree does not measure is left out, not divided by zero
    res, mix, images, b_runs, a_runs, b_med, a_med, ratio = rows[0]
    assert (res, mix, images) == ("224", "nav", "all")
    assert (b_med, a_med, ratio) == ("200", "150", "0.75")
    assert b_runs == "100, 300, 200"
