"""benchmarks/thor_lite_fps_compare.py reads thor_lite_fps.py's own table format."""

from __future__ import annotations


from tests.conftest import load_benchmark


def _module():
    return load_benchmark("thor_lite_fps_compare")


def _fps_table(rows, cpu: bool = False):
    """A table the way thor_lite_fps.py writes it (markdown_table with its header); without the
    CPU column as older checkouts wrote it."""
    markdown_table = load_benchmark("_common").markdown_table

    header = ["res", "mix", "images read", "steps/s", "ms/step", "interactions ok", "repeats (s)"]
    header += ["CPU ms/step"] if cpu else []
    return "\n".join(
        ["# thor_lite steps per second", "", *markdown_table(header, rows, "r" * len(header))]
    )


def test_parse_and_ratio_per_case():
    mod = _module()
    before = [
        mod.parse_fps_table(
            _fps_table(
                [
                    [224, "nav", "all", f"{v:.1f}", "3.6", "-", "1.0"],
                    [300, "interact", "none", "200.0", "5", "40%", "1.0"],
                ]
            )
        )
        for v in (100.0, 300.0, 200.0)
    ]
    after = [
        mod.parse_fps_table(_fps_table([[224, "nav", "all", f"{v:.1f}", "3.6", "-", "1.0"]]))
        for v in (150.0, 250.0, 50.0)
    ]
    assert before[0] == {
        ("224", "nav", "all"): (100.0, None),
        ("300", "interact", "none"): (200.0, None),
    }
    rows = mod.compare_rows(before, after)
    assert len(rows) == 1  # a case the after tree does not measure is left out, not divided by zero
    res, mix, images, b_runs, a_runs, b_med, a_med, ratio, b_cpu, a_cpu, cpu_ratio = rows[0]
    assert (res, mix, images) == ("224", "nav", "all")
    assert (b_med, a_med, ratio) == ("200", "150", "0.75")
    assert b_runs == "100, 300, 200"
    assert (b_cpu, a_cpu, cpu_ratio) == ("-", "-", "-")  # no CPU column: nothing invented


def test_cpu_time_ratio_is_before_over_after():
    mod = _module()
    before = [
        mod.parse_fps_table(
            _fps_table([[224, "nav", "rgb", "400.0", "2.5", "-", "1.0", f"{c:.3f}"]], cpu=True)
        )
        for c in (2.0, 3.0, 2.2)
    ]
    after = [
        mod.parse_fps_table(
            _fps_table([[224, "nav", "rgb", "420.0", "2.4", "-", "1.0", f"{c:.3f}"]], cpu=True)
        )
        for c in (1.6, 1.0, 9.0)
    ]
    assert before[0] == {("224", "nav", "rgb"): (400.0, 2.0)}
    *_, b_cpu, a_cpu, cpu_ratio = mod.compare_rows(before, after)[0]
    assert (b_cpu, a_cpu, cpu_ratio) == ("2.200", "1.600", "1.38")
