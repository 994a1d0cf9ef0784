"""Role guessing (fairviz.data.roles): one vocabulary and one set of content tests for the four column-mapping forms."""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairviz.data import (
    guess_forecast_roles,
    guess_mapping,
    guess_positive_label,
    guess_text_roles,
    guess_training_roles,
    quantile_level,
)
from fairviz.data.roles import first_named, named


def test_names_match_whatever_the_case_in_the_files_or_the_roles_order():
    columns = ["Score", "GENDER", "y", "label", "race"]
    assert named(columns, "group") == ["GENDER", "race"]                 # every group column, in the file's order
    assert first_named(columns, "label") == "label"                      # the most telling name first
    assert first_named(columns, "split") is None


def test_predictions_fall_back_on_content_when_names_say_nothing():
    frame = pd.DataFrame({"outcome_flag": [0, 1] * 4, "model_out": [.1, .7, .2, .9, .3, .6, .4, .8],
                          "city": list("abababab"), "income": np.arange(8.0)})
    guess = guess_mapping(frame)
    assert (guess.label, guess.score, guess.groups) == ("outcome_flag", "model_out", ("city",))
    assert guess.features == ("income",) and guess.text is None and guess.row_id is None


def test_text_roles_take_the_wordiest_column_and_a_twin_id():
    frame = pd.DataFrame({"utterance": ["a long sentence here", "another long one here", "and a third"] * 2,
                          "tag": ["x", "y", "w"] * 2, "stars": [0, 1] * 3, "gender": list("mfmfmf"),
                          "twin_id": [0, 0, 1, 1, 2, 2]})
    assert guess_text_roles(frame) == {"text": "utterance", "label": "stars", "group": "gender", "pair": "twin_id"}
    named_text = frame.rename(columns={"tag": "Review"})
    assert guess_text_roles(named_text)["text"] == "Review"              # a text name beats the word count


def test_text_roles_fall_back_on_a_column_with_few_values_for_the_group():
    frame = pd.DataFrame({"text": ["one two", "three four"] * 3, "y": [0, 1] * 3, "cohort": [1, 2, 3] * 2})
    assert guess_text_roles(frame) == {"text": "text", "label": "y", "group": "cohort", "pair": None}


def test_training_roles_come_from_names_alone():
    assert guess_training_roles(["f1", "Target", "z", "split"]) == {"label": "Target", "group": "z", "split": "split"}
    assert guess_training_roles(["f1", "label", "sex", "z"])["group"] == "sex"          # a group name beats z
    assert guess_training_roles(["f1", "f2"]) == {"label": None, "group": None, "split": None}


def test_forecast_roles_wide_and_long():
    wide = pd.DataFrame({"id": ["s1", "s2"] * 2, "step": [1, 1, 2, 2], "truth": [1.0, 2, 3, 4], "q0.1": [0.5] * 4,
                         "q0.9": [2.0] * 4, "region": ["n", "s"] * 2, "model": ["m"] * 4})
    roles = guess_forecast_roles(wide)
    assert (roles["series"], roles["step"], roles["truth"], roles["model"]) == ("id", "step", "truth", "model")
    assert roles["groups"] == ("region",) and roles["level"] is None and roles["value"] is None
    long = pd.DataFrame({"series": ["s1", "s2"] * 2, "h": [1, 1, 2, 2], "y": [1.0, 2, 3, 4],
                         "quantile": [0.1, 0.9] * 2, "value": [0.5, 2.0] * 2, "sex": ["f", "m", "m", "f"]})
    roles = guess_forecast_roles(long)
    assert (roles["series"], roles["step"], roles["truth"], roles["level"], roles["value"]) == \
        ("series", "h", "y", "quantile", "value")
    assert roles["groups"] == ("sex",) and roles["point"] is None
    assert guess_forecast_roles(pd.DataFrame({"a": [1.0]}))["series"] == ""


def test_quantile_levels_from_column_names():
    assert [quantile_level(c) for c in ("q0.05", "q_0.9", "0.975", "p95", "q05")] == [0.05, 0.9, 0.975, 0.95, 0.05]
    assert quantile_level("truth") is None and quantile_level("q1.5") is None


def test_positive_label_reads_words_then_takes_the_larger():
    assert guess_positive_label(["no", "yes"]) == "yes"
    assert guess_positive_label([False, True]) is True
    assert guess_positive_label([2, 7]) == 7
