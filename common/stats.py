"""Confidence intervals and paired comparisons for evaluation tables, in one place.

Every table that reports a success rate or a ratio with an interval uses these, so two tables
that print the same numbers mean the same thing.

Convention with no data (n = 0, or nothing to resample): an interval says "no evidence", so a
proportion or ratio gets the whole unit interval (0, 1) and a paired difference gets the point
estimate 0 with the empty interval (0, 0). Callers that print a rate next to the interval print
their own "n/a" for the rate itself.
"""

from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np

__all__ = [
    "wilson_interval",
    "bootstrap_ratio_ci",
    "paired_bootstrap_difference",
    "paired_bootstrap_mean_difference",
    "mcnemar_exact",
]

Interval = Tuple[float, float]


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval of a proportion successes/n (scipy's `binomtest`); (0, 1) at n = 0.

    Wilson rather than the normal approximation because our rates are often 0 % or near it on
    tens of episodes, where the normal interval collapses to a point.
    """
    from scipy.stats import binomtest

    if n == 0:
        return 0.0, 1.0
    ci = binomtest(int(successes), int(n)).proportion_ci(
        confidence_level=confidence, method="wilson"
    )
    return float(ci.low), float(ci.high)


def _percentiles(values: np.ndarray, confidence: float) -> Interval:
    tail = (100.0 - 100.0 * confidence) / 2.0  # exactly 2.5 at 0.95 (1 - 0.95 is not exact)
    return float(np.percentile(values, tail)), float(np.percentile(values, 100.0 - tail))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, 0 where den is 0 (a resample that drew no denominator)."""
    return np.divide(num, den, out=np.zeros_like(num, dtype=float), where=den > 0)


def bootstrap_ratio_ci(
    num: Sequence[float],
    den: Sequence[float],
    seed: int,
    n_boot: int = 2000,
    confidence: float = 0.95,
) -> Interval:
    """Percentile-bootstrap interval of sum(num)/sum(den), resampling the units (seeded); (0, 1)
    with no units. Pass per-cluster sums to resample clusters rather than records."""
    num_a, den_a = np.asarray(num, float), np.asarray(den, float)
    if len(num_a) == 0:
        return 0.0, 1.0
    idx = np.random.default_rng(seed).integers(0, len(num_a), size=(n_boot, len(num_a)))
    stats = _ratio(num_a[idx].sum(1), den_a[idx].sum(1))
    return _percentiles(stats, confidence)


def paired_bootstrap_difference(
    num_a: Sequence[float],
    den_a: Sequence[float],
    num_b: Sequence[float],
    den_b: Sequence[float],
    seed: int,
    n_boot: int = 2000,
    confidence: float = 0.95,
) -> Tuple[float, Interval]:
    """a - b of sum(num)/sum(den) over the same units, with a percentile bootstrap that resamples
    units and keeps both sides of a unit together, so unit-level difficulty cancels in the
    difference (tighter than comparing two separate intervals). (0, (0, 0)) with no units."""
    sums = np.asarray([num_a, den_a, num_b, den_b], dtype=float).reshape(4, -1)
    if sums.shape[1] == 0:
        return 0.0, (0.0, 0.0)

    def diff(tot: np.ndarray) -> np.ndarray:
        return _ratio(tot[0], tot[1]) - _ratio(tot[2], tot[3])

    idx = np.random.default_rng(seed).integers(0, sums.shape[1], size=(n_boot, sums.shape[1]))
    boots = diff(sums[:, idx].sum(2))
    return float(diff(sums.sum(1))), _percentiles(boots, confidence)


def paired_bootstrap_mean_difference(
    a: Sequence[float],
    b: Sequence[float],
    seed: int,
    n_boot: int = 2000,
    confidence: float = 0.95,
) -> Tuple[float, Interval]:
    """mean(a) - mean(b) over the same units (a[i] and b[i] measured on unit i) with the paired
    percentile bootstrap of `paired_bootstrap_difference` (each unit counts once)."""
    a_, b_ = np.asarray(a, float), np.asarray(b, float)
    if a_.shape != b_.shape:
        raise ValueError(f"paired samples differ in size: {a_.shape} vs {b_.shape}")
    ones = np.ones_like(a_)
    return paired_bootstrap_difference(a_, ones, b_, ones, seed, n_boot, confidence)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs: `only_a` units where only A
    succeeded, `only_b` where only B did. Under "A and B are equally good" each discordant pair
    is a fair coin, so p is the two-sided binomial test of only_a in only_a + only_b at 1/2
    (exact, because our discordant counts are often small); 1.0 with no discordant pairs."""
    from scipy.stats import binomtest

    n = int(only_a) + int(only_b)
    if n == 0:
        return 1.0
    return float(binomtest(int(only_a), n, 0.5).pvalue)
