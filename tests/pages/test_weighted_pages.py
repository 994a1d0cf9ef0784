"""AppTest: an upload reduced by the engine (weighted predictions: one entry per (group, label, score) cell) drives
every audit page with the same headline numbers as the same file read row by row."""
from __future__ import annotations

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fairviz.data.engine import Engine, resolve
from fairviz.data.samples import load_sample, sample_path, samples

from tests.conftest import ROOT
from tests.pages.tabs import TAB_KEYS, labels, open_tab

AUDIT_PAGES = ["app_pages/residuals.py", "app_pages/calibration.py", "app_pages/parity.py", "app_pages/significance.py",
               "app_pages/reweighting.py"]


@pytest.fixture(scope="module")
def weighted():
    stats = Engine().reduce(resolve(sample_path("compas")), samples()["compas"].mapping)
    pred = stats.predictions()
    assert pred.weighted and stats.exact and pred.y.size < 200 and pred.n == 7214
    return pred


@pytest.fixture(scope="module")
def rows():
    return load_sample("compas")


def _open(pred, page: str | None = None) -> AppTest:
    """The app with ``pred`` as the session's data, as the home page leaves it after an upload."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["predictions"] = pred
    at.session_state["sample_key"] = None
    at.session_state["attribute"] = "race"
    at.session_state["threshold"] = 0.4
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception
    return at


def _headline(at: AppTest) -> tuple[dict, list[pd.DataFrame], list[str]]:
    """What a visitor reads first: the metrics, the tables and the verdict boxes (the incident box would differ)."""
    metrics = {m.label: m.value for m in at.metric}
    boxes = [e.value for e in (*at.error, *at.warning, *at.success) if "incident" not in e.value]
    return metrics, [d.value for d in at.dataframe], boxes


def _every_tab(at: AppTest, page: str) -> tuple[dict, list[pd.DataFrame], list[str]]:
    """``_headline`` of each of the page's tabs in turn (only the open tab runs), merged."""
    if page not in TAB_KEYS:                                    # a page without lazy tabs: everything is drawn
        return _headline(at)
    metrics, tables, boxes = {}, [], []
    for label in labels(at):
        m, t, b = _headline(open_tab(at, TAB_KEYS[page], label))
        metrics.update(m)
        tables += t
        boxes += b
    return metrics, tables, boxes


def _same_tables(ours: list[pd.DataFrame], theirs: list[pd.DataFrame], skip: set[int] = frozenset()) -> None:
    assert len(ours) == len(theirs)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        if k in skip:
            continue
        pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_dtype=False,
                                      rtol=1e-9, atol=1e-12)


def test_home_summary_counts_rows_not_cells(weighted, rows):
    ours, theirs = _open(weighted), _open(rows)
    assert any(m.label == "Rows" and m.value == "7,214" for m in ours.metric)
    assert _headline(ours)[0] == _headline(theirs)[0]
    race = ours.dataframe[0].value.set_index("group")
    assert race.loc["African-American", "n"] == 3696
    _same_tables(_headline(ours)[1], _headline(theirs)[1])


@pytest.mark.slow
@pytest.mark.parametrize("page", AUDIT_PAGES)
def test_every_audit_page_reads_the_table_like_the_rows(weighted, rows, page):
    ours, theirs = _open(weighted, page), _open(rows, page)
    assert not ours.error or all("incident" not in e.value for e in ours.error)
    m_ours, t_ours, b_ours = _every_tab(ours, page)
    m_theirs, t_theirs, b_theirs = _every_tab(theirs, page)
    assert m_ours and m_ours == m_theirs                       # every metric, as displayed
    assert b_ours == b_theirs                                  # the verdicts
    # residual D* lists the rows of the (cell-sorted) expansion without the file's other columns: same rows in
    # another order, so its size and its residuals are compared; every other table is the same table
    skip = {k for k, t in enumerate(t_ours) if "residual D" in t.columns}
    assert len(skip) == (page == "app_pages/residuals.py")
    for k in skip:
        assert len(t_ours[k]) == len(t_theirs[k])
        assert sorted(t_ours[k]["residual D"]) == pytest.approx(sorted(t_theirs[k]["residual D"]), abs=1e-12)
    # recalibration splits the rows at random: the table's expansion is in another order than the file, so the
    # split differs (same sizes); its tables are compared by their evaluation totals
    split = {k for k, t in enumerate(t_ours) if "n (evaluation)" in t.columns}
    assert bool(split) == (page == "app_pages/calibration.py")
    for k in split:
        assert t_ours[k]["n (evaluation)"].sum() == t_theirs[k]["n (evaluation)"].sum()
    # the knee tab's "calibrate, then re-run": its recalibration is fitted on such a random split too, so the
    # "before" line is the same line and the "after" line the same model fitted on other rows
    shapes = {k for k, t in enumerate(t_ours) if "knees diagnostic" in t.columns}
    assert bool(shapes) == (page == "app_pages/residuals.py")
    for k in shapes:
        _same_tables([t_ours[k].iloc[:1]], [t_theirs[k].iloc[:1]])
        assert list(t_ours[k]["model"]) == list(t_theirs[k]["model"])
    _same_tables(t_ours, t_theirs, skip | split | shapes)


def test_row_level_features_say_why_they_are_missing(weighted):
    at = open_tab(_open(weighted, "app_pages/calibration.py"), "cal_tab", "Residuals vs features")
    assert any("Residuals against features need the file's rows" in i.value for i in at.info)
    assert open_tab(at, "cal_tab", "Recalibration").radio(key="cal_split").options == ["random fraction"]
    at = open_tab(_open(weighted, "app_pages/residuals.py"), "rdf_tab", "Diagnostic set D*")
    assert any("reduced to counts per group, label and score" in c.value for c in at.caption)
    at = open_tab(at, "rdf_tab", "Knee error concentration")
    assert any(m.label == "Error ratio knee / elsewhere" for m in at.metric)


@pytest.mark.parametrize("spoil", ["labels", "scores"])
def test_an_upload_reduced_from_its_bytes_gets_the_row_paths_messages(spoil):
    """The home page reduces the upload's bytes (``Engine.reduce(raw, mapping)``): a bad file is refused with the
    same messages, counting rows, as when the mapped columns are read row by row."""
    import io

    import numpy as np

    from fairviz.data import ColumnMapping, DataError, build_predictions, read_table
    rng = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame({"y": rng.integers(0, 2, n), "p": rng.uniform(0, 1, n).round(3),
                          "g": rng.choice(["a", "b", "c"], n, p=[.6, .395, .005])})
    if spoil == "labels":
        frame.loc[:9, "y"] = 2                                 # labels outside {0, 1}
    else:
        frame.loc[10:14, "p"] = np.nan                         # missing scores
        frame.loc[15:17, "p"] = 1.5                            # scores outside [0, 1]
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    raw = buffer.getvalue().encode()
    mapping = ColumnMapping("y", "p", ("g",))
    with pytest.raises(DataError) as rows:
        build_predictions(read_table(raw, "bad.csv")[0], mapping, source="bad.csv")
    with pytest.raises(DataError) as reduced:
        Engine().reduce(raw, mapping, name="bad.csv").predictions()
    assert reduced.value.problems == rows.value.problems and rows.value.problems
