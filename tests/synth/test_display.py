"""The HydraGAN run's display list: its tables hold the JSON's numbers, and a hostile group name stays inert in the
HTML, the terminal and the figures (a short seeded run on 2 cores: marked slow)."""
import json

import pytest

pytest.importorskip("torch")

from fairviz.core.display import Figure, tables, walk  # noqa: E402
from fairviz.core.markup import plot_text  # noqa: E402
from fairviz.synth import display as report  # noqa: E402
from fairviz.report.render import to_html, to_terminal  # noqa: E402
from fairviz.synth import SynthParams, prepare, run  # noqa: E402

from tests.synth.test_run import skewed_table  # noqa: E402

HOSTILE = "**x** [a](http://e.x/) ![i](http://e.x/p.png) <b>b</b>"


@pytest.fixture(scope="module")
def result():
    frame = skewed_table()
    frame["g"] = frame["g"].replace({"b": HOSTILE})
    return run(prepare(frame, "y", ["g"]), SynthParams(rows=200, epochs=5, trials=1, batch=100))


@pytest.mark.slow
def test_tables_hold_the_json_numbers(result):
    data = result.to_dict()
    shown = tables(report.display(result))
    table_35 = shown["synth_table_35"].frame.set_index("metric")
    assert table_35.loc["JS distance", "labels: synthetic"] == pytest.approx(data["distribution"]["label"]["js"]["synthetic"])
    table_34 = shown["synth_table_34"].frame
    column = f"g={HOSTILE}"
    real = table_34[(table_34.metric == "OFI") & (table_34.data == "Real")][column].iloc[0]
    assert real == pytest.approx(data["fairness"][column]["ofi"]["real"])


@pytest.mark.slow
def test_hostile_group_is_inert(result):
    items = report.display(result)
    page = to_html(items)
    assert "<b>b</b>" not in page and "<a " not in page and "<img" not in page
    assert HOSTILE in to_terminal(items)                         # a column of Table 3.4, as typed
    drawn = [json.dumps(item.figure().to_plotly_json()["data"], default=str) for item in walk(items)
             if isinstance(item, Figure)]
    assert drawn and not any(HOSTILE in d for d in drawn)
    assert any(plot_text(HOSTILE) in d or json.dumps(plot_text(HOSTILE))[1:-1] in d for d in drawn)
