"""Data conditions' display lists: the reweighting tables hold the JSON's numbers, a hostile group name stays inert
in HTML, the terminal, the figures and the Evaluation reweighting page, and the paper's tables are the printed ones."""
import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.conditions import reweight
from fairviz.conditions.metrics import evaluate
from fairviz.core.display import Figure, tables, walk
from fairviz.core.markup import plot_text
from fairviz.data import ColumnMapping, build_predictions
from fairviz.conditions import display as report
from fairviz.report.render import to_html, to_terminal

from tests.conftest import ROOT

HOSTILE = "**x** [a](http://e.x/) ![i](http://e.x/p.png) <b>b</b>"


def _data(seed: int = 0, n: int = 800):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 2, n)
    y = rng.binomial(1, 0.3 + 0.3 * z)
    hat = np.where(rng.random(n) < 0.8, y, 1 - y)
    return y, hat, z


@pytest.fixture(scope="module")
def reweighting():
    y, hat, z = _data()
    return reweight(y, hat, z, "cb", (0, 0.5, 1, 1.5, 2), groups=("plain", HOSTILE)), (y, hat, z)


def test_tables_hold_the_json_rows(reweighting):
    res, (y, hat, z) = reweighting
    rows = res.to_dict()["rows"]
    shown = tables(report.conditions_table(res))["reweighting_conditions"].frame
    assert shown["accuracy"].tolist() == pytest.approx([r["accuracy"] for r in rows])
    assert shown["fairness"].tolist() == pytest.approx([r["fairness"] for r in rows])
    assert shown["gap_ppr"].tolist() == pytest.approx([r["gap_ppr"] for r in rows])
    cells = tables(report.cells_table(res, y, hat, z, 4))["reweighting_cells"].frame
    assert cells["share_then"].to_numpy() == pytest.approx(np.asarray(rows[4]["joint"]).ravel())
    assert cells["rows"].sum() == y.size
    weighted = (cells["share_then"] * cells["tpr"]).sum()        # accuracy = Σ share × TPR
    assert weighted == pytest.approx(rows[4]["accuracy"])


def test_hostile_group_is_inert(reweighting):
    res, (y, hat, z) = reweighting
    ci = evaluate(y, hat, z, 2, 2, resamples=50, seed=0).ci
    items = [*report.reweighting_head(res, ci), report.reweighting_figure(res), *report.cells_table(res, y, hat, z, 0)]
    page = to_html(items)
    assert "<b>b</b>" not in page and "<a " not in page and "<img" not in page and "&lt;b&gt;b&lt;/b&gt;" in page
    assert HOSTILE in to_terminal(items)
    for item in walk(items):
        if isinstance(item, Figure):
            assert "<b>b</b>" not in json.dumps(item.figure().to_plotly_json()["data"], default=str)


def test_cells_figure_escapes_group_names():
    from fairviz.conditions import figures
    from fairviz.conditions.distributions import TrainCells, conditions
    counts = np.array([[30, 10], [5, 20]])
    cond = conditions(counts / counts.sum(), "cb", alphas=(1.0,))[0]
    fig = figures.cells_figure(TrainCells(cond, counts, counts, np.zeros_like(counts, bool)), ("0", "1"),
                               ("a", HOSTILE))
    assert list(fig.data[0].x) == ["a", plot_text(HOSTILE)]


def test_reference_tables_are_the_printed_ones():
    groups = report.reference_tables()
    assert [g.title for g in groups] == ["Table 3: Moji", "Table 1: Valence", "Table 4: Arousal", "Table 2: Bios"]
    shown = tables(groups)
    assert [len(shown[k].frame) for k in ("paper_table_3", "paper_table_1", "paper_table_4", "paper_table_2")] == \
        [9, 8, 9, 28]
    moji = shown["paper_table_3"].frame.set_index("model")
    assert moji.loc["Vanilla", "DTO (printed)"] == pytest.approx(47.90)


def test_reweighting_page_keeps_a_hostile_group_inert():
    rng = np.random.default_rng(0)
    n = 600
    score = rng.uniform(0.05, 0.95, n)
    frame = pd.DataFrame({"y": rng.binomial(1, score), "score": score, "grp": np.repeat(["plain", HOSTILE], n // 2)})
    pred = build_predictions(frame, ColumnMapping(label="y", score="score", groups=("grp",)), source="h.csv",
                             file_fingerprint="hostile-reweighting")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.run()
    at.switch_page("app_pages/reweighting.py").run()
    assert not at.exception, at.exception
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    texts += [e.value for kind in (at.info, at.warning, at.error, at.success) for e in kind]
    joined = "\n".join(texts)
    for raw in ("![i](http", "[a](http", "<b>b</b>", "**x**"):
        assert raw not in joined, raw
    cells = next(d.value for d in at.dataframe if "TPR in the cell" in d.value.columns)
    assert HOSTILE in set(cells["group"])
    specs = json.dumps([json.loads(c.proto.spec)["data"] for c in at.get("plotly_chart")])
    assert "<b>b</b>" not in specs
    page_json = at.session_state["page_json"]["conditions_reweighting"]
    assert HOSTILE in page_json["groups"]
