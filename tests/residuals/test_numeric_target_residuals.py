"""Residual distribution fairness for a regression (issue 25): D = ŷ − y in the target's units, sorted curves, knees,
F_pattern/F_dist/F_h/F_v, bootstrap and permutation as for a binary task, without the outcome split or a threshold."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance
from streamlit.testing.v1 import AppTest

from fairviz.core import stats
from fairviz.data import ColumnMapping, DataError, build_predictions
from fairviz.report.options import AuditParams
from fairviz.residuals.display import display, rdf_to_dict
from fairviz.residuals import RDFParams, analyse, at_threshold, threshold_invariance
from fairviz.residuals import figures as figs
from fairviz.data.view import View
from tests.conftest import ROOT
from tests.pages.tabs import open_tab

MAPPING = ColumnMapping("price", "y_pred", ("group",), task="regression")
QUICK = RDFParams(resamples=200, knee_resamples=20)


def _regression(n: int, seed: int, shift: float = 0.0, noise: float = 3.0, rounding: float | None = None):
    """A target in its own units (mean 50) and a prediction ŷ = y + noise, group b's errors moved by ``shift``."""
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b"], n, p=[0.55, 0.45])
    target = rng.normal(50, 10, n)
    pred = target + rng.normal(0, noise, n) + shift * (group == "b")
    if rounding:
        target, pred = np.round(target / rounding) * rounding, np.round(pred / rounding) * rounding
    return pd.DataFrame({"price": target, "y_pred": pred, "group": group})


def _predictions(frame: pd.DataFrame, **kwargs):
    return build_predictions(frame, MAPPING, source="regression.csv", **kwargs)


def _group_residuals(frame: pd.DataFrame, name: str) -> np.ndarray:
    part = frame[frame["group"] == name]
    return (part["y_pred"] - part["price"]).to_numpy()


@pytest.mark.parametrize("noise", [0.05, 3.0])      # few distinct residuals (exact support), then > MAX_SUPPORT
def test_f_dist_is_scipy_wasserstein_and_f_pattern_reads_the_range_of_d(noise):
    frame = _regression(4000, 1, shift=1.5, noise=noise, rounding=0.01 if noise < 1 else None)
    audit = analyse(_predictions(frame), params=QUICK)
    assert audit.numeric_target and audit.unit == "price" and set(audit.curves["a"]) == {"all"}
    d = {name: _group_residuals(frame, name) for name in ("a", "b")}
    all_d = np.concatenate(list(d.values()))
    for pair in audit.pairs:
        di, dj = d[pair.group_i], d[pair.group_j]
        assert pair.f_dist == pytest.approx(wasserstein_distance(di, dj), rel=1e-12, abs=1e-12)
        span = all_d.max() - all_d.min()
        assert audit.span == pytest.approx(span, rel=1e-12)
        assert pair.f_pattern == pytest.approx(1 - abs(np.median(di) - np.median(dj)) / span, rel=1e-12)
        assert np.isnan(pair.f_dist_y0) and np.isnan(pair.f_pattern_y1)          # no outcome to split by
        low, high = pair.ci["f_dist"].low, pair.ci["f_dist"].high
        assert low < pair.f_dist < high and 1.0 < low                            # in price units, around the shift
        assert {"f_pattern", "f_dist", "f_h", "f_v"} <= set(pair.ci)
    group = audit.group("b")
    assert group.mean_target == pytest.approx(frame.loc[frame.group == "b", "price"].mean(), rel=1e-12)
    assert group.median_residual == pytest.approx(np.median(d["b"]), rel=1e-12)
    if np.unique(all_d).size > stats.MAX_SUPPORT:          # the grid the resamples ran on, its measured effect stated
        assert any("price over the data's range" in w and "F_dist moves by at most" in w for w in audit.warnings)


def _kinked(n: int, left: float, right: float) -> np.ndarray:
    """Residuals whose sorted curve is steep below ``left`` and above ``right`` and nearly flat between."""
    p = (np.arange(n) + 0.5) / n
    return np.where(p < left, -80 * (left - p), np.where(p > right, 80 * (p - right), 0.5 * (p - 0.5)))


def test_knees_are_found_where_they_were_planted_in_the_targets_units():
    rng = np.random.default_rng(4)
    planted = {"a": (0.2, 0.8), "b": (0.3, 0.65)}
    parts, residuals = [], {}
    for name, (left, right) in planted.items():
        d = rng.permutation(_kinked(4000, left, right) * 25.0)        # in price units: 25× the unit curve
        target = rng.normal(300, 40, d.size)
        parts.append(pd.DataFrame({"price": target, "y_pred": target + d, "group": name}))
        residuals[name] = np.sort((target + d) - target)
    audit = analyse(_predictions(pd.concat(parts, ignore_index=True)), params=RDFParams(resamples=0))
    for name, (left, right) in planted.items():
        g = audit.group(name)
        assert g.left_knee.percentile == pytest.approx(left, abs=0.02), name
        assert g.right_knee.percentile == pytest.approx(right, abs=0.02), name
        for knee in g.knees:                   # the raw quantile at the knee, in price units
            assert knee.residual == residuals[name][int(np.ceil(4000 * knee.percentile)) - 1]
        assert g.left_knee.residual < 0 < g.right_knee.residual
        assert g.knee_rows == pytest.approx(0.2 * g.n, abs=2)                  # ε = 0.05 around two knees
    pair = audit.pair("a", "b")
    assert np.isfinite(pair.f_h) and pair.f_h > 0.1 and np.isfinite(pair.f_v)


def test_a_planted_shift_is_found_and_null_data_is_not_flagged():
    params = RDFParams(resamples=200, knee_resamples=0)
    shifted = analyse(_predictions(_regression(800, 0, shift=2.0)), params=params).pairs[0]
    assert shifted.p_dist < 0.01 and shifted.p_median < 0.01
    flagged = 0
    seeds = range(40)
    for seed in seeds:
        pair = analyse(_predictions(_regression(800, 100 + seed)), params=params).pairs[0]
        flagged += pair.p_dist < 0.01 or pair.p_median < 0.01
    assert flagged <= 0.05 * len(seeds)


@pytest.mark.parametrize("mode, rounding", [("percentile", 0.5), ("residual", 0.5), ("percentile", 0.004)])
def test_weighted_entries_equal_the_repeated_rows(mode, rounding):
    # rounded values repeat: the table's entries stand for several rows each; group a's 22,000 rows reach the knee
    # search's percentile grid; at 0.004 the residuals take more than MAX_SUPPORT values (the resamples' grid)
    frame = _regression(40_000, 7, shift=0.8, rounding=rounding)
    table = frame.groupby(["price", "y_pred", "group"], as_index=False).size().sample(frac=1, random_state=2)
    weighted = _predictions(table, weights=table["size"].to_numpy())
    rows = weighted.rows()
    assert weighted.weighted and table["size"].max() > 1
    d = frame["y_pred"] - frame["price"]
    assert (np.unique(d).size > stats.MAX_SUPPORT) == (rounding < 0.1)
    params = RDFParams(resamples=40, knee_resamples=12, region_mode=mode)
    w, r = analyse(weighted, params=params), analyse(rows, params=params)

    def close(a, b):
        return a == pytest.approx(b, rel=1e-12, abs=1e-12, nan_ok=True)

    for gw, gr in zip(w.groups, r.groups):
        assert (gw.n, gw.knee_rows, gw.left_knee, gw.right_knee) == (gr.n, gr.knee_rows, gr.left_knee, gr.right_knee)
        for field in ("mean_target", "mean_score", "mean_residual", "median_residual"):
            assert close(getattr(gw, field), getattr(gr, field)), field
    for pw, pr in zip(w.pairs, r.pairs):
        for field in ("f_pattern", "f_pattern_mean", "f_dist", "f_h", "f_v", "f_h_abs", "f_v_abs", "p_median",
                      "p_dist"):
            assert close(getattr(pw, field), getattr(pr, field)), field
        assert set(pw.ci) == set(pr.ci) == {"f_pattern", "f_dist", "f_h", "f_v"}
        for key in pw.ci:
            assert pw.ci[key].to_list() == pytest.approx(pr.ci[key].to_list(), rel=1e-12), key
        assert pw.mean_decomposition == pytest.approx(pr.mean_decomposition, rel=1e-12, abs=1e-12)
    cw, cr = w.concentration, r.concentration
    assert (cw.n_knee, cw.n_nonknee, cw.verdict) == (cr.n_knee, cr.n_nonknee, "undefined")
    for field in ("knee_mean", "nonknee_mean", "ratio"):
        assert close(getattr(cw, field), getattr(cr, field)), field
    assert cw.ratio_ci.to_list() == pytest.approx(cr.ratio_ci.to_list(), rel=1e-12)
    assert close(cw.mann_whitney.p_two_sided, cr.mann_whitney.p_two_sided)
    assert np.array_equal(w.in_knee_region, r.in_knee_region)


def test_json_and_display_list_state_the_units_and_leave_out_the_threshold():
    pred = _predictions(_regression(3000, 2, shift=1.0))
    audit = at_threshold(analyse(pred, params=QUICK), pred, 0.5)
    assert audit.at_threshold is None                            # no rates at τ for a regression
    data = json.loads(json.dumps(rdf_to_dict(audit), default=str))
    assert (data["task"], data["unit"]) == ("regression", "price")
    assert set(data["groups"]["a"]) == {"n", "mean_target", "mean_prediction", "mean_residual", "median_residual",
                                        "knee_rows"}
    assert "dp_diff" not in data["pairs"][0] and "f_dist_y0" not in data["pairs"][0]
    assert data["pairs"][0]["mean_decomposition"]["mean_target_gap"] == pytest.approx(
        audit.pair(data["pairs"][0]["group_i"], data["pairs"][0]["group_j"]).mean_decomposition["mean_target_gap"])
    assert "ece" not in data["knee_concentration"] and data["knee_concentration"]["n_knee"] > 0
    items = display(pred, audit, AuditParams())
    keys = [getattr(i, "key", None) for i in items]
    assert "threshold" not in keys and {"curves", "pairs", "groups", "concentration"} <= set(keys)
    fig = figs.sorted_residual_plot(audit)
    assert fig.layout.yaxis.title.text == "D = ŷ − y, in units of price"
    assert "ECE" not in fig.layout.title.text
    with pytest.raises(DataError, match="binary task"):
        threshold_invariance(pred)


@pytest.mark.slow
def test_the_residual_page_shows_a_regression_uploads_numbers():
    frame = _regression(3000, 5, shift=2.0)
    pred = _predictions(frame, file_fingerprint="regression-page")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.run()
    at.switch_page("app_pages/residuals.py").run()
    assert not at.exception, at.exception
    assert not any("Something went wrong" in e.value for e in at.error)
    assert any(c.value.startswith("Task: **regression** — target *price*") for c in at.caption)
    expected = analyse(pred, "group", RDFParams())
    pairs = next(d.value for d in at.dataframe if "F_dist" in d.value.columns).set_index("pair (i vs j)")
    first = expected.pairs[0]
    shown = pairs.loc[f"{first.group_i} vs {first.group_j}"]
    assert float(shown["F_dist"]) == pytest.approx(first.f_dist, abs=5e-4)
    assert float(shown["F_pattern"]) == pytest.approx(first.f_pattern, abs=5e-4)
    assert any(f"F_dist = {first.f_dist:.3f} price" in m.value for m in at.markdown)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert specs[0]["layout"]["yaxis"]["title"]["text"] == "D = ŷ − y, in units of price"
    assert not [r.label for r in at.radio if r.label == "View"]                   # no outcome views
    page_texts = " ".join(m.value for m in at.markdown)
    assert "Y = 0" not in page_texts and "Theorem 6.1: FPR" not in page_texts
    groups = open_tab(at, "rdf_tab", "Groups").dataframe[0].value.set_index("group")
    for g in expected.groups:
        assert float(groups.loc[g.name, "mean residual"]) == pytest.approx(g.mean_residual, abs=5e-4)
        assert float(groups.loc[g.name, "mean target"]) == pytest.approx(g.mean_target, abs=5e-4)
    concentration = open_tab(at, "rdf_tab", "Knee error concentration")
    assert any(m.label == "Error ratio knee / elsewhere" for m in concentration.metric)
    assert not [m for m in concentration.metric if "ECE" in m.label] and not concentration.success
    dstar = open_tab(at, "rdf_tab", "Diagnostic set D*")
    table = dstar.dataframe[0].value
    assert len(table) == int(expected.in_knee_region.sum()) and "residual D" in table.columns
    assert not any("Something went wrong" in e.value for e in dstar.error)


def _multiclass():
    rng = np.random.default_rng(6)
    probabilities = rng.dirichlet([2, 2, 2], 1500)
    frame = pd.DataFrame({"label": np.array(["cat", "dog", "bird"])[[rng.choice(3, p=q) for q in probabilities]],
                          "p_cat": probabilities[:, 0], "p_dog": probabilities[:, 1], "p_bird": probabilities[:, 2],
                          "group": rng.choice(["a", "b"], 1500)})
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    return build_predictions(frame, mapping, file_fingerprint="multiclass-page")


def test_multiclass_predictions_are_read_one_class_at_a_time():
    pred = _multiclass()
    with pytest.raises(DataError, match="pick a class in the sidebar"):
        analyse(pred, params=QUICK)
    audit = analyse(pred.at(View(class_name="dog")), params=QUICK)          # what the page is handed: a binary view
    assert not audit.numeric_target and set(audit.curves["a"]) == {"all", "y0", "y1"}


@pytest.mark.slow
def test_the_residual_page_reads_multiclass_data_one_vs_rest():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["predictions"] = _multiclass()
    at.session_state["sample_key"] = None
    at.run()
    at.switch_page("app_pages/residuals.py").run()
    assert not at.exception, at.exception
    assert not any("Something went wrong" in e.value for e in at.error)
    pairs = next(d.value for d in at.dataframe if "F_dist" in d.value.columns)
    assert {"a vs b", "b vs a"} & set(pairs["pair (i vs j)"])
