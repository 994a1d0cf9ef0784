"""Calibration of multiclass probabilities by group: top-label and class-wise.

* Top-label calibration (Guo et al. 2017): the confidence max_c p̂_c against whether the predicted class is right;
  its ECE (15 equal-width bins, as every ECE in the app) and a reliability table.
* Class-wise calibration (Kull et al. 2019): each class one-vs-rest, p̂_c against 1[y = c]; the ECE of each class and
  their mean, the class-wise ECE, with a reliability table per class. It needs every class's probability: with only
  a predicted class and its confidence, top-label calibration is all there is, and the result says so.

Every ECE has a percentile bootstrap interval (rows resampled with replacement within the group, the convention of
every page; ``stats.bootstrap_counts``). A resample draws cells of rows that share their ECE bins, label and
correctness, each at the cell's mean probabilities, so one draw gives the top-label
and every class's ECE of the same resampled rows. Each group is also tested for calibration: a binned χ² test with
the probabilities as given (nothing estimated), Σ_b (O_b − E_b)² / Σ_b p̂(1 − p̂) over bins with at least five
expected rows of each outcome (the others pooled into one bin), Benjamini–Hochberg across groups (and classes).

Entries carry integer weights: an entry of weight w counts exactly as w identical rows everywhere, resamples
included."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
from scipy import sparse
from scipy import stats as sps

from fairviz.calibration.reliability import binomial_interval, reliability_table
from fairviz.calibration.results import CI_METHODS, STRATEGIES, Progress, ReliabilityTable
from fairviz.calibration.entries import OVERALL, ByGroup, entry_weights, finite_values, group_codes, per_group
from fairviz.calibration.entries import present_groups
from fairviz.calibration.entries import json_attr as _attr
from fairviz.calibration.entries import json_scalar as _scalar
from fairviz.core import stats
from fairviz.core.ece import ECE_BINS, ece, ece_bin_index, ece_from_sums, group_seed
from fairviz.data import DataError, NotApplicable
from fairviz.data.tasks import spec_of
from fairviz.data.tasks.multiclass import SUM_TOLERANCE         # the data model's: rows further from 1 are noted, read as given

MIN_EXPECTED = 5            # a bin enters the χ² test on its own with this many expected rows of each outcome
BLOCK = 100                 # resamples drawn at a time (bounded memory on many cells)


@dataclass(frozen=True)
class MulticlassParams:
    n_bins: int = 10                     # reliability-table bins
    strategy: str = "uniform"            # reliability bins: equal width or "quantile" (equal count)
    ece_bins: int = ECE_BINS             # equal-width bins of every ECE and of the χ² test
    level: float = 0.95
    ci_method: str = "beta_uniform"      # the reliability tables' interval, as the binary audit's
    resamples: int = 1000
    seed: int = 0
    alpha: float = 0.05
    min_rows: int = 30                   # a group is tested from this many rows

    def __post_init__(self):
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if self.ci_method not in CI_METHODS:
            raise ValueError(f"ci_method must be one of {CI_METHODS}, got {self.ci_method!r}")
        if not 2 <= self.n_bins <= 100 or not 2 <= self.ece_bins <= 100:
            raise ValueError("n_bins and ece_bins must be between 2 and 100")


@dataclass(frozen=True)
class ChiSquare:
    statistic: float
    df: int
    p: float


@dataclass(frozen=True)
class ClassCalibration:
    """One class, one-vs-rest, within one group."""
    name: str
    n_true: int                  # rows of this class
    mean_prob: float             # mean p̂_c
    ece: float
    ece_ci: stats.Interval
    test: ChiSquare | None
    reliability: ReliabilityTable
    p_bh: float = float("nan")   # the test, Benjamini–Hochberg across groups × classes


@dataclass(frozen=True)
class MulticlassGroup:
    name: str
    n: int
    accuracy: float
    accuracy_ci: tuple[float, float]
    mean_confidence: float
    top_ece: float
    top_ece_ci: stats.Interval
    top_test: ChiSquare | None
    top_reliability: ReliabilityTable
    classes: tuple[ClassCalibration, ...] = ()    # empty without every class's probability
    classwise_ece: float = float("nan")
    classwise_ece_ci: stats.Interval = stats.Interval(np.nan, np.nan)
    top_p_bh: float = float("nan")
    status: str = ""                              # "" when tested, else why not
    top_draws: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)
    classwise_draws: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)


@dataclass(frozen=True)
class EceGap:
    """A group's ECE minus the reference group's, with a percentile interval of independent within-group
    resamples."""
    group: str
    reference: str
    measure: str                 # "top-label" or "class-wise"
    gap: float
    ci: stats.Interval


@dataclass(frozen=True)
class MulticlassCalibration(ByGroup):
    attribute: str
    params: MulticlassParams
    classes: tuple[str, ...]
    overall: MulticlassGroup
    groups: tuple[MulticlassGroup, ...]
    reference: str
    gaps: tuple[EceGap, ...]
    classwise: bool              # every class's probability was given
    notes: tuple[str, ...] = ()

    def group_rows(self) -> list[dict]:
        return [{"group": g.name, "n": g.n, "accuracy": _scalar(g.accuracy), "accuracy_ci": _pair(g.accuracy_ci),
                 "mean_confidence": _scalar(g.mean_confidence), "top_label_ece": _scalar(g.top_ece),
                 "top_label_ece_ci": g.top_ece_ci.to_list(), "top_label_chi2": _attr(g.top_test, "statistic"),
                 "top_label_df": _attr(g.top_test, "df"), "top_label_p": _attr(g.top_test, "p"),
                 "top_label_p_bh": _scalar(g.top_p_bh), "classwise_ece": _scalar(g.classwise_ece),
                 "classwise_ece_ci": g.classwise_ece_ci.to_list(), "status": g.status} for g in self.all_groups]

    def class_rows(self) -> list[dict]:
        return [{"group": g.name, "class": c.name, "n_true": c.n_true, "mean_prob": _scalar(c.mean_prob),
                 "ece": _scalar(c.ece), "ece_ci": c.ece_ci.to_list(), "chi2": _attr(c.test, "statistic"),
                 "df": _attr(c.test, "df"), "p": _attr(c.test, "p"), "p_bh": _scalar(c.p_bh)}
                for g in self.all_groups for c in g.classes]

    def bin_rows(self) -> list[dict]:
        """Every reliability table: the top-label one (``class`` None) and each class's, per group."""
        rows = []
        for g in self.all_groups:
            tables = [(None, g.top_reliability)] + [(c.name, c.reliability) for c in g.classes]
            for cls, table in tables:
                rows += [{"group": g.name, "class": cls, "bin": i, **r} for i, r in enumerate(table.rows())]
        return rows

    def gap_rows(self) -> list[dict]:
        return [{"group": d.group, "reference": d.reference, "measure": d.measure, "gap": _scalar(d.gap),
                 "gap_ci": d.ci.to_list()} for d in self.gaps]


# ------------------------------------------------------------------------------------------------ the analysis

def multiclass_calibration(y_codes, class_scores, classes: Sequence[str], codes, names, weight=None,
                           params: MulticlassParams = MulticlassParams(), attribute: str = "", predicted=None,
                           confidence=None, reference: str | None = None,
                           progress: Progress | None = None) -> MulticlassCalibration:
    """Top-label and class-wise calibration per group. ``class_scores``: (K × C) probabilities (rows off 1 by more
    than the data model's tolerance are noted and read as given);
    None when only ``predicted`` class codes and their ``confidence`` are known (top-label only). ``weight``: rows
    per entry. ``reference``: the group the gaps are taken against (the largest when None or unknown).
    ``progress(fraction, message)`` is called after each block of resamples (a Stop raised there ends the work)."""
    classes = tuple(str(c) for c in classes)
    y = _class_codes(y_codes, classes, "label")
    size = y.size
    w = entry_weights(weight, size)
    codes, names = group_codes(codes, names, size, w)
    probs, pred_class, conf = _probabilities(class_scores, predicted, confidence, classes, size)
    notes = [f"ECE: {params.ece_bins} equal-width bins; reliability tables: {params.n_bins} "
             f"{'equal-width' if params.strategy == 'uniform' else 'equal-count'} bins."]
    absent = [c for k, c in enumerate(classes) if not np.any((y == k) & (w > 0))]
    if absent:
        notes.append(f"No row has the class {', '.join(absent)}: its one-vs-rest calibration only measures the "
                     "probability the model gives it (calibrated would be 0).")
    if probs is not None:
        off = np.abs(probs.sum(1) - 1) > SUM_TOLERANCE
        if np.any(off & (w > 0)):
            notes.append(f"In {int(w[off].sum()):,} rows the class probabilities do not sum to 1 (tolerance "
                         f"{SUM_TOLERANCE:g}); they are read as given.")
    correct = (pred_class == y).astype(np.int64)
    present = len(present_groups(codes, names, w))
    report = progress or (lambda *_: None)
    steps = iter(range(present + 1))           # all rows first, then each group

    def analyse_rows(name: str, mask: np.ndarray) -> MulticlassGroup:
        step = next(steps)

        def done(fraction: float) -> None:
            report((step + fraction) / (present + 1), "Resampling all rows" if name == OVERALL
                   else f"Resampling group {step} of {present}")
        return _group(name, y[mask], correct[mask], conf[mask], None if probs is None else probs[mask], w[mask],
                      classes, params, done)

    overall, groups = per_group(analyse_rows, codes, names, w)
    groups = _adjust(groups)
    sizes = {g.name: g.n for g in groups}
    reference = reference if reference in sizes else max(sizes, key=lambda n: (sizes[n], -list(sizes).index(n)))
    gaps = _gaps(groups, reference, probs is not None)
    if probs is None:
        notes.append("Only the predicted class and its confidence are mapped, so top-label calibration is shown and "
                     "class-wise calibration (which needs every class's probability) is not available.")
    untested = [g.name for g in groups if g.status]
    if untested:
        notes.append(f"Not tested (fewer than {params.min_rows} rows): {', '.join(untested)}.")
    return MulticlassCalibration(attribute, params, classes, overall, tuple(groups), reference, gaps,
                                 probs is not None, tuple(notes))


def analyse_multiclass(pred, attribute: str | None = None,
                       params: MulticlassParams = MulticlassParams(), reference: str | None = None,
                       progress: Progress | None = None) -> MulticlassCalibration:
    """``multiclass_calibration`` of ``Predictions`` over several classes: ``pred.class_scores`` when mapped, else
    ``pred.predicted`` with ``pred.score`` as its confidence."""
    spec = spec_of(pred)
    if not spec.per_class:
        raise DataError(f"Top-label calibration needs a label of several classes; these predictions are {spec.title}.")
    view = pred.groups(attribute)
    scores = getattr(pred, "class_scores", None)
    return multiclass_calibration(pred.y, scores, pred.classes, view.codes, view.names, pred.weight, params,
                                  view.attribute, predicted=None if scores is not None else pred.predicted,
                                  confidence=None if scores is not None else pred.score, reference=reference,
                                  progress=progress)


# ------------------------------------------------------------------------------------------------ inputs

def _class_codes(values, classes: tuple[str, ...], what: str) -> np.ndarray:
    if len(classes) < 2:
        raise DataError("A multiclass task needs at least two classes.")
    raw = finite_values(values, what)
    if np.any(raw != np.round(raw)) or np.any((raw < 0) | (raw >= len(classes))):
        raise DataError(f"The {what} holds codes that are not classes 0 to {len(classes) - 1}.")
    return raw.astype(np.int64)


def _probabilities(class_scores, predicted, confidence, classes, size):
    """(probabilities or None, predicted class, confidence) checked: numbers in [0, 1]. Rows whose probabilities do
    not sum to 1 are read as given (as the data model does; the caller notes them)."""
    if class_scores is None:
        if predicted is None or confidence is None:
            raise DataError("Multiclass calibration needs either every class's probability or the predicted class "
                            "with its confidence.")
        pred_class = _class_codes(predicted, classes, "predicted class")
        if np.all(np.isnan(np.asarray(confidence, dtype=float))):
            raise NotApplicable("No confidence is mapped, so top-label calibration (confidence against accuracy) cannot "
                            "be assessed; map the predicted class's confidence or every class's probability.")
        conf = finite_values(confidence, "confidence", size)
        if pred_class.size != size:
            raise DataError(f"The predicted class has {pred_class.size} values for {size} rows.")
        if np.any((conf < 0) | (conf > 1)):
            raise DataError("The confidence must lie between 0 and 1.")
        return None, pred_class, conf
    probs = finite_values(class_scores, "class probabilities", size)
    if probs.ndim != 2 or probs.shape[1] != len(classes):
        raise DataError(f"The class probabilities need one column per class ({len(classes)}).")
    if np.any((probs < 0) | (probs > 1)):
        raise DataError("The class probabilities must lie between 0 and 1.")
    return probs, probs.argmax(1), probs.max(1)


# ------------------------------------------------------------------------------------------------ one group

def _group(name, y, correct, conf, probs, w, classes, params: MulticlassParams, done) -> MulticlassGroup:
    n = int(round(w.sum()))
    hits = int(round(w @ correct))
    acc_low, acc_high = binomial_interval(hits, n, params.level, "clopper_pearson")
    top_ece = ece(conf, correct, params.ece_bins, w)
    top_table = reliability_table(correct, conf, params.n_bins, params.strategy, params.level, params.ci_method, w)
    status = "" if n >= params.min_rows else f"not enough rows (n = {n:,})"
    top_test = None if status else calibration_chi2(conf, correct, w, params.ece_bins)
    draws = _EceDraws(y, correct, conf, probs, w, params, name, done)
    top_ci = stats.percentile_interval(draws.top, params.level) if draws.top.size else stats.Interval(np.nan, np.nan)
    per_class, classwise, classwise_ci = (), float("nan"), stats.Interval(np.nan, np.nan)
    if probs is not None:
        per_class = tuple(_class(c, k, y, probs[:, k], w, params, draws, status) for k, c in enumerate(classes))
        classwise = float(np.mean([c.ece for c in per_class]))
        if draws.classwise.size:
            classwise_ci = stats.percentile_interval(draws.classwise, params.level)
    return MulticlassGroup(name, n, hits / n if n else np.nan, (float(acc_low), float(acc_high)),
                           float(w @ conf / n) if n else np.nan, float(top_ece), top_ci, top_test, top_table,
                           per_class, classwise, classwise_ci, status=status, top_draws=draws.top,
                           classwise_draws=draws.classwise)


def _class(name, k, y, p, w, params, draws, status) -> ClassCalibration:
    label = (y == k).astype(np.int64)
    n = w.sum()
    return ClassCalibration(
        name, int(round(w @ label)), float(w @ p / n) if n else np.nan, float(ece(p, label, params.ece_bins, w)),
        stats.percentile_interval(draws.per_class[:, k], params.level) if draws.per_class.size
        else stats.Interval(np.nan, np.nan),
        None if status else calibration_chi2(p, label, w, params.ece_bins),
        reliability_table(label, p, params.n_bins, params.strategy, params.level, params.ci_method, w))


def calibration_chi2(p: np.ndarray, outcome: np.ndarray, w: np.ndarray, n_bins: int = ECE_BINS) -> ChiSquare | None:
    """The binned χ² test of calibration with given probabilities: in each equal-width bin of p̂ the sum of outcomes
    O has mean E = Σ p̂ and variance V = Σ p̂(1 − p̂) when p̂ is calibrated, so Σ (O − E)²/V is χ² with one degree of
    freedom per bin. Bins with fewer than ``MIN_EXPECTED`` expected rows of either outcome are pooled into one bin,
    which enters whatever its size, so every row is tested (its (O − E)²/V still has mean 1; under calibration the
    test kept its level with sparse pools, 3.9–5.9% at 5%). Only a pool of zero variance (every p̂ 0 or 1) is left
    out: it has no degree of freedom."""
    idx = ece_bin_index(p, n_bins)
    n = np.bincount(idx, weights=w, minlength=n_bins)
    expected = np.bincount(idx, weights=w * p, minlength=n_bins)
    observed = np.bincount(idx, weights=w * outcome, minlength=n_bins)
    variance = np.bincount(idx, weights=w * p * (1 - p), minlength=n_bins)
    alone = (expected >= MIN_EXPECTED) & (n - expected >= MIN_EXPECTED)
    pooled = ~alone & (n > 0)
    o, e, v = observed[alone], expected[alone], variance[alone]
    if variance[pooled].sum() > 0:
        o, e, v = (np.append(o, observed[pooled].sum()), np.append(e, expected[pooled].sum()),
                   np.append(v, variance[pooled].sum()))
    if o.size == 0:
        return None
    statistic = float(np.sum((o - e) ** 2 / v))
    return ChiSquare(statistic, int(o.size), float(sps.chi2.sf(statistic, o.size)))


class _EceDraws:
    """Bootstrap ECEs of one group's rows: top-label, each class's and the class-wise mean, from the same draws."""

    def __init__(self, y, correct, conf, probs, w, params: MulticlassParams, name: str, done=lambda _: None):
        b = params.ece_bins
        keys = [ece_bin_index(conf, b), correct]
        if probs is not None:
            keys += [y] + [ece_bin_index(probs[:, k], b) for k in range(probs.shape[1])]
        cell = _cell_codes(keys)
        cells = int(cell.max()) + 1 if cell.size else 0
        counts = np.bincount(cell, weights=w, minlength=cells)
        safe = np.maximum(counts, 1e-300)
        first = np.zeros(cells, dtype=np.int64)
        first[cell] = np.arange(cell.size)                  # any row: a cell's rows share its keys
        self.top = self.classwise = self.per_class = np.empty(0)
        if params.resamples <= 0 or not cells:
            return
        parts = [(ece_bin_index(conf, b)[first], np.bincount(cell, weights=w * conf, minlength=cells) / safe,
                  correct[first])]
        if probs is not None:
            parts += [(ece_bin_index(probs[:, k], b)[first],
                       np.bincount(cell, weights=w * probs[:, k], minlength=cells) / safe,
                       (y[first] == k).astype(float)) for k in range(probs.shape[1])]
        matrix = _sums_matrix(parts, b)
        rng = np.random.default_rng(group_seed(params.seed, name))
        counts = counts.round().astype(np.int64)
        out = []
        for start in range(0, params.resamples, BLOCK):
            draw = stats.bootstrap_counts(counts, min(BLOCK, params.resamples - start), rng).astype(float)
            sums = np.asarray((matrix.T @ draw.T).T).reshape(draw.shape[0], len(parts), 3, b)
            out.append(ece_from_sums(sums[:, :, 0], sums[:, :, 1], sums[:, :, 2]))
            done((start + draw.shape[0]) / params.resamples)
        values = np.vstack(out)
        self.top = values[:, 0]
        if probs is not None:
            self.per_class = values[:, 1:]
            self.classwise = self.per_class.mean(1)


def _cell_codes(keys: list[np.ndarray]) -> np.ndarray:
    """One dense code per distinct combination of the keys (renumbered after each key, so codes stay small)."""
    code = np.zeros(keys[0].size, dtype=np.int64)
    for key in keys:
        key = np.asarray(key, dtype=np.int64)
        _, code = np.unique(code * (int(key.max()) + 1) + key, return_inverse=True)
        code = code.reshape(-1).astype(np.int64)
    return code


def _sums_matrix(parts, n_bins: int) -> sparse.csr_matrix:
    """(cells × parts·3·bins): a resample's counts times it give, for each part (top-label, then each class), the
    rows, Σ p̂ and Σ outcome of every bin, with every row of a cell at the cell's mean."""
    rows, cols, values = [], [], []
    cells = np.arange(parts[0][0].size)
    for k, (bins, mean_p, label) in enumerate(parts):
        for j, value in enumerate((np.ones(cells.size), mean_p, np.asarray(label, float))):
            rows.append(cells)
            cols.append((k * 3 + j) * n_bins + bins)
            values.append(value)
    return sparse.csr_matrix((np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(cells.size, len(parts) * 3 * n_bins))


# ------------------------------------------------------------------------------------------------ across groups

def _adjust(groups: list[MulticlassGroup]) -> list[MulticlassGroup]:
    """Benjamini–Hochberg: the top-label tests across groups; the class tests across groups × classes."""
    tested = [g for g in groups if g.top_test is not None]
    top = dict(zip([g.name for g in tested], stats.benjamini_hochberg([g.top_test.p for g in tested])))
    pairs = [(g.name, c.name, c.test.p) for g in groups for c in g.classes if c.test is not None]
    per_class = dict(zip([(a, b) for a, b, _ in pairs], stats.benjamini_hochberg([p for *_, p in pairs])))
    return [replace(g, top_p_bh=float(top.get(g.name, np.nan)),
                    classes=tuple(replace(c, p_bh=float(per_class.get((g.name, c.name), np.nan))) for c in g.classes))
            for g in groups]


def _gaps(groups: list[MulticlassGroup], reference: str, classwise: bool) -> tuple[EceGap, ...]:
    ref = next(g for g in groups if g.name == reference)
    out = []
    for g in groups:
        if g.name == reference:
            continue
        out.append(EceGap(g.name, reference, "top-label", g.top_ece - ref.top_ece,
                          _difference_interval(g.top_draws, ref.top_draws, g.top_ece_ci.level)))
        if classwise:
            out.append(EceGap(g.name, reference, "class-wise", g.classwise_ece - ref.classwise_ece,
                              _difference_interval(g.classwise_draws, ref.classwise_draws, g.top_ece_ci.level)))
    return tuple(out)


def _difference_interval(a: np.ndarray, b: np.ndarray, level: float) -> stats.Interval:
    if a.size == 0 or a.size != b.size:
        return stats.Interval(np.nan, np.nan, level)
    return stats.percentile_interval(a - b, level)


def _pair(values) -> list:
    return [_scalar(float(v)) for v in values]

