"""Multiclass calibration by group (issue 25): top-label and class-wise ECE against a direct computation, reliability
tables per class, bootstrap intervals, weights as repeated rows, a planted over-confident group found and calibrated
data not, bad input refused in one sentence. (No peer library is installed: torchmetrics' multiclass calibration
error exists only as a wheel on disk, netcal not at all, so the peer is the textbook loop below.)"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from fairviz.calibration.top_label_ece import (
    MulticlassParams,
    analyse_multiclass,
    calibration_chi2,
    multiclass_calibration,
)
from fairviz.data import DataError

CLASSES = ["cat", "dog", "bird", "fish"]
GROUPS = ["A", "B"]


def sample(seed: int = 0, n: int = 2000, sharpen: float = 1.0):
    """Probabilities from random logits, labels drawn from them (calibrated); group B's reported probabilities are
    raised to ``sharpen`` and renormalised (over-confident when > 1)."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2, n)
    p = np.exp(rng.normal(0, 1.2, (n, len(CLASSES))))
    p /= p.sum(1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(p, 1)).sum(1)
    reported = p.copy()
    b = codes == 1
    reported[b] = p[b] ** sharpen
    reported[b] /= reported[b].sum(1, keepdims=True)
    return y, reported, codes


def direct_ece(conf: np.ndarray, hit: np.ndarray, n_bins: int = 15) -> float:
    """Σ_b |B_b|/n · |acc(B_b) − conf(B_b)|, bins [k/15, (k+1)/15), the last closed (Guo et al. 2017)."""
    total = 0.0
    for k in range(n_bins):
        lo, hi = k / n_bins, (k + 1) / n_bins
        m = (conf >= lo) & ((conf < hi) if k < n_bins - 1 else (conf <= hi))
        if m.any():
            total += m.sum() / conf.size * abs(hit[m].mean() - conf[m].mean())
    return total


def test_top_label_and_classwise_ece_match_a_direct_computation():
    y, p, codes = sample(1, sharpen=1.6)
    result = multiclass_calibration(y, p, CLASSES, codes, GROUPS, params=MulticlassParams(resamples=200))
    for k, name in enumerate(GROUPS):
        m = codes == k
        g = result.group(name)
        conf, hit = p[m].max(1), (p[m].argmax(1) == y[m]).astype(float)
        assert g.top_ece == pytest.approx(direct_ece(conf, hit), abs=1e-12)
        assert g.accuracy == pytest.approx(hit.mean(), abs=1e-12)
        per_class = [direct_ece(p[m, c], (y[m] == c).astype(float)) for c in range(len(CLASSES))]
        assert [c.ece for c in g.classes] == pytest.approx(per_class, abs=1e-12)
        assert g.classwise_ece == pytest.approx(np.mean(per_class), abs=1e-12)
        assert [c.n_true for c in g.classes] == [int(np.sum(y[m] == c)) for c in range(len(CLASSES))]
    overall = result.overall
    assert overall.top_ece == pytest.approx(direct_ece(p.max(1), (p.argmax(1) == y).astype(float)), abs=1e-12)


def test_reliability_tables_per_class_with_beta_intervals():
    y, p, codes = sample(2)
    result = multiclass_calibration(y, p, CLASSES, codes, GROUPS, params=MulticlassParams(resamples=0))
    table = result.group("A").classes[2].reliability                 # "bird" one-vs-rest in group A
    m = codes == 0
    score, label = p[m, 2], (y[m] == 2)
    idx = np.minimum((score * 10).astype(int), 9)
    for b in range(10):
        rows = idx == b
        assert table.n[b] == rows.sum()
        if rows.any():
            assert table.observed[b] == pytest.approx(label[rows].mean(), abs=1e-12)
            assert table.mean_pred[b] == pytest.approx(score[rows].mean(), abs=1e-12)
            k, n = label[rows].sum(), rows.sum()
            assert table.ci_low[b] == pytest.approx(sps.beta.ppf(0.025, k + 1, n - k + 1), abs=1e-12)
    top = result.group("A").top_reliability
    assert top.n.sum() == m.sum()
    rows = result.bin_rows()
    assert {r["class"] for r in rows} == {None, *CLASSES}


def test_bootstrap_intervals_hold_the_estimate_region_and_are_reproducible():
    y, p, codes = sample(3, n=3000, sharpen=2.0)
    params = MulticlassParams(resamples=300, seed=7)
    first = multiclass_calibration(y, p, CLASSES, codes, GROUPS, params=params)
    again = multiclass_calibration(y, p, CLASSES, codes, GROUPS, params=params)
    assert first.group_rows() == again.group_rows()
    b = first.group("B")
    assert b.top_ece_ci.low < b.top_ece < b.top_ece_ci.high           # a large ECE: the interval holds it
    assert b.classwise_ece_ci.low < b.classwise_ece < b.classwise_ece_ci.high
    gap = next(d for d in first.gaps if d.measure == "top-label")
    assert gap.group == "A" or gap.reference == "A"
    assert not (gap.ci.low <= 0 <= gap.ci.high)                       # B's over-confidence separates the groups


def test_cell_bootstrap_agrees_with_resampling_the_rows_themselves():
    """The resample draws cells (rows sharing label, correctness and bins, each at its mean probability); its interval
    is the one of resampling the rows themselves (measured: ends within 0.003 at 2,000 resamples each)."""
    y, p, codes = sample(21, n=3000, sharpen=1.3)
    g = multiclass_calibration(y, p, CLASSES, codes, GROUPS, params=MulticlassParams(resamples=500)).group("B")
    m = codes == 1
    rng = np.random.default_rng(0)
    top, classwise = [], []
    for _ in range(500):
        i = rng.integers(0, m.sum(), m.sum())
        yy, pp = y[m][i], p[m][i]
        top.append(direct_ece(pp.max(1), (pp.argmax(1) == yy).astype(float)))
        classwise.append(np.mean([direct_ece(pp[:, c], (yy == c).astype(float)) for c in range(len(CLASSES))]))
    assert [g.top_ece_ci.low, g.top_ece_ci.high] == pytest.approx(np.quantile(top, [0.025, 0.975]), abs=0.01)
    assert [g.classwise_ece_ci.low, g.classwise_ece_ci.high] == pytest.approx(np.quantile(classwise, [0.025, 0.975]),
                                                                              abs=0.01)


def test_weights_count_as_repeated_rows():
    y, p, codes = sample(4, n=800, sharpen=1.5)
    weight = np.random.default_rng(1).integers(1, 4, y.size)
    weight[:7] = 0
    rows = np.repeat(np.arange(y.size), weight)
    params = MulticlassParams(resamples=200, strategy="quantile")
    weighted = multiclass_calibration(y, p, CLASSES, codes, GROUPS, weight, params=params)
    repeated = multiclass_calibration(y[rows], p[rows], CLASSES, codes[rows], GROUPS, params=params)
    for a, b in zip(weighted.group_rows() + weighted.class_rows() + weighted.bin_rows() + weighted.gap_rows(),
                    repeated.group_rows() + repeated.class_rows() + repeated.bin_rows() + repeated.gap_rows()):
        assert a.keys() == b.keys()
        for key in a:
            _close(a[key], b[key])


def _close(a, b):
    if isinstance(a, list):
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, float) and b is not None:
        assert a == pytest.approx(b, rel=1e-12, abs=1e-14), (a, b)
    else:
        assert a == b


def test_planted_over_confident_group_is_found():
    y, p, codes = sample(5, n=3000, sharpen=1.5)
    result = multiclass_calibration(y, p, CLASSES, codes, GROUPS, params=MulticlassParams(resamples=0))
    assert result.group("B").top_test.p < 0.01 and result.group("B").top_p_bh < 0.01
    assert min(c.p_bh for c in result.group("B").classes) < 0.01
    assert result.group("A").top_test.p > 0.01


@pytest.mark.parametrize("seed", range(10))
def test_calibrated_null_is_not_flagged(seed):
    y, p, codes = sample(200 + seed, n=2000)
    result = multiclass_calibration(y, p, CLASSES, codes, GROUPS, params=MulticlassParams(resamples=0))
    assert min(g.top_p_bh for g in result.groups) > 0.01
    assert min(c.p_bh for g in result.groups for c in g.classes) > 0.01


def test_chi2_false_positive_rate_is_near_its_level():
    """Under calibration the binned χ² test rejects at about its level (200 data sets, 5% ± 3.5%)."""
    rng = np.random.default_rng(11)
    rejected = 0
    for _ in range(200):
        p = rng.beta(2, 3, 500)
        outcome = (rng.random(500) < p).astype(int)
        rejected += calibration_chi2(p, outcome, np.ones(500)).p < 0.05
    assert 0.015 <= rejected / 200 <= 0.085


def direct_chi2(p: np.ndarray, outcome: np.ndarray, weight: np.ndarray, n_bins: int = 15) -> tuple[float, int]:
    """methods.md's rule, bin by bin: a bin with 5 expected rows of each outcome is one term (O − E)²/V, the others
    are pooled into one more term; (χ², df)."""
    terms, pool = [], np.zeros(3)
    for k in range(n_bins):
        lo, hi = k / n_bins, (k + 1) / n_bins
        m = (p >= lo) & ((p < hi) if k < n_bins - 1 else (p <= hi))
        n = weight[m].sum()
        o_e_v = np.array([weight[m] @ outcome[m], weight[m] @ p[m], weight[m] @ (p[m] * (1 - p[m]))])
        if o_e_v[1] >= 5 and n - o_e_v[1] >= 5:
            terms.append(o_e_v)
        elif n > 0:
            pool += o_e_v
    if pool[2] > 0:
        terms.append(pool)
    return float(sum((o - e) ** 2 / v for o, e, v in terms)), len(terms)


def test_chi2_keeps_the_pool_of_sparse_bins_however_small():
    """Issue 34: bins short of 5 expected rows are pooled into one bin, which is tested even when the pool itself is
    short (it was dropped, and its rows with it). Two bins stand alone; 0.02 × 20 and 0.95 × 4 pool to E = 4.2."""
    p = np.array([0.5, 0.3, 0.02, 0.95])
    rows = np.array([40, 30, 20, 4])
    hits = np.array([26, 7, 3, 2])                     # the pool: O = 5 against E = 0.4 + 3.8
    p_rows = np.repeat(p, rows)
    outcome = np.concatenate([np.arange(r) < h for r, h in zip(rows, hits)]).astype(int)
    e, v = p * rows, p * (1 - p) * rows
    by_hand = (26 - e[0]) ** 2 / v[0] + (7 - e[1]) ** 2 / v[1] + (5 - e[2:].sum()) ** 2 / v[2:].sum()
    for test in (calibration_chi2(p_rows, outcome, np.ones(rows.sum())),
                 calibration_chi2(np.repeat(p, 2), np.tile([1, 0], 4), np.column_stack([hits, rows - hits]).ravel())):
        assert test.df == 3 and test.statistic == pytest.approx(by_hand, rel=1e-12)
        assert test.p == pytest.approx(sps.chi2.sf(by_hand, 3), rel=1e-10)
    assert by_hand == pytest.approx(direct_chi2(p_rows, outcome, np.ones(rows.sum()))[0], rel=1e-12)


def test_chi2_on_adult_marital_tests_every_row():
    """The bundled Adult marital sample: all rows' class 'married' (66.28 on 15 df; 53.70 on 14 with the pool
    dropped) and the Amer-Indian-Eskimo group's 'widowed', whose bins are all sparse (5.92 on 1 df; no test at all
    before), each equal to the rule computed bin by bin."""
    from fairviz.data.samples import load_sample
    pred = load_sample("adult_marital")
    result = analyse_multiclass(pred, "race", MulticlassParams(resamples=0))
    view = pred.groups("race")
    married, widowed = pred.classes.index("married"), pred.classes.index("widowed")
    group = view.codes == view.names.index("Amer-Indian-Eskimo")
    everyone = np.ones(pred.n, bool)
    for test, rows, k, pinned in [(result.overall.classes[married].test, everyone, married, (66.28, 15)),
                                  (result.group("Amer-Indian-Eskimo").classes[widowed].test, group, widowed, (5.92, 1))]:
        p, outcome = pred.class_scores[rows, k], (pred.y[rows] == k).astype(float)
        statistic, df = direct_chi2(p, outcome, np.ones(p.size))
        assert (test.statistic, test.df) == (pytest.approx(statistic, rel=1e-12), df)
        assert (round(test.statistic, 2), test.df) == pinned
        assert test.p == pytest.approx(sps.chi2.sf(statistic, df), rel=1e-10)


def test_chi2_keeps_its_level_when_the_pool_is_sparse():
    """Under calibration with a rare outcome (p̂ ~ Beta(0.5, 20), 100 rows: every data set pools a bin of fewer
    than 5 expected rows) the test still rejects at about its level (400 data sets; measured 4.0% of 4,000)."""
    rng = np.random.default_rng(5)
    rejected = 0
    for _ in range(400):
        p = rng.beta(0.5, 20, 100)
        rejected += calibration_chi2(p, (rng.random(100) < p).astype(int), np.ones(100)).p < 0.05
    assert 0.015 <= rejected / 400 <= 0.085


def test_progress_is_reported_up_to_done():
    y, p, codes = sample(12, n=400)
    seen = []
    multiclass_calibration(y, p, CLASSES, codes, GROUPS, params=MulticlassParams(resamples=300),
                           progress=lambda fraction, message: seen.append((fraction, message)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    assert len(seen) == 3 * 3 and seen[0][1] == "Resampling all rows"      # 3 blocks × (all rows + 2 groups)


def test_predicted_class_and_confidence_give_top_label_only():
    y, p, codes = sample(6, sharpen=1.4)
    full = multiclass_calibration(y, p, CLASSES, codes, GROUPS, params=MulticlassParams(resamples=0))
    top = multiclass_calibration(y, None, CLASSES, codes, GROUPS, params=MulticlassParams(resamples=0),
                                 predicted=p.argmax(1), confidence=p.max(1))
    assert top.group("B").top_ece == pytest.approx(full.group("B").top_ece, abs=1e-15)
    assert top.group("B").classes == () and not top.classwise
    assert any("class-wise calibration" in note and "not available" in note for note in top.notes)
    assert top.class_rows() == []


@pytest.mark.parametrize("change, message", [
    (lambda y, p, c: (y, p, np.zeros_like(c)), "at least two groups"),
    (lambda y, p, c: (y, np.where(np.arange(p.size).reshape(p.shape) == 5, np.nan, p), c), "1 missing"),
    (lambda y, p, c: (y, p * 1.5, c), "between 0 and 1"),
    (lambda y, p, c: (y + 0.5, p, c), "not classes 0 to 3"),
    (lambda y, p, c: (y, p[:, :3], c), "one column per class (4)"),
])
def test_bad_input_is_one_plain_sentence(change, message):
    y, p, codes = sample(7, n=300)
    y2, p2, c2 = change(y, p, codes)
    with pytest.raises(DataError) as error:
        multiclass_calibration(y2, p2, CLASSES, c2, GROUPS, params=MulticlassParams(resamples=0))
    assert len(error.value.problems) == 1 and message in error.value.problems[0]


def test_an_absent_class_and_probabilities_off_one_are_noted_and_read_as_given():
    """As the data model reads them: a class no row has, and rows whose probabilities miss 1, are noted."""
    y, p, codes = sample(8, n=600)
    y = np.where(y == 3, 0, y)                                   # no row is a fish
    p[:50] *= 0.9                                                # 50 rows sum to 0.9
    result = multiclass_calibration(y, p, CLASSES, codes, GROUPS, params=MulticlassParams(resamples=0))
    assert any("No row has the class fish" in note for note in result.notes)
    assert any("In 50 rows the class probabilities do not sum to 1" in note for note in result.notes)
    fish = result.group("A").classes[3]
    m = codes == 0
    assert fish.n_true == 0 and fish.ece == pytest.approx(direct_ece(p[m, 3], np.zeros(m.sum())), abs=1e-12)


def test_a_predicted_class_without_a_confidence_is_one_sentence():
    y, p, codes = sample(9, n=300)
    with pytest.raises(DataError) as error:
        multiclass_calibration(y, None, CLASSES, codes, GROUPS, predicted=p.argmax(1),
                               confidence=np.full(y.size, np.nan))
    assert error.value.problems == ["No confidence is mapped, so top-label calibration (confidence against accuracy) "
                                    "cannot be assessed; map the predicted class's confidence or every class's "
                                    "probability."]


def test_analyse_multiclass_refuses_a_regression_task():
    class Regression:
        task = "regression"
    with pytest.raises(DataError, match="needs a label of several classes"):
        analyse_multiclass(Regression(), "g")
