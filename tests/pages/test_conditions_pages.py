"""AppTest of the three data-conditions pages: evaluation reweighting on the loaded predictions, the retraining
simulator (its JSON equals `fairviz conditions run --json` for the same settings), and the paper reference."""
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.cli.main import main
from fairviz.conditions import reference as ref
from fairviz.conditions.evaluation import reweight
from fairviz.core.counts import decisions
from fairviz.data.samples import DEFAULT_SAMPLE, load_sample, samples
from tests.conftest import ROOT


def _open(page: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    parts += [w.value for w in at.warning] + [e.value for e in at.error]
    return "\n".join(map(str, parts))


def test_reweighting_page_on_the_default_sample():
    at = _open("app_pages/reweighting.py")
    pred = load_sample(DEFAULT_SAMPLE)
    view = pred.groups(pred.attribute_names[0])
    hat = decisions(pred.score, samples()[DEFAULT_SAMPLE].threshold).astype(int)
    expected = reweight(pred.y.astype(int), hat, view.codes, "cb", [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2],
                        groups=view.names)
    metric = next(m for m in at.metric if m.label == "Accuracy (as is)")
    assert metric.value == f"{expected.original.accuracy:.3f}"
    data = at.session_state["page_json"]["conditions_reweighting"]
    gaps = [r["gap_tpr"] for r in data["rows"]]
    accs = [r["accuracy"] for r in data["rows"]]
    assert accs == pytest.approx([r.scores.accuracy for r in expected.rows])
    if len(view.names) == 2:
        assert max(gaps) - min(gaps) < 1e-12
    assert "not retraining" in _text(at) and "Systematic Evaluation of Predictive Fairness" in _text(at)
    at.radio(key="rw_kind").set_value("jb").run()
    assert not at.exception
    assert at.session_state["page_json"]["conditions_reweighting"]["kind"] == "jb"


TINY = {"alphas": [0.0, 2.0], "methods": ["vanilla", "rw"], "seeds": 1, "m": 2000, "epochs": 3, "hidden": 16}


@pytest.mark.slow
def test_simulator_page_json_equals_cli_json(tmp_path):
    at = _open("app_pages/simulator.py")
    assert "press **Run**" in _text(at)
    at.multiselect(key="sim_alphas").set_value(TINY["alphas"])
    at.multiselect(key="sim_methods").set_value(TINY["methods"])
    at.slider(key="sim_seeds").set_value(TINY["seeds"])
    next(n for n in at.number_input if n.label.startswith("m:")).set_value(TINY["m"])
    at.slider(key="sim_epochs").set_value(TINY["epochs"])
    at.select_slider(key="sim_hidden").set_value(TINY["hidden"])
    at.run()
    at.button(key="_job_run_conditions_sim").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    page = at.session_state["page_json"]["conditions"]
    out = tmp_path / "cli.json"
    code = main(["conditions", "run", "--data", "moji-like", "--condition", "cb", "--alphas", "0,2", "--methods",
                 "vanilla,rw", "--seeds", "1", "--m", "2000", "--epochs", "3", "--hidden", "16", "--quiet",
                 "--json", str(out)])
    assert code == 0
    cli = json.loads(out.read_text())
    assert page == cli
    table = at.dataframe[-1].value
    assert len(table) == 2 * 2                                    # one row per (α, method)
    assert "Vanilla is fairest" in _text(at)
    # a stricter selection rule re-selects without retraining
    at.radio(key="sim_rule").set_value("constraint").run()
    assert not at.exception
    assert at.session_state["page_json"]["conditions"]["settings"]["min_fairness"] == 0.9


def test_simulator_grid_on_bios_like_is_not_offered_and_reference_tables():
    at = _open("app_pages/simulator.py")
    at.radio(key="sim_source").set_value("bios-like").run()
    assert not at.exception
    assert "grid" not in at.radio(key="sim_kind").options
    ref_at = _open("app_pages/conditions_reference.py")
    frames = [d.value for d in ref_at.dataframe]
    assert [len(f) for f in frames] == [9, 8, 9, 28]
    moji = frames[0].set_index("model")
    assert moji.loc["Vanilla", "DTO (recomputed)"] == pytest.approx(47.90, abs=0.01)
    assert np.allclose(moji["DTO (recomputed)"], moji["DTO (printed)"], atol=0.015)
    assert frames[3]["female ratio"].tolist() == pytest.approx(
        [round(f / (m + f), 3) for _, m, f in ref.TABLE2_BIOS])
    assert "Xudong Han" in _text(ref_at) and "Systematic Evaluation of Predictive Fairness" in _text(ref_at)


def test_reweighting_page_shows_bootstrap_intervals():
    at = _open("app_pages/reweighting.py")
    ci = at.session_state["page_json"]["conditions_reweighting"]["original_ci"]
    data = at.session_state["page_json"]["conditions_reweighting"]["original"]
    for key in ("accuracy", "fairness", "dto"):
        low, high = ci[key]
        assert low <= data[key] <= high
    assert ci["accuracy"][1] - ci["accuracy"][0] < 0.05
    assert "bootstrap within cells" in _text(at)
