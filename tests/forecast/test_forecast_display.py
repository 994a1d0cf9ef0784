"""Forecast fairness's display list: its tables hold the JSON's numbers, and a hostile group or model name stays
inert in the HTML report, the terminal and the figures."""
import numpy as np
import pandas as pd
import pytest

from fairviz import forecast as ev
from fairviz.core.display import Figure, Table, tables, walk
from fairviz.core.markup import plot_text
from fairviz.forecast import display as report
from fairviz.report.render import to_html, to_terminal

from tests.forecast.test_forecast_evaluate import _frame

HOSTILE = "**x** [a](http://e.x/) ![i](http://e.x/p.png) <b>b</b>"


def _result(group_b: str = "B", compare: bool = True) -> ev.ForecastAudit:
    a = _frame(seed=1, model=HOSTILE)
    b = _frame(seed=1, model="plain", shift=0.3)
    frame = pd.concat([a, b], ignore_index=True) if compare else a
    frame["group"] = frame["group"].replace({"B": group_b})
    models = ev.build(frame, ev.guess_mapping(frame))
    return ev.analyse(models[HOSTILE], "group", ev.EvalParams(resamples=100),
                      compare=models["plain"] if compare else None)


@pytest.fixture(scope="module")
def hostile():
    return _result(group_b=HOSTILE)


def test_tables_hold_the_json_numbers(hostile):
    data = hostile.to_dict()
    shown = tables(report.display(hostile))
    groups = shown["forecast_groups"].frame.set_index("group")
    for name, g in [*data["groups"].items(), ("all", data["overall"])]:
        assert groups.loc[name, "crps"] == pytest.approx(g["crps"])
        assert groups.loc[name, "pinball"] == pytest.approx(g["pinball"])
        for band, value in g["coverage"].items():
            assert groups.loc[name, f"coverage_{band}"] == pytest.approx(value)
            assert groups.loc[name, f"width_{band}"] == pytest.approx(g["width"][band])
            assert list(groups.loc[name, f"coverage_{band}_ci"]) == pytest.approx(g["ci"][f"coverage_{band}"])
    gaps = shown["forecast_coverage_gaps"].frame
    assert len(gaps) == len(data["coverage_gaps"])
    for row, gap in zip(gaps.to_dict("records"), data["coverage_gaps"]):
        assert (row["group_i"], row["group_j"], f"{row['band']:g}") == (gap["group_i"], gap["group_j"], gap["band"])
        assert row["gap"] == pytest.approx(gap["gap"]) and list(row["ci"]) == pytest.approx(gap["ci"])
    skills = shown["forecast_skill"].frame.set_index("group")
    for name, s in [*data["comparison"]["groups"].items(), ("all", data["comparison"]["overall"])]:
        assert skills.loc[name, "skill"] == pytest.approx(s["skill"])
        assert skills.loc[name, "crps_a"] == pytest.approx(s["crps_a"])


def test_hostile_names_stay_inert_in_html_and_terminal(hostile):
    items = report.display(hostile)
    page = to_html(items)
    assert "<b>b</b>" not in page and "<a " not in page and "<img" not in page
    assert "&lt;b&gt;b&lt;/b&gt;" in page
    terminal = to_terminal(report.summary(hostile, "f.csv", 100))
    assert f"{HOSTILE}: " in terminal and f"'{HOSTILE}'" in terminal


def test_figures_escape_names_where_they_enter(hostile):
    escaped = plot_text(HOSTILE)
    for item in walk(report.display(hostile)):
        if isinstance(item, Figure):
            fig = item.figure()
            strings = [str(fig.layout.title.text or "")]
            for trace in fig.data:
                strings += [str(trace.name or ""), str(getattr(trace, "hovertemplate", "") or "")]
                strings += [str(v) for v in (trace.x if trace.x is not None else ()) if isinstance(v, str)]
            assert not any(HOSTILE in s for s in strings)
            assert any(escaped in s for s in strings)


def test_without_a_comparison_there_is_no_skill_table():
    result = _result(compare=False)
    shown = tables(report.display(result))
    assert "forecast_skill" not in shown and "forecast_groups" in shown
    assert all(isinstance(t, Table) for t in shown.values())
    assert np.isfinite(shown["forecast_groups"].frame["crps"]).all()
