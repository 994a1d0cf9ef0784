"""The Objective Fairness Index ([3] §3.2): OFI(i, j) = 𝓑_i − 𝓑_j, the gap in marginal benefit 𝓑 = (FP − FN)/n,
its noise test and the reading grid of OFI with DI ([3] §3.2.3)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from fairviz.core.counts import ConfusionCounts
from fairviz.parity.pair_metrics import pair_value

OFI_TOLERANCE = 0.02        # not from [3], which gives no tolerance for "OFI ≈ 0"
# The test's name wherever it is reported (JSON ``test``, screen, report). It is not exact: a normal approximation.
OFI_TEST = "Wald z-test, each group's own variance (normal approximation)"


def marginal_benefit(cm: ConfusionCounts) -> float | None:
    return None if cm.n == 0 else (cm.fp - cm.fn) / cm.n


def ofi(cm_i, cm_j) -> float | None:
    return pair_value("ofi", cm_i, cm_j)


@dataclass(frozen=True)
class OFITest:
    """The two-sample Wald z-test of OFI: z = OFI / √(Var(𝓑_i) + Var(𝓑_j)), Var(𝓑_g) = (p₊ + p₋ − (p₊ − p₋)²)/n_g
    from each group's own rates (not in [3], which reads OFI without a noise test). Its p-value and interval are
    normal approximations, not exact: the simulated false-alarm rate at α = 0.05 is 0.052 with 100 rows and 7
    expected errors per group, but 0.14 with 2 expected errors in 100 rows (docs/methods.md)."""
    se: float
    z: float
    p_value: float
    ci: tuple[float, float]


def benefit_variance(cm: ConfusionCounts) -> float:
    """Var(𝓑) estimated from the group's own rates: (p₊ + p₋ − (p₊ − p₋)²)/n."""
    if cm.n == 0:
        return float("nan")
    up, down = cm.fp / cm.n, cm.fn / cm.n
    return (up + down - (up - down) ** 2) / cm.n


def ofi_test(cm_i: ConfusionCounts, cm_j: ConfusionCounts, level: float = 0.95) -> OFITest:
    value = ofi(cm_i, cm_j)
    se = float(np.sqrt(benefit_variance(cm_i) + benefit_variance(cm_j)))
    if value is None or not np.isfinite(se):
        return OFITest(np.nan, np.nan, np.nan, (np.nan, np.nan))
    if se == 0:
        return OFITest(0.0, 0.0 if value == 0 else np.inf, 1.0 if value == 0 else 0.0, (value, value))
    z = value / se
    half = sps.norm.ppf(0.5 + level / 2) * se
    return OFITest(se, float(z), float(2 * sps.norm.sf(abs(z))), (value - half, value + half))


def classify(ofi_value: float, p_value: float, di_rule: str, tolerance: float = OFI_TOLERANCE,
             alpha: float = 0.05) -> str:
    """The reading grid of OFI with DI ([3] §3.2.3, with fairviz's tolerance and noise test):
    'algorithmic' (|OFI| beyond the tolerance and beyond noise), 'possible' (beyond the tolerance, within noise),
    'small' (beyond noise, within the tolerance), 'systemic' (OFI ≈ 0 while DI leaves the four-fifths band),
    'none'."""
    within = abs(ofi_value) <= tolerance
    noise = not (p_value < alpha)
    if not within:
        return "possible" if noise else "algorithmic"
    if not noise:
        return "small"
    return "systemic" if di_rule in ("for i", "for j") else "none"
