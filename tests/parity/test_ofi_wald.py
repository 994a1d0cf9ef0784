"""The OFI test is what its name says: a two-sample Wald z-test on each group's own variance (a normal
approximation, not exact). Its p-value and interval are checked against statsmodels' OLS of the row benefit on the
group indicator with HC0 standard errors, which is the same test computed independently from the rows."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import fairviz.parity as P
from fairviz.core.counts import ConfusionCounts as CM
from fairviz.data import ColumnMapping, build_predictions
from fairviz.report.plan import AuditParams, audit as run_audit


def _row_benefit(cm: CM) -> np.ndarray:
    """Each row's contribution to 𝓑 = (FP − FN)/n: +1 for a false positive, −1 for a false negative, else 0."""
    return np.r_[np.ones(cm.fp), -np.ones(cm.fn), np.zeros(cm.tp + cm.tn)]


def _statsmodels_wald(cm_i: CM, cm_j: CM):
    """OFI(i, j) as the OLS slope of the row benefit on 1[group i], with HC0 (unpooled, divisor n) errors."""
    b_i, b_j = _row_benefit(cm_i), _row_benefit(cm_j)
    x = sm.add_constant(np.r_[np.ones(b_i.size), np.zeros(b_j.size)])
    fit = sm.OLS(np.r_[b_i, b_j], x).fit(cov_type="HC0")
    low, high = fit.conf_int(0.05)[1]
    return fit.params[1], fit.bse[1], fit.pvalues[1], (low, high)


PAIRS = [(CM(40, 12, 9, 139), CM(300, 45, 80, 575)),        # 200 rows vs 1,000
         (CM(5, 3, 1, 11), CM(7, 0, 1, 10)),                # Table 3.1-sized groups
         (CM(120, 40, 70, 770), CM(118, 51, 52, 779)),       # near-null
         (CM(0, 2, 0, 98), CM(10, 0, 0, 90))]               # one kind of error per group


@pytest.mark.parametrize("cm_i, cm_j", PAIRS)
def test_ofi_test_is_the_wald_z_test_of_statsmodels(cm_i, cm_j):
    value, se, p, (low, high) = _statsmodels_wald(cm_i, cm_j)
    test = P.ofi_test(cm_i, cm_j)
    assert P.ofi(cm_i, cm_j) == pytest.approx(value, abs=1e-12)
    assert test.se == pytest.approx(se, rel=1e-9)
    assert test.p_value == pytest.approx(p, rel=1e-9, abs=1e-300)
    assert test.ci == pytest.approx((low, high), abs=1e-12)


def test_the_pair_table_p_values_are_the_wald_test_of_the_rows():
    """The JSON's ``ofi_p_value`` and ``ofi_ci`` (vectorised) are the same test, from the rows' own confusion
    matrices."""
    rng = np.random.default_rng(7)
    n = 1500
    groups = rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])
    y = (rng.random(n) < 0.35).astype(int)
    score = np.clip(0.35 + 0.4 * (y - 0.35) + np.where(groups == "c", 0.15, 0) + rng.normal(0, 0.2, n), 0, 1)
    pred = build_predictions(pd.DataFrame({"y": y, "s": score, "g": groups}),
                             ColumnMapping(label="y", score="s", groups=("g",)))
    audit = P.analyse(pred, "g", P.ParityParams(threshold=0.5))
    for record in audit.pair_table():
        masks = [groups == record["group_i"], groups == record["group_j"]]
        cms = [CM(int(np.sum(m & (y == 1) & (score >= 0.5))), int(np.sum(m & (y == 1) & (score < 0.5))),
                  int(np.sum(m & (y == 0) & (score >= 0.5))), int(np.sum(m & (y == 0) & (score < 0.5))))
               for m in masks]
        value, _, p, ci = _statsmodels_wald(*cms)
        assert record["ofi"] == pytest.approx(value, abs=1e-12)
        assert record["ofi_p_value"] == pytest.approx(p, rel=1e-9, abs=1e-300)
        assert record["ofi_ci"] == pytest.approx(list(ci), abs=1e-12)


def test_the_summary_names_the_ofi_test_as_a_wald_z_test_not_an_exact_one():
    rng = np.random.default_rng(3)
    n = 1200
    groups = np.repeat(["A", "B"], n // 2)
    y = (rng.random(n) < 0.4).astype(int)
    score = np.where(groups == "B", np.clip(rng.normal(0.55, 0.2, n), 0, 1), rng.uniform(0, 1, n))
    pred = build_predictions(pd.DataFrame({"y": y, "s": score, "g": groups}),
                             ColumnMapping(label="y", score="s", groups=("g",)))
    audit = run_audit(pred, AuditParams(threshold=0.5, sections=("parity",)))
    tests = {c["test"] for c in audit.data["findings"]["candidates"] if c["kind"] == "ofi"}
    assert tests and all("Wald z-test" in t and "exact" not in t for t in tests)


def _false_alarm_rate(n_i: int, n_j: int, p_up: float, p_down: float, draws: int = 5_000) -> float:
    """How often ``ofi_test`` rejects at α = 0.05 when both groups share the FP and FN rates (OFI = 0): seeded
    draws, each distinct pair of count vectors tested once."""
    rng = np.random.default_rng(11)
    probs = [p_up, p_down, 1 - p_up - p_down]
    drawn = np.hstack([rng.multinomial(n_i, probs, draws), rng.multinomial(n_j, probs, draws)])
    distinct, times = np.unique(drawn, axis=0, return_counts=True)
    rejected = [P.ofi_test(CM(0, int(c[1]), int(c[0]), int(c[2])), CM(0, int(c[4]), int(c[3]), int(c[5]))).p_value
                < 0.05 for c in distinct]
    return float(np.dot(rejected, times) / draws)


@pytest.mark.slow
@pytest.mark.parametrize("n_i, n_j, p_up, p_down, expected", [
    (100, 100, 0.05, 0.02, 0.052),      # 7 expected errors per group: close to α
    (100, 1000, 0.02, 0.001, 0.14),     # 2 expected errors, nearly all false positives, in 100 rows
    (20, 1000, 0.05, 0.02, 0.24),       # 1.4 expected errors in 20 rows
])
def test_the_stated_accuracy_of_the_normal_approximation(n_i, n_j, p_up, p_down, expected):
    """The false-alarm rates docs/methods.md states (simulated there with 400,000 draws), to this Monte Carlo's
    precision (5,000 draws: about ±0.01)."""
    assert _false_alarm_rate(n_i, n_j, p_up, p_down) == pytest.approx(expected, abs=0.01)
