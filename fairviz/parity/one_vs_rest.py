"""Group parity of a multiclass model: per class one-vs-rest, and over all classes.

- **Per class c, one vs rest**: each group's TPR P(ŷ = c | y = c), FPR P(ŷ = c | y ≠ c) and selection rate
  P(ŷ = c), their gaps against the reference group (the largest by default; Wald CIs), and the binary audit's OFI
  (with its noise test) and DI (with the four-fifths rule) on the one-vs-rest counts, being predicted c read as the
  outcome (which class is a benefit is the user's call: the sign says who is predicted c more than warranted);
  Benjamini–Hochberg over classes × groups;
- **GAP** of *Systematic Evaluation of Predictive Fairness* (Han et al.): per class Σ_g |TPR_{c,g} − TPR_c|, root
  mean square over classes, with a permutation p-value (group labels permuted); the same for FPR and selection;
- **per group**: the C × C confusion matrix, accuracy and macro-F1 with bootstrap CIs.

All from one tensor T[y, group, ŷ] of counts, so an entry of weight w counts as w rows exactly.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import stats as sps

from fairviz.core import stats
from fairviz.core.counts import ConfusionCounts
from fairviz.core.focus import MIN_GROUP_SIZE
from fairviz.data.model import DataError
from fairviz.data.tasks import spec_of
from fairviz.parity.di import di, four_fifths
from fairviz.parity.ofi import classify, ofi, ofi_test
from fairviz.parity.entry_stats import class_tensor, entry_weights, rate_cells, rms_gap, split_among_groups

RATES = ("tpr", "fpr", "ppr")
MAX_CLASSES = 200               # one-vs-rest tables of more classes than this are not readable
METHOD = "one_vs_rest"          # the JSON's name of this method


@dataclass(frozen=True)
class MulticlassParityParams:
    reference: str | None = None    # the reference group (None: the largest)
    resamples: int = 1000           # bootstrap resamples (accuracy, macro-F1)
    permutations: int = 1000        # label permutations for the GAP tests
    level: float = 0.95
    alpha: float = 0.05
    seed: int = 0
    min_group_size: int = MIN_GROUP_SIZE   # the Summary's size floor: a smaller group never headlines


@dataclass(frozen=True)
class ClassGroup:
    """One class c and one group g, one vs rest, against the reference group."""
    class_name: str
    group: str
    counts: ConfusionCounts         # positive = class c (true), predicted c (decision)
    rates: dict                     # tpr, fpr, ppr (None: undefined)
    gaps: dict                      # tpr_gap, fpr_gap, ppr_gap: g − reference (None for the reference or undefined)
    gap_intervals: dict             # Wald CIs of the gaps
    ofi: float | None               # OFI(g, reference) on the one-vs-rest counts
    ofi_p: float | None
    di: float | None                # DI(g, reference)
    four_fifths: str
    reading: str                    # the binary audit's grid: algorithmic, possible, small, systemic, none
    ofi_p_adjusted: float | None = None

    def to_dict(self) -> dict:
        return {"class": self.class_name, "group": self.group, "n": self.counts.n, **self.counts.to_dict(),
                **self.rates, **self.gaps, **{f"{k}_ci": v for k, v in self.gap_intervals.items()},
                "ofi": self.ofi, "ofi_p_value": self.ofi_p, "ofi_p_adjusted": self.ofi_p_adjusted, "di": self.di,
                "four_fifths": self.four_fifths, "parity_reading": self.reading}


@dataclass(frozen=True)
class RateGap:
    rate: str
    value: float
    per_class: np.ndarray           # NaN where some group cannot define the rate
    cells: np.ndarray               # C × G rates
    p_value: float

    def to_dict(self, classes) -> dict:
        return {"rate": self.rate, "gap": _finite(self.value),
                "per_class": {c: _finite(v) for c, v in zip(classes, self.per_class)},
                "excluded_classes": [c for c, v in zip(classes, self.per_class) if not np.isfinite(v)],
                "p_value": _finite(self.p_value)}


@dataclass(frozen=True)
class GroupPerformance:
    name: str
    n: int
    confusion: np.ndarray           # C × C: rows true class, columns predicted
    accuracy: float
    macro_f1: float
    intervals: dict = field(default_factory=dict)   # accuracy, macro_f1 → Interval

    def to_dict(self) -> dict:
        return {"n": self.n, "confusion": self.confusion.tolist(), "accuracy": self.accuracy,
                "macro_f1": _finite(self.macro_f1), **{f"{k}_ci": v.to_list() for k, v in self.intervals.items()}}


@dataclass(frozen=True)
class MulticlassParity:
    attribute: str
    params: MulticlassParityParams
    classes: tuple[str, ...]
    groups: tuple[GroupPerformance, ...]
    reference: str
    per_class: tuple[ClassGroup, ...]
    gaps: dict                      # rate → RateGap
    tensor: np.ndarray = field(repr=False)   # T[y, group, ŷ] over the groups with rows (in ``groups`` order)
    warnings: tuple[str, ...] = ()

    def cell(self, class_name: str, group: str) -> ClassGroup:
        return next(c for c in self.per_class if (c.class_name, c.group) == (class_name, group))

    def group(self, name: str) -> GroupPerformance:
        return next(g for g in self.groups if g.name == name)

    def flagged(self) -> list[tuple[str, object, float]]:
        """(test, result, family-adjusted p) beyond noise: the GAP of each rate and the OFI tests (BH over classes ×
        groups), Bonferroni over these four families. Groups under the size floor never headline."""
        m, alpha = len(RATES) + 1, self.params.alpha
        sizes = {g.name: g.n for g in self.groups}
        out = [(f"gap_{k}", v, min(1.0, m * v.p_value)) for k, v in self.gaps.items()
               if np.isfinite(v.p_value) and m * v.p_value < alpha]
        out += [("ofi", c, min(1.0, m * c.ofi_p_adjusted)) for c in self.per_class
                if c.ofi_p_adjusted is not None and m * c.ofi_p_adjusted < alpha
                and min(sizes[c.group], sizes[self.reference]) >= self.params.min_group_size]
        return out

    def to_dict(self) -> dict:
        """The parity section's JSON (its envelope: ``method``, ``attribute``, ``reference``, ``groups`` by name,
        ``settings``, ``warnings``; no ``pairs``: each class × group is compared with the reference, ``per_class``)
        with this method's own keys."""
        return {"method": METHOD, "attribute": self.attribute, "reference": self.reference,
                "groups": {g.name: g.to_dict() for g in self.groups}, "settings": asdict(self.params),
                "warnings": list(self.warnings), "classes": list(self.classes),
                "per_class": [c.to_dict() for c in self.per_class],
                "gaps": {k: v.to_dict(self.classes) for k, v in self.gaps.items()}}


# ----------------------------------------------------------------------------------------------- checks

def checked_classes(y, predicted, codes, names, classes, weights) -> tuple[np.ndarray, ...]:
    """Integer class codes 0…C−1 for label and prediction, group codes, int weights (weight-0 entries dropped);
    one plain sentence per problem."""
    n_classes = len(classes)
    if n_classes < 2:
        raise DataError("A multiclass audit needs at least two classes.")
    if n_classes > MAX_CLASSES:
        raise DataError(f"The label has {n_classes:,} classes; at most {MAX_CLASSES} can be audited class by class.")
    y, predicted = _class_codes(y, "label", n_classes), _class_codes(predicted, "predicted class", n_classes)
    codes = np.asarray(codes)
    if not (y.shape == predicted.shape == codes.shape) or y.ndim != 1:
        raise DataError("The label, the predicted class and the groups must have one value per row each.")
    w = entry_weights(weights, y.size)
    keep = w > 0
    y, predicted, codes, w = y[keep], predicted[keep], codes[keep].astype(np.int64), w[keep]
    if codes.size and (codes.min() < 0 or codes.max() >= len(names)):
        raise DataError("A group code has no group name.")
    if np.unique(codes).size < 2:
        raise DataError("Group parity needs at least two groups with rows; this attribute has "
                        f"{np.unique(codes).size}.")
    empty = [classes[c] for c in np.flatnonzero(np.bincount(y, weights=w, minlength=n_classes) == 0)]
    if empty:
        raise DataError(f"The class{'es' if len(empty) > 1 else ''} {', '.join(map(repr, empty))} "
                        f"{'have' if len(empty) > 1 else 'has'} no rows in the label, so its rates are undefined; "
                        "drop it from the classes or add rows of it.")
    return y, predicted, codes, w


def _class_codes(values, what: str, n_classes: int) -> np.ndarray:
    try:
        out = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"The {what} has values that are not class codes.") from None
    if not np.all(np.isfinite(out)):
        raise DataError(f"The {what} has {int(np.count_nonzero(~np.isfinite(out))):,} missing values; drop them "
                        "first.")
    if np.any(out != np.round(out)) or (out.size and (out.min() < 0 or out.max() >= n_classes)):
        raise DataError(f"The {what} has values that are not one of the {n_classes} classes.")
    return out.astype(np.int64)


# ----------------------------------------------------------------------------------------------- analysis

def multiclass_parity(y, predicted, codes, names, classes, weights=None, attribute: str = "",
                      params: MulticlassParityParams = MulticlassParityParams()) -> MulticlassParity:
    classes = tuple(str(c) for c in classes)
    y, predicted, codes, w = checked_classes(y, predicted, codes, names, classes, weights)
    sizes = np.bincount(codes, weights=w, minlength=len(names)).round().astype(np.int64)
    present = sorted(int(g) for g in np.flatnonzero(sizes))
    if params.reference is not None and params.reference not in names:
        raise DataError(f"The reference group '{params.reference}' is not one of the groups.")
    ref = list(names).index(params.reference) if params.reference is not None else int(np.argmax(sizes))
    if sizes[ref] == 0:
        raise DataError(f"The reference group '{names[ref]}' has no rows.")
    local = np.searchsorted(np.array(present), codes)
    T = class_tensor(y, predicted, local, len(classes), len(present), w)
    group_names = tuple(names[g] for g in present)
    rng = np.random.default_rng(params.seed)
    groups = tuple(_performance(name, T[:, k, :], params, rng) for k, name in enumerate(group_names))
    per_class = _adjusted([cell for c in range(len(classes))
                           for cell in _class_cells(T, c, classes[c], group_names, present.index(ref), params)])
    gaps = _rate_gaps(T, params, rng)
    warnings = [f"Group {name} has {g.n} rows: its numbers are shown but never headline." for name, g in
                zip(group_names, groups) if g.n < params.min_group_size]
    return MulticlassParity(attribute, params, classes, groups, names[ref], tuple(per_class), gaps, T,
                            tuple(warnings))


def one_vs_rest(T: np.ndarray, c: int) -> list[ConfusionCounts]:
    """Each group's one-vs-rest counts for class c from T[y, group, ŷ]."""
    out = []
    for g in range(T.shape[1]):
        m = T[:, g, :]
        tp = int(m[c, c])
        fn, fp = int(m[c].sum()) - tp, int(m[:, c].sum()) - tp
        out.append(ConfusionCounts(tp=tp, fn=fn, fp=fp, tn=int(m.sum()) - tp - fn - fp))
    return out


def _class_cells(T, c, class_name, group_names, ref, params) -> list[ClassGroup]:
    counts = one_vs_rest(T, c)
    reference = counts[ref]
    cells = []
    for g, (name, cm) in enumerate(zip(group_names, counts)):
        rates = {"tpr": cm.tpr(), "fpr": cm.fpr(), "ppr": cm.ppr()}
        if g == ref:
            cells.append(ClassGroup(class_name, name, cm, rates, {f"{k}_gap": None for k in RATES},
                                    {f"{k}_gap": None for k in RATES}, None, None, None, "reference", "reference"))
            continue
        gaps, intervals = {}, {}
        for rate in RATES:
            gaps[f"{rate}_gap"], intervals[f"{rate}_gap"] = _wald_gap(*_parts(rate, cm), *_parts(rate, reference),
                                                                      params.level)
        test = ofi_test(cm, reference, params.level)
        di_value = di(cm, reference)
        rule = four_fifths(di_value)
        value = ofi(cm, reference)
        reading = classify(value, test.p_value, rule, alpha=params.alpha) if value is not None else "undefined"
        cells.append(ClassGroup(class_name, name, cm, rates, gaps, intervals, value, _finite(test.p_value),
                                di_value, rule, reading))
    return cells


def _parts(rate: str, cm: ConfusionCounts) -> tuple[int, int]:
    """(numerator, denominator) of a one-vs-rest rate."""
    if rate == "tpr":
        return cm.tp, cm.positives
    if rate == "fpr":
        return cm.fp, cm.fp + cm.tn
    return cm.predicted_positive, cm.n


def _wald_gap(k_a: int, n_a: int, k_b: int, n_b: int, level: float) -> tuple[float | None, list | None]:
    """p_a − p_b with its Wald interval (None when either rate is undefined)."""
    if n_a == 0 or n_b == 0:
        return None, None
    p_a, p_b = k_a / n_a, k_b / n_b
    half = float(sps.norm.ppf(0.5 + level / 2)) * np.sqrt(p_a * (1 - p_a) / n_a + p_b * (1 - p_b) / n_b)
    return p_a - p_b, [p_a - p_b - half, p_a - p_b + half]


def _adjusted(cells: list[ClassGroup]) -> list[ClassGroup]:
    """Benjamini–Hochberg of the OFI tests over classes × groups."""
    adjusted = stats.benjamini_hochberg([np.nan if c.ofi_p is None else c.ofi_p for c in cells])
    return [ClassGroup(**{**c.__dict__, "ofi_p_adjusted": _finite(a)}) for c, a in zip(cells, adjusted)]


def _rate_gaps(T: np.ndarray, params: MulticlassParityParams, rng: np.random.Generator) -> dict:
    """GAP of each rate with a permutation p-value: group labels permuted over the rows' (y, ŷ) cells."""
    n_classes, n_groups = T.shape[0], T.shape[1]
    cells = np.moveaxis(T, 1, 0).reshape(n_groups, -1)
    null = np.moveaxis(split_among_groups(cells, params.permutations, rng).reshape(
        params.permutations, n_groups, n_classes, n_classes), 1, 2)
    out = {}
    for rate in RATES:
        value, per_class, _ = rms_gap(T, rate)
        null_gap, _, _ = rms_gap(null, rate)
        rates, _, _ = rate_cells(T, rate)
        out[rate] = RateGap(rate, float(value), per_class, rates, stats.permutation_p_value(float(value), null_gap))
    return out


def _performance(name: str, confusion: np.ndarray, params: MulticlassParityParams,
                 rng: np.random.Generator) -> GroupPerformance:
    """A group's accuracy and macro-F1 with bootstrap CIs (its C × C cells resampled)."""
    n_classes = confusion.shape[0]
    draws = stats.bootstrap_counts(confusion.ravel(), params.resamples, rng).reshape(-1, n_classes, n_classes)
    accuracy, macro = accuracy_and_macro_f1(draws)
    point_accuracy, point_macro = accuracy_and_macro_f1(confusion[None])
    return GroupPerformance(name, int(confusion.sum()), confusion, float(point_accuracy[0]), float(point_macro[0]),
                            {"accuracy": stats.percentile_interval(accuracy, params.level),
                             "macro_f1": stats.percentile_interval(macro, params.level)})


def accuracy_and_macro_f1(confusions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and macro-F1 of confusion matrices (B, C, C). Macro-F1 averages over the classes present in the
    label or the prediction (scikit-learn's default), F1 = 2·TP / (2·TP + FP + FN)."""
    tp = np.diagonal(confusions, axis1=1, axis2=2).astype(float)
    true, pred = confusions.sum(2), confusions.sum(1)
    n = confusions.sum((1, 2)).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        accuracy = tp.sum(1) / n
        present = (true + pred) > 0
        f1 = np.where(present, 2 * tp / np.where(present, true + pred, 1), 0.0)
        macro = f1.sum(1) / present.sum(1)
    return accuracy, macro


def _finite(x):
    return float(x) if x is not None and np.isfinite(x) else None


def analyse_multiclass(pred, attribute: str, params: MulticlassParityParams = MulticlassParityParams()
                       ) -> MulticlassParity:
    """One-vs-rest parity per class of a Predictions object whose task has classes (``y`` and ``predicted`` class
    codes, ``classes`` their names)."""
    spec = spec_of(pred)
    if not spec.per_class:
        raise DataError(f"Parity per class needs predictions of several classes; these are {spec.title} "
                        "predictions.")
    view = pred.groups(attribute)
    return multiclass_parity(pred.y, pred.predicted, view.codes, view.names, pred.classes, pred.weight, attribute,
                             params)
