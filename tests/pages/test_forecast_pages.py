"""AppTest of the 'Lorenz & PTN' and 'Forecast fairness' pages: they open on shipped assets and show real values."""
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.forecast import pipeline as demo, lorenz
from fairviz import forecast as ev

from tests.conftest import ROOT

SAMPLE = ROOT / "assets" / "forecast" / "lorenz_forecasts.csv"


def _open(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [s.value for s in at.success]
    parts += [i.value for i in at.info] + [w.value for w in at.warning] + [e.value for e in at.error]
    return "\n".join(map(str, parts))


@pytest.mark.slow
def test_lorenz_page_opens_on_the_shipped_model():
    at = _open("app_pages/lorenz.py")
    assert at.title[0].value.startswith("Lorenz & PTN")
    metric = next(m for m in at.metric if m.label == "Divergence time")
    div = lorenz.butterfly()
    assert metric.value == f"t = {div.divergence_time:.1f}"
    bundle = demo.load_bundle()
    s = bundle.evaluation.skill
    table = at.dataframe[0].value
    ours = table.columns[1]
    assert table[ours].tolist()[:3] == [f"{v:.2f}" for v in s.quartiles]
    assert table[ours].tolist()[3] == f"{100 * s.outperformed:.1f}%"
    assert "0.57" in table["Thesis: Chaos vs Det. (NVAR)"].tolist()
    text = _text(at)
    assert "CRPS of this forecast" in text and f"{s.n:,} test forecasts" in text
    assert len(at.get("plotly_chart")) >= 6


@pytest.mark.slow
def test_lorenz_sliders_and_window_choice_update_the_page():
    at = _open("app_pages/lorenz.py")
    most_confident = next(b for b in at.button if b.label == "Most confident")
    most_confident.click().run()
    assert not at.exception
    bundle = demo.load_bundle()
    spread = (bundle.fans.quantiles[..., -6] - bundle.fans.quantiles[..., 5]).mean(-1)
    assert at.selectbox(key="lz_window").value == int(np.argmin(spread))
    at.slider(key="lz_rho").set_value(35.0).run()
    assert not at.exception
    assert "outside the thesis's training ranges" in "\n".join(c.value for c in at.sidebar.caption)
    at.switch_page("app_pages/forecast_fairness.py").run()
    at.switch_page("app_pages/lorenz.py").run()
    assert at.slider(key="lz_rho").value == 35.0                     # kept across pages


@pytest.mark.slow
def test_forecast_fairness_page_on_the_sample():
    at = _open("app_pages/forecast_fairness.py")
    models = ev.read(SAMPLE)
    a = models["PTN with static context"]
    result = ev.analyse(a, "regime", ev.EvalParams(resamples=1000), compare=models["PTN without static context"])
    crps = next((m for m in at.metric if m.label == "CRPS (all)"), None)
    assert crps is not None, [e.value for e in at.error] + [str(x.value)[-1500:] for x in at.code]
    assert crps.value == f"{result.overall.crps:.3f}"
    cover = next((m for m in at.metric if m.label == "90% band coverage"), None)
    assert cover is not None, ([m.label for m in at.metric], [w.value for w in at.warning], at.sidebar.multiselect(key="ff_bands").value)
    assert cover.value == f"{result.overall.coverage[0.9]:.3f}"
    groups = at.dataframe[0].value
    assert set(groups["group"]) == {"typical", "rare", "all"}
    assert groups.set_index("group").loc["rare", "CRPS"] == pytest.approx(result.group("rare").crps)
    text = _text(at)
    assert "Reading." in text and "skill" in text
    at.selectbox(key="ff_attribute").set_value("lobe").run()
    assert not at.exception
    assert set(at.dataframe[0].value["group"]) == {"x > 0 wing", "x < 0 wing", "all"}


@pytest.mark.slow
def test_training_in_the_page_adds_a_session_model():
    pytest.importorskip("torch")
    at = _open("app_pages/lorenz.py")
    next(s for s in at.slider if s.label == "Epochs").set_value(2)
    next(s for s in at.slider if s.label == "Weight steps per epoch").set_value(5)
    next(b for b in at.button if b.label == "Train").click()
    at.run()
    assert not at.exception, at.exception
    assert any("Trained in" in s.value for s in at.success)
    radio = at.sidebar.radio(key="lz_model")
    assert len(radio.options) == 2 and radio.value.startswith("d=32, 2 epochs")
    assert any("Last trained" in m.value for m in at.markdown)


@pytest.mark.slow
def test_a_second_session_gets_the_cached_results():
    """A cached analysis must replay in a new session (no progress element recorded inside the cache)."""
    for _ in range(2):
        at = _open("app_pages/forecast_fairness.py")
        assert not any("went wrong" in e.value for e in at.error)
        assert any(m.label == "CRPS (all)" for m in at.metric)


@pytest.mark.slow
def test_any_test_window_runs_the_network():
    pytest.importorskip("torch")
    at = _open("app_pages/lorenz.py")
    at.radio(key="lz_other").set_value("Any test window").run()
    assert not at.exception, at.exception
    at.number_input(key="lz_system").set_value(3).run()
    at.slider(key="lz_origin").set_value(500).run()
    assert not at.exception, at.exception
    bundle = demo.load_bundle()
    test = demo.test_set(bundle.data_config)
    k = 2 * bundle.data_config.test_initial
    fan = demo.forecast_trajectory(bundle, test.states[k], tuple(test.params[2]), 500)
    crps = f"{float(fan.crps()[0]):.3f}"
    readings = [m.value for m in at.markdown if m.value.startswith("**Reading.** CRPS of this forecast")]
    assert len(readings) == 2 and crps in readings[1]
