"""The data overview (Home's summary): a typed summary of the loaded data and its display list. The engine's counts
per cell give the same overview as the rows they count."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fairviz.core.display import Metrics, Table, Text, tables
from fairviz.data.engine import Engine, resolve
from fairviz.data.overview import display, overview, score_shares
from fairviz.data.samples import load_sample, sample_path, samples


def test_overview_counts_each_group():
    pred = load_sample("compas")
    summary = overview(pred)
    assert summary.rows == 7214 and summary.source == pred.source
    assert summary.positive_rate == pytest.approx(pred.y.mean())
    race = next(a for a in summary.attributes if a.attribute == "race")
    aa = next(g for g in race.groups if g.name == "African-American")
    mask = pred.groups("race").codes == pred.groups("race").names.index("African-American")
    assert aa.n == 3696 and aa.share == pytest.approx(3696 / 7214)
    assert aa.base_rate == pytest.approx(pred.y[mask].mean()) and aa.mean_score == pytest.approx(pred.score[mask].mean())
    assert sum(g.n for g in race.groups) == summary.rows


def test_weighted_cells_give_the_rows_overview():
    sample = samples()["compas"]
    reduced = Engine().reduce(resolve(sample_path("compas")), sample.mapping).predictions()
    rows, cells = overview(load_sample("compas")), overview(reduced)
    assert cells.rows == rows.rows
    assert cells.positive_rate == pytest.approx(rows.positive_rate) and cells.mean_score == pytest.approx(rows.mean_score)
    for a, b in zip(rows.attributes, cells.attributes):
        assert a.frame().set_index("group").sort_index().to_numpy() == pytest.approx(
            b.frame().set_index("group").sort_index().to_numpy())


def test_display_list_reads_in_order():
    items = display(overview(load_sample("compas")))
    assert isinstance(items[0], Text) and items[0].level == "heading"
    metrics = next(i for i in items if isinstance(i, Metrics))
    assert [m.label.plain() for m in metrics.items] == ["Rows", "Positive rate (label)", "Mean score",
                                                        "Group attributes"]
    shown = tables(items)
    assert list(shown) == [f"groups:{a}" for a in load_sample("compas").attribute_names]
    table = shown["groups:race"]
    assert isinstance(table, Table) and list(table.frame.columns) == ["group", "n", "share", "base rate", "mean score"]
    assert table.formatted().loc[0, "share"] == f"{table.frame.loc[0, 'share']:.3f}"


def test_notes_become_caveats():
    items = display(replace(overview(load_sample("compas")), notes=("dropped 3 rows",)))
    assert [i.plain() for i in items if isinstance(i, Text) and i.level == "caveat"] == ["dropped 3 rows"]


def test_score_shares_sum_to_one_per_group():
    pred = load_sample("compas")
    bins = np.linspace(0, 1, 21)
    names, shares = score_shares(pred, "race", bins, 3)
    assert names[0] == "African-American" and len(names) == 3
    for share in shares:
        assert share.sum() == pytest.approx(1.0)


def test_a_regressions_overview_reads_its_values_in_plain_numbers():
    """Mean target and prediction of any size read as plain numbers (a price of 234,567.89, not 2.346e+05)."""
    import numpy as np
    import pandas as pd

    from fairviz.data import ColumnMapping, build_predictions
    from fairviz.data.overview import display, overview
    rng = np.random.default_rng(0)
    price = rng.normal(234_567.89, 1_000, 400)
    frame = pd.DataFrame({"price": price, "y_pred": price + rng.normal(0, 100, 400), "g": rng.choice(["a", "b"], 400)})
    summary = overview(build_predictions(frame, ColumnMapping("price", "y_pred", ("g",), task="regression")))
    values = [m.value for m in display(summary)[1 + len(summary.notes)].items]
    assert values[1] == f"{price.mean():,.2f}" and "e+" not in " ".join(values)
