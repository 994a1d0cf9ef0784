"""Role guessing (issue 28): bands are groups in their natural order (the reference default stays the largest group),
ids are ids, several probability columns are candidate scores, and the score is never the label."""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairviz.data import ColumnMapping, build_predictions, guess_mapping
from fairviz.data.roles import guess_good_outcome, range_key
from fairviz.parity.analysis import analyse
from fairviz.parity.results import ParityParams


def _frame(n=600, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "customer_id": np.arange(n), "approved": rng.integers(0, 2, n),
        "model_a": rng.uniform(size=n), "model_b": rng.uniform(size=n), "model_c": rng.uniform(size=n),
        "age_band": rng.choice(["<18", "18-25", "26-40", "41-60", "75+"], n, p=[0.05, 0.1, 0.5, 0.25, 0.1]),
        "income": rng.normal(50, 10, n)})


def test_bands_ids_and_candidate_scores_are_guessed():
    guess = guess_mapping(_frame())
    assert guess.label == "approved" and guess.score == "model_a"
    assert guess.candidate_scores == ("model_b", "model_c")
    assert guess.groups == ("age_band",) and guess.row_id == "customer_id"
    # other models are offered as models, not features (issue 24: a feature also forces the row-by-row path)
    assert "customer_id" not in guess.features and guess.features == ("income",)
    assert "candidate_scores" not in guess.to_dict()


def test_ranges_have_a_natural_order():
    names = ["75+", "26-40", "<18", "18-25", "Less than 25", "Greater than 45", "25 - 45", "[41, 60)"]
    assert [range_key(n) for n in names] == [75, 26, 17.5, 18, 24.5, 45, 25, 41]
    assert range_key("north") is None and range_key("10-20k") is None


def test_band_groups_are_ordered_naturally_and_the_reference_is_still_the_largest():
    frame = _frame()
    pred = build_predictions(frame, ColumnMapping("approved", "model_a", ("age_band",)))
    view = pred.groups("age_band")
    assert view.names == ("<18", "18-25", "26-40", "41-60", "75+")
    sizes = dict(zip(view.names, view.sizes))
    assert max(sizes, key=sizes.get) == "26-40"
    from app_pages._ui import reference_choices
    assert reference_choices(pred, "age_band")[0] == "26-40"        # the default reference: the largest group
    nominal = build_predictions(frame.assign(region=np.where(frame.index % 3 == 0, "north", "south")),
                                ColumnMapping("approved", "model_a", ("region",)))
    assert nominal.groups("region").names == ("south", "north")     # nominal groups: largest first, as before


def test_pair_tables_keep_the_largest_groups_whatever_the_order():
    pred = build_predictions(_frame(), ColumnMapping("approved", "model_a", ("age_band",)))
    from dataclasses import replace
    audit = replace(analyse(pred, "age_band", ParityParams(threshold=0.5)), pair_groups=2)
    assert audit.pairs() == [("26-40", "41-60")]
    assert [(r["group_i"], r["group_j"]) for r in audit.pair_table()] == [("26-40", "41-60")]


def test_the_good_outcome_is_guessed_from_the_labels_name():
    assert guess_good_outcome("approved", ["no", "yes"], "yes") == "yes"
    assert guess_good_outcome("two_year_recid", [0, 1], 1) == 0
    assert guess_good_outcome("default_next_month", [0, 1], 1) == 0
