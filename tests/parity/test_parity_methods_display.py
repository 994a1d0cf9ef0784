"""The display lists of regression and multiclass parity: the headline names what was planted (never a group under
100 rows), units are stated, tables hold the JSON rows, every figure builds, the HTML and terminal renderers draw
them."""
import numpy as np

from fairviz.core.display import Figure, Group, Text, tables, walk
from fairviz.parity.one_vs_rest import MulticlassParityParams, multiclass_parity
from fairviz.parity.error_parity import RegressionParityParams, regression_parity
from fairviz.parity.display import multiclass_display, regression_display
from fairviz.report.render import to_html, to_terminal
from fairviz.sample_size.class_match import match_by_class
from fairviz.sample_size.display import class_match_display
from fairviz.sample_size.results import MatchParams

NAMES = ("women", "men", "**other**")


def regression(bias=0.5, small=False, seed=0):
    rng = np.random.default_rng(seed)
    n = 3000
    codes = rng.choice(3, n, p=[0.5, 0.3, 0.2]) if not small else np.r_[np.zeros(2940, int), np.ones(30, int),
                                                                        np.full(30, 2)]
    y = rng.normal(100, 15, n)
    predicted = y + rng.normal(0, 5, n) + bias * 10 * (codes == 1)
    return regression_parity(y, predicted, codes, NAMES, params=RegressionParityParams(
        resamples=200, permutations=300, units="mg/dL"))


def _texts(items):
    return [item.plain() for item in walk(items) if isinstance(item, Text)]


def test_regression_headline_names_the_planted_gap_with_units():
    result = regression()
    items = regression_display(result, key=("test",))
    head = items[0]
    assert head.level == "finding" and "men" in head.plain() and "over-predicted" in head.plain()
    assert "mg/dL" in head.plain() and "95% CI" in head.plain()
    shown = tables(items)
    assert len(shown["regression_groups"].frame) == 3 and len(shown["regression_pairs"].frame) == 3
    assert shown["regression_pairs"].records()[0]["bias_gap"] == result.pairs[0].values["bias_gap"]
    for item in walk(items):
        if isinstance(item, Figure):
            assert item.figure().data
    html = to_html(items)
    assert "**other**" in html and "<b>other</b>" not in html and to_terminal(items)


def test_regression_headline_on_null_data_says_nothing_is_beyond_noise():
    head = regression_display(regression(bias=0.0, seed=3))[0]
    assert head.plain().startswith("No gap between groups")


def test_a_small_group_never_headlines():
    result = regression(bias=3.0, small=True)
    assert result.pair("men", "women").p_values["bias_gap"] < 0.01        # the gap is real…
    head = regression_display(result)[0]
    assert "men" not in head.plain().replace("women", "")                  # …but 30 rows never headline
    assert any("fewer than 100" in t for t in _texts(regression_display(result)))


def multiclass(harm=0.3, seed=0):
    rng = np.random.default_rng(seed)
    n = 3000
    codes = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    y = rng.integers(0, 3, n)
    predicted = np.where(rng.random(n) < 0.75 - harm * ((codes == 1) & (y == 2)), y, rng.integers(0, 3, n))
    classes = ("low", "mid", "high")
    result = multiclass_parity(y, predicted, codes, NAMES, classes,
                               params=MulticlassParityParams(resamples=200, permutations=300))
    match = match_by_class(y, predicted, codes, NAMES, classes, params=MatchParams(reference="population",
                                                                                   draws=1000))
    return result, match


def test_multiclass_display_reads_gap_the_worst_cell_and_match():
    result, match = multiclass()
    items = multiclass_display(result, class_match_display(match, ("test",)), key=("test",))
    assert items[0].level == "finding" and "beyond sampling noise" in items[0].plain()
    assert "high" in items[0].plain()                                      # the class that contributes most
    texts = _texts(items)
    assert any(t.startswith("Rows of class high in men") for t in texts)
    assert any(t.startswith("MATCH per class:") and "men" in t for t in texts)
    shown = tables(items)
    assert len(shown["class_parity"].frame) == 9 and len(shown["class_performance"].frame) == 3
    assert len(shown["class_match"].frame) == len(match.results())
    figures = [item for item in walk(items) if isinstance(item, Figure)]
    assert len(figures) == 3 + 3 + 1                                       # rates ×3, confusion ×3, MATCH
    for item in figures:
        assert item.figure().data
    assert {g.key for g in items if isinstance(g, Group)} >= {"class_parity", "class_confusion", "class_match"}
    assert "<b>other</b>" not in to_html(items)


def test_results_are_strict_json():
    import json
    result, match = multiclass()
    for value in (regression(small=True), result, match):
        assert json.loads(json.dumps(value.to_dict(), allow_nan=False))
