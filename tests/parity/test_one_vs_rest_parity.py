"""Multiclass group parity: one-vs-rest rates, OFI and DI per class, GAP against the conditions concept, confusion
matrices and macro-F1 against scikit-learn, weights = repeated rows, planted disparities found, null not flagged."""
import numpy as np
import pytest
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

from fairviz.conditions.metrics import confusion, gap_of
from fairviz.core.counts import confusion_by_group
from fairviz.data.model import DataError
from fairviz.parity.di import di
from fairviz.parity.one_vs_rest import (MulticlassParityParams, accuracy_and_macro_f1, multiclass_parity,
                                        one_vs_rest)
from fairviz.parity.ofi import ofi, ofi_test

CLASSES = ("x", "y", "z", "w")
NAMES = ("a", "b", "c")
FAST = MulticlassParityParams(resamples=200, permutations=200)


def data(n=2000, seed=0, harm_b=0.0, n_classes=4):
    """Group b's class-0 rows are predicted right ``harm_b`` less often."""
    rng = np.random.default_rng(seed)
    codes = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    y = rng.integers(0, n_classes, n)
    right = 0.7 - harm_b * ((codes == 1) & (y == 0))
    predicted = np.where(rng.random(n) < right, y, rng.integers(0, n_classes, n))
    return y, predicted, codes


def test_confusion_accuracy_and_macro_f1_match_scikit_learn():
    y, predicted, codes = data()
    result = multiclass_parity(y, predicted, codes, NAMES, CLASSES, params=FAST)
    for g, name in enumerate(NAMES):
        m = codes == g
        group = result.group(name)
        np.testing.assert_array_equal(group.confusion, confusion_matrix(y[m], predicted[m], labels=range(4)))
        assert group.accuracy == pytest.approx(accuracy_score(y[m], predicted[m]), abs=1e-12)
        assert group.macro_f1 == pytest.approx(f1_score(y[m], predicted[m], average="macro"), abs=1e-12)
        assert group.intervals["macro_f1"].low < group.macro_f1 < group.intervals["macro_f1"].high


def test_macro_f1_of_a_class_only_predicted_matches_scikit_learn():
    y, predicted = np.array([0, 0, 1, 1, 1]), np.array([0, 2, 1, 1, 0])
    cm = confusion_matrix(y, predicted, labels=range(3))
    accuracy, macro = accuracy_and_macro_f1(cm[None])
    assert macro[0] == pytest.approx(f1_score(y, predicted, average="macro"), abs=1e-12)
    assert accuracy[0] == pytest.approx(0.6)


def test_one_vs_rest_rates_ofi_and_di_are_the_binary_functions():
    y, predicted, codes = data(seed=1)
    result = multiclass_parity(y, predicted, codes, NAMES, CLASSES, params=FAST)
    for c, class_name in enumerate(CLASSES):
        binary = confusion_by_group((y == c).astype(int), (predicted == c).astype(int), codes, 3)
        assert one_vs_rest(result.tensor, c) == binary
        for g in (1, 2):
            cell = result.cell(class_name, NAMES[g])
            assert cell.counts == binary[g]
            assert cell.rates["tpr"] == pytest.approx(binary[g].tpr(), abs=1e-12)
            assert cell.gaps["fpr_gap"] == pytest.approx(binary[g].fpr() - binary[0].fpr(), abs=1e-12)
            assert cell.gaps["ppr_gap"] == pytest.approx(binary[g].ppr() - binary[0].ppr(), abs=1e-12)
            assert cell.ofi == pytest.approx(ofi(binary[g], binary[0]), abs=1e-12)
            assert cell.ofi_p == pytest.approx(ofi_test(binary[g], binary[0]).p_value, abs=1e-12)
            assert cell.di == pytest.approx(di(binary[g], binary[0]), abs=1e-12)
        assert result.cell(class_name, "a").four_fifths == "reference"


@pytest.mark.parametrize("rate", ["tpr", "fpr", "ppr"])
def test_gap_matches_the_conditions_gap_of(rate):
    y, predicted, codes = data(seed=2, harm_b=0.3)
    result = multiclass_parity(y, predicted, codes, NAMES, CLASSES, params=FAST)
    peer = gap_of(confusion(y, predicted, codes, 4, 3), rate)
    assert result.gaps[rate].value == pytest.approx(peer.value, abs=1e-12)
    np.testing.assert_allclose(result.gaps[rate].per_class, peer.per_class, rtol=0, atol=1e-12)


def test_gap_with_two_groups_is_the_paper_rms_of_tpr_differences():
    y, predicted, codes = data(seed=3, harm_b=0.3)
    keep = codes < 2
    result = multiclass_parity(y[keep], predicted[keep], codes[keep], NAMES[:2], CLASSES, params=FAST)
    tpr = [[np.mean(predicted[keep & (codes == g) & (y == c)] == c) for g in (0, 1)] for c in range(4)]
    paper = np.sqrt(np.mean([(a - b) ** 2 for a, b in tpr]))          # Han et al. §4.4
    assert result.gaps["tpr"].value == pytest.approx(paper, abs=1e-12)


def test_weighted_entries_are_repeated_rows():
    y, predicted, codes = data(n=500, seed=4, harm_b=0.2)
    weights = np.random.default_rng(5).integers(0, 4, y.size)
    weighted = multiclass_parity(y, predicted, codes, NAMES, CLASSES, weights, params=FAST).to_dict()
    rows = multiclass_parity(*(np.repeat(a, weights) for a in (y, predicted, codes)), NAMES, CLASSES,
                             params=FAST).to_dict()
    assert weighted == rows                                    # counts only: identical, draws included


def test_planted_disparity_is_found():
    y, predicted, codes = data(n=4000, seed=6, harm_b=0.35)
    result = multiclass_parity(y, predicted, codes, NAMES, CLASSES, params=MulticlassParityParams(permutations=500))
    assert result.gaps["tpr"].p_value < 0.01
    cell = result.cell("x", "b")
    assert cell.gaps["tpr_gap"] < -0.2 and cell.ofi_p_adjusted < 0.01
    assert any(k == "gap_tpr" for k, _, _ in result.flagged())


def test_null_data_is_not_flagged():
    flagged = [bool(multiclass_parity(*data(n=800, seed=200 + s), NAMES, CLASSES,
                                      params=MulticlassParityParams(resamples=20, permutations=200, seed=s)).flagged())
               for s in range(40)]
    assert sum(flagged) <= 2                                   # ≥ 95% of seeds flag nothing


@pytest.mark.parametrize("case, message", [
    ("one group", "at least two groups"),
    ("empty class", "'w' has no rows in the label"),
    ("nan", "missing values"),
    ("unknown class", "not one of the 4 classes"),
    ("one class", "at least two classes"),
])
def test_bad_input_is_one_plain_sentence(case, message):
    y, predicted, codes = data(n=300)
    y = y.astype(float)
    classes = CLASSES
    if case == "one group":
        codes = np.zeros_like(codes)
    elif case == "empty class":
        y[y == 3] = 0
    elif case == "nan":
        y[2] = np.nan
    elif case == "unknown class":
        predicted = predicted.copy()
        predicted[0] = 7
    else:
        classes = ("x",)
    with pytest.raises(DataError) as caught:
        multiclass_parity(y, predicted, codes, NAMES, classes, params=FAST)
    assert len(caught.value.problems) == 1 and message in caught.value.problems[0]


# ----------------------------------------------------------------------------------------------- Predictions

def _multiclass_frame(n=1200, seed=12):
    import pandas as pd
    rng = np.random.default_rng(seed)
    classes = np.array(["cat", "dog", "bird"])
    group = rng.choice(["x", "y"], n, p=[0.6, 0.4])
    labels = rng.integers(0, 3, n)
    probabilities = rng.dirichlet([1, 1, 1], n)
    probabilities[np.arange(n), labels] += np.where(group == "y", 0.3, 1.5)        # y's rows recognised less
    probabilities /= probabilities.sum(1, keepdims=True)
    return pd.DataFrame({"label": classes[labels], "p_cat": probabilities[:, 0], "p_dog": probabilities[:, 1],
                         "p_bird": probabilities[:, 2], "group": group})


def test_analyse_multiclass_reads_real_predictions():
    from fairviz.data import build_predictions, guess_mapping
    from fairviz.parity import analyse_multiclass
    from fairviz.sample_size import analyse_class_match
    frame = _multiclass_frame()
    mapping = guess_mapping(frame)
    pred = build_predictions(frame, mapping)
    assert pred.task == "multiclass"
    result = analyse_multiclass(pred, "group", FAST)
    view = pred.groups("group")
    assert result.to_dict() == multiclass_parity(pred.y, pred.predicted, view.codes, view.names, pred.classes,
                                                 attribute="group", params=FAST).to_dict()
    predicted = frame[["p_cat", "p_dog", "p_bird"]].to_numpy().argmax(1)
    truth = frame.label.map({"cat": 0, "dog": 1, "bird": 2}).to_numpy()
    for name in ("x", "y"):
        m = (frame.group == name).to_numpy()
        assert result.group(name).macro_f1 == pytest.approx(f1_score(truth[m], predicted[m], average="macro"),
                                                            abs=1e-12)
    assert result.gaps["tpr"].p_value < 0.01 and result.group("y").accuracy < result.group("x").accuracy
    match = analyse_class_match(pred, "group")
    assert match.classes == pred.classes and match.significant()


def test_analyse_multiclass_refuses_regression_predictions():
    import pandas as pd
    from fairviz.data import ColumnMapping, build_predictions
    from fairviz.parity import analyse_multiclass
    from fairviz.sample_size import analyse_class_match
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"t": rng.normal(size=200), "p": rng.normal(size=200), "g": ["a", "b"] * 100})
    pred = build_predictions(frame, ColumnMapping("t", "p", ("g",), task="regression"))
    for analyse in (analyse_multiclass, analyse_class_match):
        with pytest.raises(DataError, match="predictions of several classes; these are regression predictions"):
            analyse(pred, "g")
