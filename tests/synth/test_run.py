"""A short seeded CPU run (the module fixture trains for ~2–9 s on 2 busy cores: marked slow) on a deliberately skewed table: the hard quota is exact, the label distribution moves
toward the uniform target, and the synthetic rows are neither trivially fake nor copies."""
import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from fairviz.data import DataError  # noqa: E402
from fairviz.synth import thesis  # noqa: E402
from fairviz.synth.data import load, prepare  # noqa: E402
from fairviz.synth.run import SynthParams, run  # noqa: E402

REALISM_BOUND = 0.95        # a 20-epoch GAN on 420 rows: a boosted classifier must not separate it perfectly


def skewed_table(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """80% group a, 15–25% positive labels; x1 depends on the group and the label on x1."""
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], n, p=[0.8, 0.2])
    x1 = rng.normal(0, 1, n) + (g == "b")
    y = (rng.random(n) < 0.15 + 0.1 * (x1 > 0.5)).astype(int)
    return pd.DataFrame({"id": np.arange(n), "g": g, "x1": x1, "x2": rng.choice(["u", "v", "w"], n),
                         "age": rng.integers(20, 70, n), "y": y})


@pytest.fixture(scope="module")
def result():
    table = prepare(skewed_table(), "y", ["g"])
    return run(table, SynthParams(group_target="a=0.3,b=0.7", rows=301, epochs=20, trials=2, batch=100))


@pytest.mark.slow
def test_hard_quota_is_exact_to_the_row(result):
    assert result.synthetic["g"].value_counts().to_dict() == {"a": 90, "b": 211}
    data = result.to_dict()
    assert data["rows_per_group"] == {"a": 90, "b": 211}
    group = data["distribution"]["group"]
    assert group["synthetic_shares"] == pytest.approx([90 / 301, 211 / 301])


@pytest.mark.slow
def test_label_distribution_moves_toward_the_target(result):
    label = result.to_dict()["distribution"]["label"]
    assert label["target"] == [0.5, 0.5]
    assert label["real_shares"][1] < 0.3                                   # the real data is skewed
    for key in ("ks", "js", "kl"):
        assert label[key]["synthetic"] < 0.5 * label[key]["real"], key      # at least halved
        assert label[key]["improvement"] == pytest.approx(
            (label[key]["real"] - label[key]["synthetic"]) / label[key]["real"])


@pytest.mark.slow
def test_realism_privacy_and_marginals(result):
    data = result.to_dict()
    assert 0.5 <= data["realism"]["auc"] < REALISM_BOUND
    assert data["privacy"]["exact_copies"] == 0
    assert data["privacy"]["holdout_exact_matches"] == 0          # x1 is continuous: no real row repeats either
    assert data["privacy"]["synthetic_median"] > 0
    marginals = {m["column"]: m for m in data["realism"]["marginals"]}
    assert set(marginals) == {"g", "x1", "x2", "age", "y"}                  # the id column was left out
    assert marginals["x1"]["measure"] == "KS statistic" and 0 <= marginals["x1"]["distance"] < 0.5
    assert marginals["y"]["measure"] == "total variation"


@pytest.mark.slow
def test_fairness_json_follows_table_34(result):
    fairness = result.to_dict()["fairness"]
    assert set(fairness) == {"g=a", "g=b"}
    for group in fairness.values():
        for metric in ("ofi", "dppl", "di", "dca"):
            cell = group[metric]
            assert len(cell["real_trials"]) == len(cell["synthetic_trials"]) == 2
            assert cell["improves"] == (None if None in (cell["real"], cell["synthetic"])
                                        else pytest.approx(thesis.improves(metric, cell["real"], cell["synthetic"])))
    # g=a vs the rest and g=b vs the rest are the same pair in both orders: OFI flips its sign
    assert fairness["g=a"]["ofi"]["synthetic"] == pytest.approx(-fairness["g=b"]["ofi"]["synthetic"])


def test_same_seed_same_result():
    table = prepare(skewed_table(200, 1), "y", ["g"])
    settings = SynthParams(epochs=2, trials=1, batch=50, rows=80)
    a, b = run(table, settings).to_dict(), run(table, settings).to_dict()
    a.pop("timing"), b.pop("timing")
    assert a == b


def test_presets_and_bad_input():
    adult = load("adult")
    assert adult.label == "income_gt_50k" and adult.group_columns == ("sex",) and adult.positive == 1
    assert "score" not in adult.features.columns and "id" not in adult.features.columns
    compas = load("compas", groups=["race", "sex"])
    assert compas.positive == 0 and compas.condition_name == "race × sex"
    assert "Male × African-American" not in set(compas.condition) and "African-American × Male" in set(compas.condition)
    frame = skewed_table(100)
    with pytest.raises(DataError, match="No label column 'nope'"):
        prepare(frame, "nope", ["g"])
    with pytest.raises(DataError, match="exactly two values"):
        prepare(frame, "age", ["g"])
    with pytest.raises(DataError, match="single group"):
        prepare(frame.assign(g="a"), "y", ["g"])
    with pytest.raises(DataError, match="At most two"):
        prepare(frame, "y", ["g", "x2", "age"])


@pytest.mark.slow
def test_figures_draw_the_result(result):
    from fairviz.synth import figures

    box = figures.boxplot_figure(result)
    real_ofi = next(t for t in box.data if t.name == "trained on real data" and t.xaxis == "x")
    assert list(real_ofi.y) == pytest.approx(result.fairness[0].real["ofi"] + result.fairness[1].real["ofi"])
    shares = figures.distribution_figure(result)
    synthetic_groups = next(t for t in shares.data if t.name == "synthetic" and t.xaxis == "x2")
    assert list(synthetic_groups.y) == pytest.approx([90 / 301, 211 / 301])
    losses = figures.loss_figure(result)
    assert {t.name for t in losses.data} == {"critic", "gradient penalty", "realism", "label diversity"}
    assert all(len(t.y) == 20 for t in losses.data)
