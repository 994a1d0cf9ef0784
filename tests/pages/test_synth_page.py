"""AppTest of the 'Synthetic data (HydraGAN)' page: it trains on an uploaded table, shows the thesis's tables, and
its JSON equals `fairviz synth train --json` for the same settings."""
import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.cli.main import main
from fairviz.synth import thesis

from tests.conftest import ROOT

pytest.importorskip("torch")


def small_table(n: int = 240) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    sex = rng.choice(["F", "M"], n, p=[0.3, 0.7])
    hours = rng.normal(40, 8, n).round(1)
    job = rng.choice(["clerk", "=cmd", "nurse"], n)                      # a formula-like category
    y = (rng.random(n) < 0.2 + 0.2 * (sex == "M")).astype(int)
    return pd.DataFrame({"sex": sex, "hours": hours, "job": job, "approved": y})


def _open() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("app_pages/synthetic_data.py").run()
    assert not at.exception, at.exception
    return at


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    parts += [e.value for e in at.error] + [w.value for w in at.warning]
    return "\n".join(map(str, parts))


@pytest.mark.slow
def test_page_trains_on_an_upload_and_matches_the_cli(tmp_path):
    frame = small_table()
    path = tmp_path / "loans.csv"
    frame.to_csv(path, index=False)
    at = _open()
    assert at.title[0].value == "Synthetic data (HydraGAN)"
    assert "The Art of Fairness" in _text(at) and "§3.5" in _text(at)
    at.radio(key="synth_source").set_value("upload")
    at.session_state["synth_upload"] = ("loans.csv", path.read_bytes())
    at.run()
    at.selectbox(key="synth_label").set_value("approved")
    at.multiselect(key="synth_groups_upload").set_value(["sex"])
    at.selectbox(key="synth_positive").set_value("1")
    at.run()
    at.radio(key="synth_gq_mode").set_value("Custom").run()
    at.text_input(key="synth_gq_custom").set_value("F=0.5,M=0.5")
    at.number_input(key="synth_rows").set_value(300)
    at.number_input(key="synth_epochs").set_value(3)
    at.number_input(key="synth_trials").set_value(2)
    at.run()
    next(b for b in at.button if b.label == "Run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error] + [str(c.value)[-1500:] for c in at.code]
    page_json = at.session_state["page_json"]["synth"]
    out = tmp_path / "synthetic.csv"
    code = main(["synth", "train", str(path), "--label", "approved", "--group", "sex", "--positive", "1",
                 "--group-target", "F=0.5,M=0.5", "--rows", "300", "--epochs", "3", "--trials", "2",
                 "--out", str(out), "--json", str(tmp_path / "cli.json"), "--quiet"])
    assert code == 0
    cli_json = json.loads((tmp_path / "cli.json").read_text())
    for d in (page_json, cli_json):
        d.pop("timing")
    assert page_json == cli_json
    assert page_json["rows_per_group"] == {"F": 150, "M": 150}
    exported = pd.read_csv(out)
    assert exported["sex"].value_counts().to_dict() == {"F": 150, "M": 150}
    assert not exported["job"].astype(str).str.startswith("=").any()              # neutralised
    text = _text(at)
    assert "Realism: a classifier tells real from synthetic rows" in text
    assert len(at.get("plotly_chart")) == 3                       # shares, boxplots, losses
    tables = [t.value for t in at.dataframe]
    table_35 = next(t for t in tables if "labels: synthetic" in t.columns)
    js = page_json["distribution"]["label"]["js"]
    assert table_35.set_index("metric").loc["JS distance", "labels: synthetic"] == pytest.approx(js["synthetic"])
    table_34 = next(t for t in tables if "sex=F" in t.columns)
    improves = table_34[(table_34.metric == "OFI") & (table_34.data == "Improves")]["sex=F"].iloc[0]
    assert improves == pytest.approx(page_json["fairness"]["sex=F"]["ofi"]["improves"])
    thesis_34 = next(t for t in tables if "Ages 90–95" in t.columns)                # the thesis's table as reference
    row = thesis_34[(thesis_34.metric == "DI") & (thesis_34.data == "Improves (recomputed)")]
    assert row["Ages 90–95"].iloc[0] == pytest.approx(thesis.improves("di", 1.891, 1.778))


def test_page_opens_on_adult_and_rejects_a_bad_upload(tmp_path):
    at = _open()
    assert "Becker & Kohavi" in _text(at)
    assert any("Press Run" in i.value or "press Run" in i.value for i in at.info)
    at.radio(key="synth_source").set_value("upload")
    at.session_state["synth_upload"] = ("bad.csv", b"sex,approved,x\nF,1,1\nM,0,2\nF,2,3\n")
    at.run()
    at.selectbox(key="synth_label").set_value("approved")
    at.multiselect(key="synth_groups_upload").set_value(["sex"]).run()
    assert not at.exception
    assert "at least 50 are needed" in _text(at)
