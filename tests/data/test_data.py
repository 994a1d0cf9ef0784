"""The one data model: reading, guessing column roles, and one clear message per validation problem."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from fairviz.data import ColumnMapping, DataError, build_predictions, guess_mapping, read_table

MAPPING = ColumnMapping("y", "score", ("group",))


def _csv(text: str) -> pd.DataFrame:
    frame, _ = read_table(text.encode(), "t.csv")
    return frame


def _problems(frame, mapping=MAPPING) -> list[str]:
    with pytest.raises(DataError) as info:
        build_predictions(frame, mapping)
    return info.value.problems


def test_valid_file_round_trip():
    frame = _csv("y,score,group\n1,0.9,a\n0,0.2,b\n1,0.7,b\n0,0.1,a\n")
    pred = build_predictions(frame, MAPPING)
    assert pred.n == 4 and pred.y.tolist() == [1, 0, 1, 0] and pred.score.tolist() == [0.9, 0.2, 0.7, 0.1]
    assert pred.groups().names == ("a", "b") and pred.groups().codes.tolist() == [0, 1, 1, 0]
    assert pred.notes == ()


def test_fingerprint_changes_with_bytes_and_mapping():
    raw = b"y,score,group,g2\n1,0.9,a,u\n0,0.2,b,v\n1,0.7,b,u\n0,0.1,a,v\n"
    frame, digest = read_table(raw, "x.csv")
    one = build_predictions(frame, MAPPING, file_fingerprint=digest)
    two = build_predictions(frame, ColumnMapping("y", "score", ("g2",)), file_fingerprint=digest)
    frame3, digest3 = read_table(raw.replace(b"0.9", b"0.8"), "x.csv")
    three = build_predictions(frame3, MAPPING, file_fingerprint=digest3)
    assert len({one.fingerprint, two.fingerprint, three.fingerprint}) == 3


def test_semicolon_csv_and_parquet_are_read():
    frame = _csv("y;score;group\n1;0.9;a\n0;0.2;b\n")
    assert list(frame.columns) == ["y", "score", "group"]
    buffer = io.BytesIO()
    pd.DataFrame({"y": [1, 0], "score": [0.3, 0.6], "group": ["a", "b"]}).to_parquet(buffer)
    parquet, _ = read_table(buffer.getvalue(), "p.parquet")
    assert parquet.shape == (2, 3)


@pytest.mark.parametrize("raw, fragment", [
    (b"", "is empty"),
    (b"   \n", "is empty"),
    (b"y,score,group\n", "no data rows"),
    (b"\x00\x01\x02binary", "binary file"),
    (b"PAR1garbage", "could not be read as Parquet"),
])
def test_unreadable_files(raw, fragment):
    with pytest.raises(DataError) as info:
        read_table(raw, "bad.csv")
    assert fragment in str(info.value)


def test_missing_column_is_named():
    problems = _problems(_csv("label,prob,grp\n1,0.9,a\n0,0.1,b\n"))
    assert any("label column 'y' is not in the file" in p for p in problems)
    assert any("columns: label, prob, grp" in p for p in problems)


def test_text_in_score_is_reported_with_examples():
    problems = _problems(_csv("y,score,group\n1,high,a\n0,0.2,b\n1,0.9,a\n"))
    assert problems == ["The score column 'score' has 1 non-numeric values (e.g. 'high'); scores must be numbers in [0, 1]."]


def test_scores_outside_unit_interval_and_infinite():
    problems = _problems(_csv("y,score,group\n1,2.5,a\n0,-1.0,b\n1,0.9,a\n0,inf,b\n"))
    assert any("2 values outside [0, 1]" in p and "logits" in p for p in problems)
    assert any("1 infinite values" in p for p in problems)


def test_nan_rows_are_dropped_and_counted():
    pred = build_predictions(_csv("y,score,group\n1,0.9,a\n0,,b\n1,0.7,b\n0,0.1,a\n,0.3,a\n1,0.4,\n0,0.6,b\n"),
                             MAPPING)
    assert pred.n == 4 and pred.score.tolist() == [0.9, 0.7, 0.1, 0.6]
    assert pred.notes == ("3 of 7 rows dropped for a missing label, score or group value.",)


def test_labels_not_binary():
    problems = _problems(_csv("y,score,group\n0,0.9,a\n1,0.2,b\n2,0.7,b\n"))
    assert any("3 distinct values" in p and "must be binary" in p for p in problems)
    problems = _problems(_csv("y,score,group\n0,0.9,a\n2,0.2,b\n2,0.7,b\n0,0.5,a\n"))
    assert any("not 0/1" in p and "positive" in p for p in problems)


def test_two_valued_labels_with_a_chosen_positive_value():
    frame = _csv("y,score,group\nyes,0.9,a\nno,0.2,b\nyes,0.7,b\nno,0.1,a\n")
    assert build_predictions(frame, MAPPING).y.tolist() == [1, 0, 1, 0]          # 'yes' guessed positive
    frame = _csv("y,score,group\ngood,0.9,a\nbad,0.2,b\ngood,0.7,b\nbad,0.1,a\n")
    assert any("not 0/1" in p for p in _problems(frame))                        # no safe guess: ask
    chosen = ColumnMapping("y", "score", ("group",), positive_label="bad")
    assert build_predictions(frame, chosen).y.tolist() == [0, 1, 0, 1]
    booleans = pd.DataFrame({"y": [True, False, True, False], "score": [.9, .2, .7, .1], "group": list("abba")})
    assert build_predictions(booleans, MAPPING).y.tolist() == [1, 0, 1, 0]
    wrong = ColumnMapping("y", "score", ("group",), positive_label="maybe")
    assert any("does not occur" in p for p in _problems(frame, wrong))


def test_single_group_is_rejected():
    problems = _problems(_csv("y,score,group\n1,0.9,a\n0,0.2,a\n"))
    assert problems == ["The group column 'group' has a single value ('a'): fairness compares groups, so it needs "
                        "at least two."]


def test_group_of_one_row_is_dropped_with_a_note():
    pred = build_predictions(_csv("y,score,group\n1,0.9,a\n0,0.2,a\n1,0.7,b\n0,0.1,b\n1,0.5,c\n"), MAPPING)
    assert pred.groups().names == ("a", "b") and pred.n == 4
    assert any("'c' (n = 1)" in note for note in pred.notes)


def test_mapping_mistakes():
    frame = _csv("y,score,group\n1,0.9,a\n0,0.2,b\n")
    assert any("same column" in p for p in _problems(frame, ColumnMapping("y", "y", ("group",))))
    assert any("No group column" in p for p in _problems(frame, ColumnMapping("y", "score", ())))


def test_intersection_attribute():
    frame = pd.DataFrame({"y": [1, 0, 1, 0, 1, 0, 1, 0], "score": np.linspace(.1, .9, 8),
                          "race": list("aabbaabb"), "sex": list("mfmfmfmf")})
    pred = build_predictions(frame, ColumnMapping("y", "score", ("race", "sex"), intersect=True))
    assert pred.attribute_names == ["race", "sex", "race × sex"]
    assert set(pred.groups("race × sex").names) == {"a × m", "a × f", "b × m", "b × f"}


def test_guess_mapping_from_names_and_content():
    frame = pd.DataFrame({"id": range(6), "label": [0, 1] * 3, "p_hat": [.1, .8, .3, .6, .2, .9],
                          "gender": list("mfmfmf"), "age": [30, 40, 50, 20, 35, 45], "text": list("uvwxyz")})
    guess = guess_mapping(frame)
    assert (guess.label, guess.score, guess.groups, guess.text, guess.row_id) == \
        ("label", "p_hat", ("gender",), "text", "id")
    assert guess.features == ("age",)


def test_shuffled_groups_keep_sizes_and_change_fingerprint(two_group_frame):
    pred = build_predictions(two_group_frame, MAPPING)
    shuffled = pred.with_shuffled_groups(3)
    assert np.array_equal(np.bincount(shuffled.groups().codes), np.bincount(pred.groups().codes))
    assert not np.array_equal(shuffled.groups().codes, pred.groups().codes)
    assert shuffled.fingerprint != pred.fingerprint


def test_every_grouping_offers_intersections_built_once():
    """The data model resolves 'a × b' for every concept; the view is built once and has the joint group sizes."""
    from fairviz.data.samples import load_sample
    pred = load_sample("compas")
    assert pred.choices() == ["race", "sex", "race × sex"]
    view = pred.groups("race × sex")
    assert view is pred.groups("race × sex")
    sizes = pred.frame.groupby(["race", "sex"]).size()
    assert dict(zip(view.names, np.bincount(view.codes))) == {f"{r} × {s}": n for (r, s), n in sizes.items()}
    with pytest.raises(KeyError):
        pred.groups("race × shoe size")
