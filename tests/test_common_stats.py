"""`common.stats`: known values, the no-data convention, and symmetry of the paired test."""

from __future__ import annotations

import pytest

from common.stats import bootstrap_ratio_ci, paired_bootstrap_difference, wilson_interval


def test_wilson_matches_the_closed_form():
    lo, hi = wilson_interval(0, 60)
    assert lo == 0.0 and hi == pytest.approx(3.8415 / (60 + 3.8415), abs=1e-4)  # z^2 / (n + z^2)
    lo, hi = wilson_interval(10, 20)
    assert (lo, hi) == (pytest.approx(0.2993, abs=1e-3), pytest.approx(0.7007, abs=1e-3))


def test_wilson_is_symmetric_and_the_whole_range_without_data():
    lo, hi = wilson_interval(3, 30)
    lo2, hi2 = wilson_interval(27, 30)
    assert lo == pytest.approx(1 - hi2) and hi == pytest.approx(1 - lo2)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_bootstrap_ratio_is_seeded_and_brackets_the_estimate():
    num, den = [1, 0, 1, 1, 0, 1, 0, 1], [1] * 8
    lo, hi = bootstrap_ratio_ci(num, den, seed=0)
    assert (lo, hi) == bootstrap_ratio_ci(num, den, seed=0)
    assert 0.0 <= lo <= 5 / 8 <= hi <= 1.0
    assert bootstrap_ratio_ci([2.0] * 5, [4.0] * 5, seed=3) == (0.5, 0.5)  # no spread, a point
    assert bootstrap_ratio_ci([], [], seed=0) == (0.0, 1.0)


def test_paired_difference_is_antisymmetric_and_zero_on_itself():
    a = ([1, 1, 0, 1, 1, 0, 1, 1], [1] * 8)
    b = ([0, 1, 0, 0, 1, 0, 1, 0], [1] * 8)
    d, (lo, hi) = paired_bootstrap_difference(*a, *b, seed=0)
    d2, (lo2, hi2) = paired_bootstrap_difference(*b, *a, seed=0)
    assert d == pytest.approx(3 / 8) and d2 == pytest.approx(-d)
    assert lo == pytest.approx(-hi2) and hi == pytest.approx(-lo2)
    assert lo <= d <= hi and hi > 0.0
    assert paired_bootstrap_difference(*a, *a, seed=0) == (0.0, (0.0, 0.0))
    assert paired_bootstrap_difference([], [], [], [], seed=0) == (0.0, (0.0, 0.0))
