"""Forecast fairness on uploaded quantile forecasts: reading (wide/long), validation messages, per-group metrics,
coverage gaps and the two-model skill comparison."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from fairviz.data import DataError
from fairviz.forecast import crps as C
from fairviz import forecast as ev

LEVELS = (0.005, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.995)


def _frame(seed=0, n_a=60, n_b=30, steps=8, sd_b=1.0, wide=True, model=None, shift=0.0):
    """Gaussian forecasts N(μ, 1); group B's truth has sd ``sd_b`` (so its bands are too narrow when sd_b > 1)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_a + n_b):
        group = "A" if s < n_a else "B"
        for step in range(1, steps + 1):
            mu = rng.normal()
            truth = mu + shift + rng.normal(0, 1.0 if group == "A" else sd_b)
            row = {"id": f"s{s}", "step": step, "truth": truth, "group": group, "point": mu}
            row.update({f"q{lvl:g}": mu + sps.norm.ppf(lvl) for lvl in LEVELS})
            if model:
                row["model"] = model
            rows.append(row)
    frame = pd.DataFrame(rows)
    if wide:
        return frame
    long = frame.melt(id_vars=[c for c in frame.columns if not c.startswith("q")], var_name="quantile_name",
                      value_name="value")
    long["level"] = long.pop("quantile_name").str[1:].astype(float)
    return long.sample(frac=1, random_state=seed)


def test_level_names():
    assert ev.parse_level("q0.05") == 0.05 and ev.parse_level("q_0.9") == 0.9
    assert ev.parse_level("quantile_0.5") == 0.5 and ev.parse_level("0.975") == 0.975
    assert ev.parse_level("q05") == 0.05 and ev.parse_level("p95") == 0.95
    assert ev.parse_level("truth") is None and ev.parse_level("q1.5") is None and ev.parse_level("step") is None


def test_guess_and_build_wide():
    frame = _frame()
    mapping = ev.guess_mapping(frame)
    assert (mapping.series, mapping.step, mapping.truth, mapping.point) == ("id", "step", "truth", "point")
    assert mapping.groups == ("group",) and not mapping.long
    models = ev.build(frame, mapping)
    fc = models["model"]
    assert fc.n == 720 and np.allclose(fc.levels, LEVELS)
    assert fc.attributes["group"].names == ("A", "B")


def test_long_format_gives_the_same_result():
    mapping = ev.ForecastMapping("id", "step", "truth", ("group",), point="point")
    wide = ev.analyse(ev.build(_frame(), mapping)["model"], params=ev.EvalParams(resamples=100))
    long_mapping = ev.ForecastMapping("id", "step", "truth", ("group",), point="point", level="level", value="value")
    assert ev.guess_mapping(_frame(wide=False)).long
    long = ev.analyse(ev.build(_frame(wide=False), long_mapping)["model"], params=ev.EvalParams(resamples=100))
    for g_w, g_l in zip(wide.groups, long.groups):
        assert g_w.crps == pytest.approx(g_l.crps, abs=1e-12)
        assert g_w.coverage == pytest.approx(g_l.coverage)


def test_metrics_by_group_equal_direct_computation():
    frame = _frame(sd_b=2.0)
    result = ev.analyse(ev.build(frame, ev.guess_mapping(frame))["model"], params=ev.EvalParams(resamples=300))
    q = frame[[f"q{lvl:g}" for lvl in LEVELS]].to_numpy()
    tau = np.array(LEVELS)
    for g in result.groups:
        m = (frame["group"] == g.name).to_numpy()
        y = frame["truth"].to_numpy()[m]
        assert g.crps == pytest.approx(C.crps_quantiles(q[m], y, tau).mean())
        assert g.pinball == pytest.approx(np.mean([mean_pinball(y, q[m][:, k], t) for k, t in enumerate(tau)]))
        lo, hi = q[m][:, 2], q[m][:, 6]                                   # levels 0.1 and 0.9
        assert g.coverage[0.8] == pytest.approx(np.mean((y >= lo) & (y <= hi)))
        assert g.width[0.8] == pytest.approx(np.mean(hi - lo))
        for key in ("crps", "pinball", "coverage_0.9"):
            ci = g.ci[key]
            assert ci.low <= (g.crps if key == "crps" else g.pinball if key == "pinball" else g.coverage[0.9]) <= ci.high
    a, b = result.group("A"), result.group("B")
    assert a.coverage[0.9] == pytest.approx(0.9, abs=0.05)             # honest for A
    assert b.coverage[0.9] < 0.75                                      # too narrow for B
    gap = result.largest_gap(0.9)
    assert (gap.group_i, gap.group_j) == ("A", "B") and gap.gap > 0 and gap.ci.low > 0   # i − j, CI excludes 0
    assert a.n_series == 60 and a.n_rows == 480


def mean_pinball(y, q, tau):
    u = y - q
    return np.mean(u * (tau - (u < 0)))


def test_no_gap_when_groups_are_alike():
    frame = _frame(seed=3, sd_b=1.0)
    result = ev.analyse(ev.build(frame, ev.guess_mapping(frame))["model"], params=ev.EvalParams(resamples=500))
    for gap in result.gaps:
        assert gap.ci.low <= 0 <= gap.ci.high or abs(gap.gap) < 0.05


def test_undefined_band_is_reported_not_zero():
    frame = _frame().drop(columns=["q0.005", "q0.995"])
    result = ev.analyse(ev.build(frame, ev.guess_mapping(frame))["model"], params=ev.EvalParams(resamples=50))
    assert 0.99 in result.undefined_bands and 0.99 not in result.bands
    assert any("99%" in w for w in result.warnings)
    assert "0.99" not in result.to_dict()["groups"]["A"]["coverage"]


def test_two_models_skill_by_group():
    good = _frame(seed=5, model="sharp")
    bad = _frame(seed=5, model="shifted")
    for c in bad.columns:
        if c.startswith("q"):
            bad[c] = bad[c] + np.where(bad["group"] == "B", 1.5, 0.0)    # B's forecasts are off for group B only
    frame = pd.concat([good, bad])
    models = ev.build(frame, ev.guess_mapping(frame))
    assert set(models) == {"sharp", "shifted"}
    result = ev.analyse(models["sharp"], "group", ev.EvalParams(resamples=300), compare=models["shifted"])
    skills = {s.name: s for s in result.skills}
    assert skills["A"].skill == pytest.approx(0.0, abs=1e-12)
    assert skills["B"].skill > 0.2 and skills["B"].ci.low > 0
    assert skills["B"].share_series_better == 1.0
    same = ev.analyse(models["sharp"], "group", ev.EvalParams(resamples=50), compare=models["sharp"])
    assert all(s.skill == 0 for s in same.skills)


def test_crossing_quantiles_are_sorted_with_a_note():
    frame = _frame()
    frame.loc[0, "q0.95"] = frame.loc[0, "q0.05"] - 1
    fc = ev.build(frame, ev.guess_mapping(frame))["model"]
    assert np.all(np.diff(fc.q, axis=1) >= 0)
    assert any("crossing" in n for n in fc.notes)


@pytest.mark.parametrize("change,message", [
    (lambda f: f.drop(columns=["truth"]), "truth column"),
    (lambda f: f.assign(**{"q0.5": f["q0.5"].astype(str).where(f.index > 3, "high")}), "non-numeric"),
    (lambda f: pd.concat([f, f.iloc[:2]]), "repeated (series, step)"),
    (lambda f: f[["id", "step", "truth", "group", "q0.5"]], "Fewer than two quantile levels"),
    (lambda f: f.drop(columns=["group"]), "group column"),
])
def test_bad_input_gets_a_plain_message(change, message):
    frame = _frame()
    mapping = ev.ForecastMapping("id", "step", "truth", ("group",) if "group" in change(frame).columns else ())
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ev.build(change(frame), mapping)


def test_long_level_out_of_range():
    frame = _frame(wide=False)
    frame.loc[frame.index[0], "level"] = 1.5
    mapping = ev.ForecastMapping("id", "step", "truth", ("group",), level="level", value="value")
    with pytest.raises(DataError, match="strictly between 0 and 1"):
        ev.build(frame, mapping)


def test_missing_rows_are_dropped_and_counted():
    frame = _frame()
    frame.loc[:4, "truth"] = np.nan
    fc = ev.build(frame, ev.guess_mapping(frame))["model"]
    assert fc.n == 715 and any("5 of 720 rows" in n for n in fc.notes)


def test_small_groups_have_undefined_intervals():
    frame = _frame(n_a=20, n_b=3)
    result = ev.analyse(ev.build(frame, ev.guess_mapping(frame))["model"], params=ev.EvalParams(resamples=100))
    b = result.group("B")
    assert np.isnan(b.ci["crps"].low) and np.isfinite(b.crps)
    assert any("'B' has 3 series" in w for w in result.warnings)


def test_the_bundled_sample_reads_and_has_a_rare_group():
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "assets" / "forecast" / "lorenz_forecasts.csv"
    models = ev.read(path)
    assert set(models) == {"PTN with static context", "PTN without static context"}
    fc = models["PTN with static context"]
    assert set(fc.attributes) == {"regime", "lobe"} and set(fc.attributes["regime"].names) == {"typical", "rare"}
    assert fc.levels.size == 17 and fc.point is not None
    assert np.unique(fc.step).tolist() == list(range(1, 17))
