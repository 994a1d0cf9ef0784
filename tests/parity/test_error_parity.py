"""Regression group parity: each formula against a peer (scipy, scikit-learn, the conditions concept's proxy
classes and GAP), weights = repeated rows, planted disparities found, null data not flagged, bad input refused."""
import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import mean_absolute_error, mean_squared_error, roc_auc_score

from fairviz.conditions.distributions import proxy_bins
from fairviz.conditions.metrics import confusion, gap_of
from fairviz.data.model import DataError
from fairviz.parity.error_parity import (RegressionParityParams, prediction_distance, regression_parity)
from fairviz.parity.entry_stats import (class_tensor, proxy_classes, proxy_edges, rms_gap, row_quantiles,
                                       shared_support)

NAMES = ("a", "b", "c")
FAST = RegressionParityParams(resamples=200, permutations=200)


def data(n=1500, seed=0, bias_b=0.0, shift_b=0.0, noise_b=1.0, rounded=False):
    rng = np.random.default_rng(seed)
    codes = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    y = rng.normal(10, 2, n) + shift_b * (codes == 1)
    noise = rng.normal(0, 1, n) * np.where(codes == 1, noise_b, 1.0)
    predicted = y + noise + bias_b * (codes == 1)
    if rounded:                       # few distinct values: ties in y and ŷ
        y, predicted = np.round(y), np.round(predicted)
    return y, predicted, codes


def test_error_statistics_match_scikit_learn():
    y, predicted, codes = data()
    result = regression_parity(y, predicted, codes, NAMES, params=FAST)
    for g, name in enumerate(NAMES):
        m = codes == g
        group = result.group(name)
        assert group.n == m.sum()
        assert group.mae == pytest.approx(mean_absolute_error(y[m], predicted[m]), abs=1e-12)
        assert group.rmse == pytest.approx(np.sqrt(mean_squared_error(y[m], predicted[m])), abs=1e-12)
        assert group.bias == pytest.approx(np.mean(predicted[m] - y[m]), abs=1e-12)
        assert group.pearson == pytest.approx(sps.pearsonr(y[m], predicted[m])[0], abs=1e-12)
        assert group.intervals["mae"].low < group.mae < group.intervals["mae"].high
    pair = result.pair("b", "a")
    assert pair.against_reference and result.reference == "a"            # the largest group by default
    assert pair.values["mae_gap"] == pytest.approx(result.group("b").mae - result.group("a").mae, abs=1e-12)
    assert pair.values["rmse_ratio"] == pytest.approx(result.group("b").rmse / result.group("a").rmse, abs=1e-12)


@pytest.mark.parametrize("rounded", [False, True])
def test_prediction_distances_match_scipy_and_scikit_learn(rounded):
    y, predicted, codes = data(rounded=rounded, shift_b=0.7)
    result = regression_parity(y, predicted, codes, NAMES, params=FAST)
    a, b = predicted[codes == 1], predicted[codes == 0]
    pair = result.pair("b", "a")
    assert pair.values["w1"] == pytest.approx(sps.wasserstein_distance(a, b), abs=1e-12)
    assert pair.values["ks"] == pytest.approx(sps.ks_2samp(a, b).statistic, abs=1e-12)
    labels = np.r_[np.ones(a.size), np.zeros(b.size)]
    assert pair.values["auc"] == pytest.approx(roc_auc_score(labels, np.r_[a, b]), abs=1e-12)
    if rounded:
        assert np.unique(np.r_[a, b]).size < 30                          # ties exercised: the ½ P(=) term


def test_prediction_distance_on_counts():
    support = np.array([0.0, 1.0, 3.0])
    out = prediction_distance(support, np.array([1, 1, 0]), np.array([0, 1, 1]))
    assert out["w1"][0] == pytest.approx(sps.wasserstein_distance([0, 1], [1, 3]))
    assert out["auc"][0] == pytest.approx(0.125)                           # P(a > b) 0 + ½·P(a = b) ¼


@pytest.mark.parametrize("n_classes", [4, 10])
def test_proxy_classes_and_gap_match_the_conditions_concept(n_classes):
    y, predicted, codes = data(n=2000, seed=3, bias_b=0.5)
    predicted = np.clip(predicted, y.min(), y.max())          # the authors' binning sends out-of-range ŷ to bin 0
    edges = proxy_edges(y, np.ones(y.size, np.int64), n_classes)
    bins = proxy_bins(y, n_classes)
    np.testing.assert_allclose(edges, bins.edges, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(proxy_classes(y, edges), bins.apply(y))
    np.testing.assert_array_equal(proxy_classes(predicted, edges), bins.apply(predicted))
    result = regression_parity(y, predicted, codes, NAMES, params=RegressionParityParams(
        proxy_classes=n_classes, resamples=50, permutations=50))
    peer = gap_of(confusion(bins.apply(y), bins.apply(predicted), codes, n_classes, 3))
    assert result.proxy.value == pytest.approx(peer.value, abs=1e-12)
    np.testing.assert_allclose(result.proxy.per_class, peer.per_class, rtol=0, atol=1e-12)


def test_gap_matches_gap_of_with_an_excluded_class_and_a_batch():
    rng = np.random.default_rng(2)
    T = rng.integers(0, 20, (5, 3, 5))
    T[2, 1, :] = 0                                             # class 2 has no rows in group 1: left out
    value, per_class, ok = rms_gap(T)
    peer = gap_of(T.astype(float))
    assert value == pytest.approx(peer.value, abs=1e-12) and not ok[2]
    np.testing.assert_allclose(per_class, peer.per_class, rtol=0, atol=1e-12)
    batch, _, _ = rms_gap(np.stack([T, T[::-1, :, ::-1]]), "fpr")
    assert batch[0] == pytest.approx(gap_of(T.astype(float), "fpr").value, abs=1e-12)
    assert batch[1] == pytest.approx(gap_of(T[::-1, :, ::-1].astype(float), "fpr").value, abs=1e-12)


def test_row_quantiles_are_numpy_quantiles_of_the_rows():
    rng = np.random.default_rng(4)
    values, weights = rng.normal(size=50), rng.integers(1, 6, 50)
    qs = np.linspace(0, 1, 11)
    np.testing.assert_allclose(row_quantiles(values, weights, qs), np.quantile(np.repeat(values, weights), qs),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("rounded, n", [(False, 400), (True, 400), (False, 2500)])
def test_weighted_entries_are_repeated_rows(rounded, n):
    """Every number (point estimates, CIs, p-values, adjusted p-values) of an entry of weight w equals w rows';
    with 2,500 distinct values the resampling grids are used too."""
    y, predicted, codes = data(n=n, seed=5, rounded=rounded, bias_b=0.3)
    weights = np.random.default_rng(6).integers(0, 4, y.size)            # weight 0: an entry of no rows
    weighted = regression_parity(y, predicted, codes, NAMES, weights, params=FAST)
    rows = regression_parity(*(np.repeat(a, weights) for a in (y, predicted, codes)), NAMES, params=FAST)
    assert weighted.snapped == (n > 512)
    _assert_close(weighted.to_dict(), rows.to_dict())


def _assert_close(a, b, path="result"):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _assert_close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, z) in enumerate(zip(a, b)):
            _assert_close(x, z, f"{path}[{i}]")
    elif isinstance(a, float) and b is not None:
        assert a == pytest.approx(b, abs=1e-12, rel=1e-12), path
    else:
        assert a == b, path


def test_planted_disparities_are_found():
    y, predicted, codes = data(n=3000, seed=7, bias_b=0.4)
    result = regression_parity(y, predicted, codes, NAMES, params=RegressionParityParams(permutations=500))
    pair = result.pair("b", "a")
    assert pair.p_values["bias_gap"] < 0.01 and pair.p_adjusted["bias_gap"] < 0.01
    assert pair.values["bias_gap"] == pytest.approx(0.4, abs=0.12)
    assert any(k == "bias_gap" and p.group == "b" for k, p, _ in result.flagged())
    noisy = regression_parity(*data(n=3000, seed=8, noise_b=1.6), NAMES,
                              params=RegressionParityParams(permutations=500))
    assert noisy.pair("b", "a").p_values["rmse_gap"] < 0.01
    worst = next(b for b in noisy.bounded if b.loss == "mse")
    assert worst.group == "b" and worst.p_value < 0.01
    assert noisy.proxy.p_value < 0.01                          # noisier predictions: fewer land in their own class
    shifted = regression_parity(*data(n=3000, seed=9, shift_b=1.0), NAMES,
                                params=RegressionParityParams(permutations=500))
    pair = shifted.pair("b", "a")
    assert pair.p_values["w1"] < 0.01 and pair.p_values["ks"] < 0.01 and pair.p_values["auc"] < 0.01
    assert pair.values["auc"] > 0.6


def test_null_data_is_not_flagged():
    flagged = [bool(regression_parity(*data(n=600, seed=100 + s), NAMES,
                                      params=RegressionParityParams(resamples=20, permutations=200, seed=s)).flagged())
               for s in range(40)]
    assert sum(flagged) <= 2                                   # ≥ 95% of seeds flag nothing


def test_a_small_group_never_headlines():
    rng = np.random.default_rng(10)
    y = rng.normal(size=1200)
    codes = np.r_[np.zeros(1150, int), np.ones(50, int)]
    predicted = y + rng.normal(0, 0.2, y.size) + 2.0 * codes
    result = regression_parity(y, predicted, codes, ("big", "small"), params=FAST)
    assert result.pair("small", "big").p_values["bias_gap"] < 0.01
    assert not [f for f in result.flagged() if f[0] != "proxy_gap"]
    assert any("fewer than 100" in w for w in result.warnings)


@pytest.mark.parametrize("case, message", [
    ("one group", "at least two groups"),
    ("constant", "target is constant"),
    ("nan", "missing or infinite"),
    ("text", "not numbers"),
    ("weights", "whole numbers"),
    ("reference", "not one of the groups"),
])
def test_bad_input_is_one_plain_sentence(case, message):
    y, predicted, codes = data(n=200)
    weights, params = None, FAST
    if case == "one group":
        codes = np.zeros_like(codes)
    elif case == "constant":
        y = np.full_like(y, 3.0)
    elif case == "nan":
        predicted = predicted.copy()
        predicted[4] = np.nan
    elif case == "text":
        y = y.astype(object)
        y[3] = "high"
    elif case == "weights":
        weights = np.full(y.size, 1.5)
    else:
        params = RegressionParityParams(reference="z")
    with pytest.raises(DataError) as caught:
        regression_parity(y, predicted, codes, NAMES, weights, params=params)
    assert len(caught.value.problems) == 1 and message in caught.value.problems[0]


def test_shared_support_counts_weights():
    values = np.array([1.0, 2.0, 2.0, 5.0])
    weights = np.array([2, 1, 3, 1])
    support, counts = shared_support(values, weights, [np.array([1, 1, 0, 0], bool), np.array([0, 0, 1, 1], bool)])
    np.testing.assert_array_equal(support, [1.0, 2.0, 5.0])
    np.testing.assert_array_equal(counts, [[2, 1, 0], [0, 3, 1]])


def test_class_tensor_counts_rows():
    T = class_tensor(np.array([0, 1, 1]), np.array([1, 1, 0]), np.array([0, 1, 1]), 2, 2, np.array([2, 1, 3]))
    assert T[0, 0, 1] == 2 and T[1, 1, 1] == 1 and T[1, 1, 0] == 3 and T.sum() == 6


# ----------------------------------------------------------------------------------------------- Predictions

def _regression_frame(n=900, seed=11):
    import pandas as pd
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    target = np.round(rng.normal(50, 10, n))
    prediction = np.round(target + rng.normal(0, 5, n) + 4 * (group == "b"))
    return pd.DataFrame({"target": target, "y_pred": prediction, "group": group})


def test_analyse_regression_reads_real_predictions():
    from fairviz.data import ColumnMapping, build_predictions
    from fairviz.parity import analyse_regression
    frame = _regression_frame()
    pred = build_predictions(frame, ColumnMapping("target", "y_pred", ("group",), task="regression"))
    result = analyse_regression(pred, "group", FAST)
    view = pred.groups("group")
    assert result.to_dict() == regression_parity(frame.target, frame.y_pred, view.codes, view.names,
                                                 attribute="group", params=FAST).to_dict()
    assert result.pair("b", "a").values["bias_gap"] > 3 and result.pair("b", "a").p_values["bias_gap"] < 0.01


def test_analyse_regression_on_weighted_predictions_is_the_rows():
    from fairviz.data import ColumnMapping, build_predictions
    from fairviz.parity import analyse_regression
    frame = _regression_frame(n=1500)
    mapping = ColumnMapping("target", "y_pred", ("group",), task="regression")
    entries = frame.groupby(["target", "y_pred", "group"], as_index=False).size()
    weighted = build_predictions(entries.drop(columns="size"), mapping, weights=entries["size"].to_numpy())
    assert weighted.weight is not None and weighted.weight.sum() == len(frame) > len(entries)
    rows = build_predictions(frame, mapping)
    _assert_close(analyse_regression(weighted, "group", FAST).to_dict(),
                  analyse_regression(rows, "group", FAST).to_dict())


def test_analyse_regression_refuses_binary_predictions():
    import pandas as pd
    from fairviz.data import ColumnMapping, build_predictions
    from fairviz.parity import analyse_regression
    frame = pd.DataFrame({"y": [0, 1] * 50, "p": np.linspace(0.01, 0.99, 100), "g": ["a", "b"] * 50})
    pred = build_predictions(frame, ColumnMapping("y", "p", ("g",)))
    with pytest.raises(DataError, match="need a numeric target; these are binary classification predictions"):
        analyse_regression(pred, "g", FAST)


def test_split_among_groups_is_a_permutation_of_group_labels():
    from fairviz.parity.entry_stats import split_among_groups
    cells = np.array([[3, 0, 5, 2], [1, 4, 0, 1], [2, 2, 2, 2]])
    out = split_among_groups(cells, 20000, np.random.default_rng(0))
    assert (out.sum(2) == cells.sum(1)).all() and (out.sum(1) == cells.sum(0)).all()
    share = cells.sum(1)[:, None] / cells.sum()                  # each cell's rows spread by group size
    np.testing.assert_allclose(out.mean(0), share * cells.sum(0)[None, :], atol=0.03)
    n, k, total = cells[0].sum(), cells.sum(0)[0], cells.sum()     # a hypergeometric count's variance
    expected = n * (k / total) * (1 - k / total) * (total - n) / (total - 1)
    assert out[:, 0, 0].var() == pytest.approx(expected, rel=0.05)
