"""Mixed tabular encoding: the round trip keeps categories exactly and continuous values within tolerance."""
import numpy as np
import pandas as pd
import pytest

from fairviz.synth.encoding import CategoricalColumn, ContinuousColumn, fit_encoder


@pytest.fixture
def mixed() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 1500
    bimodal = np.where(rng.random(n) < 0.4, rng.normal(-5, 0.5, n), rng.normal(10, 2.0, n))
    return pd.DataFrame({"income": bimodal, "age": rng.integers(18, 90, n), "sex": rng.choice(["F", "M"], n),
                         "grade": rng.integers(1, 4, n), "ok": rng.choice([True, False], n)})


def test_round_trip(mixed):
    enc = fit_encoder(mixed, seed=0)
    kinds = {c.name: type(c) for c in enc.columns}
    assert kinds == {"income": ContinuousColumn, "age": ContinuousColumn, "sex": CategoricalColumn,
                     "grade": CategoricalColumn, "ok": CategoricalColumn}
    matrix = enc.encode(mixed)
    assert matrix.shape == (len(mixed), enc.width)
    back = enc.decode(matrix)
    for name in ("sex", "grade", "ok"):
        assert back[name].tolist() == mixed[name].tolist()          # categorical: exact
    assert back["age"].tolist() == mixed["age"].tolist()              # integers round back exactly
    assert np.abs(back["income"] - mixed["income"]).max() < 1e-4 * mixed["income"].std()
    # the two modes of the bimodal column are found: the mixture keeps a mode near each hump
    means = enc.column("income").means
    assert np.min(np.abs(means + 5)) < 1.0 and np.min(np.abs(means - 10)) < 2.0


def test_blocks_are_one_hot_and_softmax_decodes_by_argmax(mixed):
    enc = fit_encoder(mixed, seed=0)
    matrix = enc.encode(mixed.head(50))
    for span in enc.spans:
        if span.kind != "scalar":
            assert np.all(matrix[:, span.start:span.stop].sum(axis=1) == 1)
    soft = matrix.copy()
    span = enc.category_span("sex")
    soft[:, span.start:span.stop] = 0.3 + 0.4 * soft[:, span.start:span.stop]    # softmax-like, same argmax
    assert enc.decode(soft)["sex"].tolist() == mixed["sex"].head(50).tolist()


def test_zero_inflated_column_keeps_its_zeros_exactly():
    rng = np.random.default_rng(1)
    gain = np.where(rng.random(2000) < 0.9, 0.0, rng.lognormal(8, 1, 2000))
    frame = pd.DataFrame({"gain": gain, "y": rng.integers(0, 2, 2000)})
    enc = fit_encoder(frame, seed=0)
    col = enc.column("gain")
    assert col.point.sum() >= 1 and np.any(np.abs(col.means[col.point]) < 1e-6)      # a point mass at 0
    matrix = enc.encode(frame)
    scalar, modes = enc.spans_of("gain")
    matrix[:, scalar.start] += rng.normal(0, 0.05, len(frame))          # a generator's imprecise α
    back = enc.decode(matrix)["gain"].to_numpy()
    assert np.all(back[gain == 0] == 0)                                    # the zeros stay exact zeros
    assert np.mean(back[gain > 0] > 0) > 0.98
    assert np.median(np.abs(back - gain)[gain > 0]) < 0.2 * gain.std()
    assert np.array_equal(enc.decode(enc.encode(frame))["gain"].to_numpy() == 0, gain == 0)   # clean round trip


def test_unseen_category_is_named(mixed):
    enc = fit_encoder(mixed, seed=0)
    bad = mixed.head(3).copy()
    bad["sex"] = "X"
    with pytest.raises(ValueError, match="'sex'.*'X'"):
        enc.encode(bad)
