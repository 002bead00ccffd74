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


def test_mcnemar_exact_known_values():
    from common.stats import mcnemar_exact

    # 1 vs 5 discordant pairs: p = 2 * P(X <= 1 | n = 6, 1/2) = 2 * (1 + 6) / 64
    assert mcnemar_exact(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact(5, 1) == pytest.approx(14 / 64)
    # 0 vs 10: 2 / 1024; equal counts give p = 1; no discordant pairs is no evidence
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024)
    assert mcnemar_exact(7, 7) == pytest.approx(1.0)
    assert mcnemar_exact(0, 0) == 1.0


def test_paired_mean_difference_known_values():
    from common.stats import paired_bootstrap_mean_difference

    a, b = [0.5, 0.7, 0.9, 0.2], [0.4, 0.6, 0.8, 0.1]  # a constant shift of 0.1: no spread
    d, (lo, hi) = paired_bootstrap_mean_difference(a, b, seed=0)
    assert d == pytest.approx(0.1) and lo == pytest.approx(0.1) and hi == pytest.approx(0.1)
    # the same resampling as the ratio version with unit denominators
    x, y = [1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 1, 0]
    assert paired_bootstrap_mean_difference(x, y, seed=4) == paired_bootstrap_difference(
        x, [1] * 6, y, [1] * 6, seed=4
    )
    d, (lo, hi) = paired_bootstrap_mean_difference(x, y, seed=4)
    assert d == pytest.approx(2 / 6) and lo < d < hi
    with pytest.raises(ValueError):
        paired_bootstrap_mean_difference([1, 2], [1], seed=0)
