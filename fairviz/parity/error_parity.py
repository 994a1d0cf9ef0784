"""Group parity of a numeric prediction (a regression model): do the groups get equally good, and equally
distributed, predictions?

- **Error parity**: bias mean(ŷ − y), MAE and RMSE per group with bootstrap CIs; gaps (g − reference) and ratios
  (g / reference) against a reference group (the largest by default) and between every other pair;
- **prediction parity**: how far apart the groups' ŷ distributions are: Wasserstein-1, Kolmogorov–Smirnov and the
  statistical-parity AUC P(ŷ_g > ŷ_ref) + ½ P(ŷ_g = ŷ_ref) (½: no ordering);
- **bounded group loss** (Agarwal, Dudík & Wu 2019): the worst group's MSE and MAE;
- *Systematic Evaluation of Predictive Fairness* (Han et al.) for regression: the target cut at its quantiles into
  proxy classes, the prediction cut at the same edges, and GAP(TPR) over those classes; with the paper's §7
  Pearson r per group.

Each gap has a permutation p-value (group labels permuted; counts split by multivariate hypergeometric draws over
at most ``PERMUTATION_SUPPORT`` distinct values) and Benjamini–Hochberg adjusts each statistic over the pairs. Point
estimates are exact; the bootstrap snaps values to a grid above 2,048 distinct values and the permutation tests
above 512 (stated in the result: ``snapped``).
Entries may carry integer weights (the engine's reduction): an entry of weight w counts as w rows everywhere.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from fairviz.core import stats
from fairviz.core.focus import MIN_GROUP_SIZE
from fairviz.core.stats import Interval
from fairviz.data.model import DataError
from fairviz.data.tasks import spec_of
from fairviz.parity.entry_stats import (class_tensor, entry_weights, proxy_classes, proxy_edges, rms_gap,
                                       row_quantiles, shared_support, split_among_groups, two_sided_p)

ERROR_STATS = ("bias", "mae", "rmse")
PREDICTION_STATS = ("w1", "ks", "auc")
PAIR_STATS = ("bias_gap", "mae_gap", "rmse_gap", "w1", "ks", "auc")
MAX_PAIR_GROUPS = 12            # pairs are tested among the 12 largest groups (66 pairs); the table keeps them all
PERMUTATION_SUPPORT = 512       # grid of the permutation tests above 512 distinct values: a 1000-permutation test
#                                 splits 1000 × K counts, at 2,048 the whole analysis of 1M rows took 16 s, at 512 8.5 s
QUANTILES = np.linspace(0, 1, 201)   # the groups' ŷ distributions as the figures draw them
METHOD = "error_prediction_parity"   # the JSON's name of this method


@dataclass(frozen=True)
class RegressionParityParams:
    reference: str | None = None    # the reference group (None: the largest)
    resamples: int = 1000           # bootstrap resamples for the CIs
    permutations: int = 1000        # label permutations per test
    proxy_classes: int = 4          # quantile proxy classes of the target ([5] uses 4 and 10)
    level: float = 0.95
    alpha: float = 0.05
    seed: int = 0
    units: str | None = None        # the target's units, for the sentences
    min_group_size: int = MIN_GROUP_SIZE   # the Summary's size floor: a smaller group never headlines


@dataclass(frozen=True)
class RegressionGroup:
    name: str
    n: int
    bias: float                     # mean(ŷ − y): > 0 over-predicts
    mae: float
    rmse: float
    mse: float
    pearson: float                  # r(y, ŷ) within the group ([5] §7); NaN when either side is constant
    intervals: dict = field(default_factory=dict)   # "bias" | "mae" | "rmse" | "mse" → Interval
    quantiles: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)  # ŷ at QUANTILES (figures)

    def to_dict(self) -> dict:
        return {"n": self.n, "bias": self.bias, "mae": self.mae, "rmse": self.rmse,
                "mse": self.mse, "pearson": _finite(self.pearson),
                **{f"{k}_ci": v.to_list() for k, v in self.intervals.items()}}


@dataclass(frozen=True)
class RegressionPair:
    """Group ``group`` against ``other`` (the reference when ``against_reference``): gaps are group − other."""
    group: str
    other: str
    against_reference: bool
    n_group: int
    n_other: int
    values: dict                    # PAIR_STATS + mae_ratio, rmse_ratio
    intervals: dict                 # bias_gap, mae_gap, rmse_gap, mae_ratio, rmse_ratio → Interval
    p_values: dict                  # PAIR_STATS → permutation p (two-sided; AUC: |AUC − ½|)
    p_adjusted: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {"group": self.group, "other": self.other, "against_reference": self.against_reference,
               "n_group": self.n_group, "n_other": self.n_other}
        out.update({k: _finite(v) for k, v in self.values.items()})
        out.update({f"{k}_ci": v.to_list() for k, v in self.intervals.items()})
        out.update({f"{k}_p": _finite(v) for k, v in self.p_values.items()})
        out.update({f"{k}_p_adjusted": _finite(v) for k, v in self.p_adjusted.items()})
        return out


@dataclass(frozen=True)
class BoundedLoss:
    """The worst group's loss (``loss``: "mse" or "mae"), its CI, the overall loss and a permutation test of
    max_g loss_g (is the worst group worse than group labels shuffled at random would give?)."""
    loss: str
    group: str
    n: int
    value: float
    interval: Interval
    overall: float
    p_value: float

    def to_dict(self) -> dict:
        return {"loss": self.loss, "group": self.group, "n": self.n, "value": self.value,
                "ci": self.interval.to_list(), "overall": self.overall, "p_value": _finite(self.p_value)}


@dataclass(frozen=True)
class ProxyGap:
    """GAP(TPR) over the target's quantile proxy classes, with its permutation p-value."""
    edges: np.ndarray
    value: float
    per_class: np.ndarray           # NaN for a class some group cannot define
    tpr: np.ndarray                 # C × G proxy-class TPR
    p_value: float
    pearson_gap: float              # max − min of the groups' Pearson r ([5] §7's Pearson-GAP for two groups)

    @property
    def n_classes(self) -> int:
        return self.edges.size - 1

    def to_dict(self) -> dict:
        return {"edges": self.edges.tolist(), "gap_tpr": _finite(self.value),
                "per_class": [_finite(v) for v in self.per_class], "tpr": [[_finite(v) for v in row]
                                                                        for row in self.tpr],
                "p_value": _finite(self.p_value), "pearson_gap": _finite(self.pearson_gap)}


@dataclass(frozen=True)
class RegressionParity:
    attribute: str
    params: RegressionParityParams
    groups: tuple[RegressionGroup, ...]
    reference: str
    pairs: tuple[RegressionPair, ...]
    bounded: tuple[BoundedLoss, ...]
    proxy: ProxyGap
    snapped: bool                   # resampling used a grid (more than MAX_SUPPORT distinct values)
    warnings: tuple[str, ...] = ()

    def group(self, name: str) -> RegressionGroup:
        return next(g for g in self.groups if g.name == name)

    def against_reference(self) -> list[RegressionPair]:
        return [p for p in self.pairs if p.against_reference]

    def pair(self, group: str, other: str) -> RegressionPair | None:
        return next((p for p in self.pairs if (p.group, p.other) == (group, other)), None)

    def families(self) -> int:
        """The families of tests a headline is drawn from: each pair statistic, the two bounded losses, the
        proxy-class GAP."""
        return len(PAIR_STATS) + 3

    def flagged(self) -> list[tuple[str, object, float]]:
        """(statistic, pair or result, its family-adjusted p) for every test beyond noise: BH over pairs within a
        statistic, then Bonferroni over the families, so that on data with no disparity at all the section flags
        nothing in at least 1 − α of data sets. Groups under the size floor never headline."""
        m, alpha, floor = self.families(), self.params.alpha, self.params.min_group_size
        out = [(k, p, min(1.0, m * p.p_adjusted[k])) for p in self.pairs for k in PAIR_STATS
               if min(p.n_group, p.n_other) >= floor and np.isfinite(p.p_adjusted[k])
               and m * p.p_adjusted[k] < alpha]
        out += [(f"bounded_{b.loss}", b, min(1.0, m * b.p_value)) for b in self.bounded
                if b.n >= floor and np.isfinite(b.p_value) and m * b.p_value < alpha]
        if np.isfinite(self.proxy.p_value) and m * self.proxy.p_value < alpha:
            out.append(("proxy_gap", self.proxy, min(1.0, m * self.proxy.p_value)))
        return out

    def to_dict(self) -> dict:
        """The parity section's JSON (its envelope: ``method``, ``attribute``, ``reference``, ``groups`` by name,
        ``pairs``, ``settings``, ``warnings``) with this method's own keys."""
        return {"method": METHOD, "attribute": self.attribute, "reference": self.reference,
                "groups": {g.name: g.to_dict() for g in self.groups}, "pairs": [p.to_dict() for p in self.pairs],
                "settings": asdict(self.params), "warnings": list(self.warnings),
                "bounded_loss": [b.to_dict() for b in self.bounded], "proxy_gap": self.proxy.to_dict(),
                "snapped": self.snapped}


# ----------------------------------------------------------------------------------------------- checks

def checked_inputs(y, predicted, codes, names, weights) -> tuple[np.ndarray, ...]:
    """Float target and prediction, int group codes and int weights, with entries of weight 0 dropped; one plain
    sentence per problem."""
    y = _numeric(y, "target")
    predicted = _numeric(predicted, "prediction")
    codes = np.asarray(codes)
    if not (y.shape == predicted.shape == codes.shape) or y.ndim != 1:
        raise DataError("The target, the prediction and the groups must have one value per row each.")
    if codes.size and (codes.min() < 0 or codes.max() >= len(names)):
        raise DataError("A group code has no group name.")
    w = entry_weights(weights, y.size)
    keep = w > 0
    y, predicted, codes, w = y[keep], predicted[keep], codes[keep].astype(np.int64), w[keep]
    if np.unique(codes).size < 2:
        raise DataError("Group parity needs at least two groups with rows; this attribute has "
                        f"{np.unique(codes).size}.")
    if y.size and np.all(y == y[0]):
        raise DataError(f"The target is constant ({y[0]:g} on every row): there is nothing to predict, so its "
                        "errors cannot be compared across groups.")
    return y, predicted, codes, w


def _numeric(values, what: str) -> np.ndarray:
    try:
        out = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"The {what} has values that are not numbers.") from None
    bad = int(np.count_nonzero(~np.isfinite(out)))
    if bad:
        raise DataError(f"The {what} has {bad:,} missing or infinite values; drop or fill them first.")
    return out


# ----------------------------------------------------------------------------------------------- analysis

def regression_parity(y, predicted, codes, names, weights=None, attribute: str = "",
                      params: RegressionParityParams = RegressionParityParams()) -> RegressionParity:
    """Every statistic of the module for target ``y``, prediction ``predicted`` and group ``codes`` into
    ``names``."""
    y, predicted, codes, w = checked_inputs(y, predicted, codes, names, weights)
    sizes = np.bincount(codes, weights=w, minlength=len(names)).round().astype(np.int64)
    present = [g for g in np.argsort(-sizes, kind="stable") if sizes[g] > 0]
    if params.reference is not None and params.reference not in names:
        raise DataError(f"The reference group '{params.reference}' is not one of the groups.")
    ref = names.index(params.reference) if params.reference is not None else int(present[0])
    if sizes[ref] == 0:
        raise DataError(f"The reference group '{names[ref]}' has no rows.")
    residual = predicted - y
    rng = np.random.default_rng(params.seed)
    exact, boot = {}, {}
    for g in sorted(present):
        exact[g], boot[g] = _group_errors(y, predicted, residual, codes == g, w, names[g], params, rng)
    groups = [exact[g] for g in sorted(present)]
    snapped = bool(max(np.unique(residual).size, np.unique(predicted).size) > PERMUTATION_SUPPORT)
    tested = present[:MAX_PAIR_GROUPS]
    order = [ref] + [g for g in tested if g != ref]
    pairs = [_pair(g, ref, True, residual, predicted, codes, w, names, sizes, exact, boot, params, rng)
             for g in order[1:]]
    pairs += [_pair(a, b, False, residual, predicted, codes, w, names, sizes, exact, boot, params, rng)
              for i, a in enumerate(order[1:]) for b in order[i + 2:]]
    pairs = _adjusted(pairs)
    by_name = {gr.name: gr for gr in groups}
    bounded = tuple(_bounded(loss, residual, codes, w, present, names, by_name, params, rng)
                    for loss in ("mse", "mae"))
    proxy = _proxy_gap(y, predicted, codes, w, names, present, groups, params, rng)
    warnings = []
    if len(present) > MAX_PAIR_GROUPS:
        warnings.append(f"Pairs are tested among the {MAX_PAIR_GROUPS} largest groups of {len(present)}.")
    small = [names[g] for g in present if sizes[g] < params.min_group_size]
    if small:
        warnings.append(f"{len(small)} group(s) have fewer than {params.min_group_size} rows ({', '.join(small[:5])}"
                        f"{'…' if len(small) > 5 else ''}): their numbers are shown but never headline.")
    return RegressionParity(attribute, params, tuple(groups), names[ref], tuple(pairs), bounded, proxy, snapped,
                            tuple(warnings))


def _group_errors(y, predicted, residual, mask, w, name, params, rng):
    """A group's bias, MAE, RMSE, MSE and Pearson r, with bootstrap CIs (resampled residual counts)."""
    r, wg = residual[mask], w[mask]
    n = int(wg.sum())
    bias, mae, mse = float(wg @ r / n), float(wg @ np.abs(r) / n), float(wg @ (r * r) / n)
    support, counts = shared_support(r, wg, [np.ones(r.size, bool)])
    draws = stats.bootstrap_counts(counts[0], params.resamples, rng)
    samples = _error_stats(support, draws)
    intervals = {k: stats.percentile_interval(samples[k], params.level) for k in ("bias", "mae", "rmse", "mse")}
    group = RegressionGroup(name, n, bias, mae, float(np.sqrt(mse)), mse,
                            _pearson(y[mask], predicted[mask], wg), intervals,
                            row_quantiles(predicted[mask], wg, QUANTILES))
    return group, samples


def _error_stats(support: np.ndarray, counts: np.ndarray) -> dict:
    """Bias, MAE, MSE and RMSE of residuals given as count rows over ``support``."""
    n = counts.sum(-1).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mse = counts @ (support * support) / n
        return {"bias": counts @ support / n, "mae": counts @ np.abs(support) / n, "mse": mse, "rmse": np.sqrt(mse)}


def _pearson(y, predicted, w) -> float:
    n = w.sum()
    dy, dp = y - w @ y / n, predicted - w @ predicted / n
    denominator = np.sqrt((w @ (dy * dy)) * (w @ (dp * dp)))
    return float(w @ (dy * dp) / denominator) if denominator > 0 else float("nan")


def prediction_distance(support: np.ndarray, counts_a: np.ndarray, counts_b: np.ndarray) -> dict:
    """W1, KS and the AUC P(a > b) + ½ P(a = b) of two samples as count rows (…, K) over a sorted support."""
    counts_a, counts_b = np.atleast_2d(counts_a).astype(float), np.atleast_2d(counts_b).astype(float)
    n_a, n_b = counts_a.sum(-1, keepdims=True), counts_b.sum(-1, keepdims=True)
    pa, pb = counts_a / n_a, counts_b / n_b
    cdf_a, cdf_b = np.cumsum(pa, -1), np.cumsum(pb, -1)
    below_b = cdf_b - pb                                             # P(b < this value)
    return {"w1": np.abs(cdf_a - cdf_b)[..., :-1] @ np.diff(support),
            "ks": np.abs(cdf_a - cdf_b).max(-1),
            "auc": (pa * (below_b + pb / 2)).sum(-1)}


def _pair(a, b, against_reference, residual, predicted, codes, w, names, sizes, exact, boot, params, rng):
    masks = [codes == a, codes == b]
    ga, gb = exact[a], exact[b]
    values = {f"{k}_gap": getattr(ga, k) - getattr(gb, k) for k in ERROR_STATS}
    values.update({f"{k}_ratio": _ratio(getattr(ga, k), getattr(gb, k)) for k in ("mae", "rmse")})
    exact_support, exact_counts = shared_support(predicted, w, masks, exact=True)
    values.update({k: float(v[0]) for k, v in prediction_distance(exact_support, *exact_counts).items()})
    intervals = {f"{k}_gap": stats.percentile_interval(boot[a][k] - boot[b][k], params.level) for k in ERROR_STATS}
    with np.errstate(divide="ignore", invalid="ignore"):
        intervals.update({f"{k}_ratio": stats.percentile_interval(boot[a][k] / boot[b][k], params.level)
                          for k in ("mae", "rmse")})
    p_values = {}
    support, counts = shared_support(residual, w, masks, max_support=PERMUTATION_SUPPORT)   # errors permuted
    first, second = stats.permutation_counts(counts.sum(0), int(counts[0].sum()), params.permutations, rng)
    observed, null_a, null_b = _error_stats(support, counts), _error_stats(support, first), _error_stats(support,
                                                                                                         second)
    for k in ERROR_STATS:
        p_values[f"{k}_gap"] = two_sided_p(float(observed[k][0] - observed[k][1]), null_a[k] - null_b[k])
    support, counts = shared_support(predicted, w, masks, max_support=PERMUTATION_SUPPORT)  # predictions permuted
    first, second = stats.permutation_counts(counts.sum(0), int(counts[0].sum()), params.permutations, rng)
    observed, null = prediction_distance(support, *counts), prediction_distance(support, first, second)
    p_values["w1"] = stats.permutation_p_value(float(observed["w1"][0]), null["w1"])
    p_values["ks"] = stats.permutation_p_value(float(observed["ks"][0]), null["ks"])
    p_values["auc"] = two_sided_p(float(observed["auc"][0]) - 0.5, null["auc"] - 0.5)
    return RegressionPair(names[a], names[b], against_reference, int(sizes[a]), int(sizes[b]), values, intervals,
                          p_values)


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")


def _adjusted(pairs: list[RegressionPair]) -> list[RegressionPair]:
    """Benjamini–Hochberg over the pairs, one family per statistic."""
    adjusted = {k: stats.benjamini_hochberg([p.p_values[k] for p in pairs]) for k in PAIR_STATS}
    return [RegressionPair(p.group, p.other, p.against_reference, p.n_group, p.n_other, p.values, p.intervals,
                           p.p_values, {k: float(adjusted[k][i]) for k in PAIR_STATS}) for i, p in enumerate(pairs)]


def _bounded(loss, residual, codes, w, present, names, by_name, params, rng) -> BoundedLoss:
    """The worst group's loss and a permutation test of max_g loss_g over every group's labels."""
    masks = [codes == g for g in present]
    support, counts = shared_support(residual, w, masks, max_support=PERMUTATION_SUPPORT)
    per_unit = support * support if loss == "mse" else np.abs(support)
    observed = counts @ per_unit / counts.sum(1)
    null = split_among_groups(counts, params.permutations, rng)
    null_max = (null @ per_unit / counts.sum(1)).max(-1)
    values = [getattr(by_name[names[g]], loss) for g in present]
    worst = int(np.argmax(values))
    group = by_name[names[present[worst]]]
    total = w.sum()
    overall = float(w @ (residual * residual) / total if loss == "mse" else w @ np.abs(residual) / total)
    return BoundedLoss(loss, group.name, group.n, float(values[worst]), group.intervals[loss], overall,
                       stats.permutation_p_value(float(observed.max()), null_max))


def _proxy_gap(y, predicted, codes, w, names, present, groups, params, rng) -> ProxyGap:
    edges = proxy_edges(y, w, params.proxy_classes)
    n_classes = edges.size - 1
    kept = np.isin(codes, present)
    local = np.searchsorted(np.array(sorted(present)), codes[kept])
    T = class_tensor(proxy_classes(y[kept], edges), proxy_classes(predicted[kept], edges), local, n_classes,
                     len(present), w[kept])
    value, per_class, _ = rms_gap(T)
    cells = np.moveaxis(T, 1, 0).reshape(len(present), -1)            # G × (C·C) (true, predicted) cells
    null = split_among_groups(cells, params.permutations, rng).reshape(params.permutations, len(present),
                                                                      n_classes, n_classes)
    null_gap, _, _ = rms_gap(np.moveaxis(null, 1, 2))
    tpr = np.diagonal(T, axis1=0, axis2=2).T / np.maximum(T.sum(2), 1)
    tpr = np.where(T.sum(2) > 0, tpr, np.nan)
    pearsons = np.array([g.pearson for g in groups])
    finite = pearsons[np.isfinite(pearsons)]
    return ProxyGap(edges, float(value), per_class, tpr, stats.permutation_p_value(float(value), null_gap),
                    float(finite.max() - finite.min()) if finite.size >= 2 else float("nan"))


def _finite(x):
    return float(x) if x is not None and np.isfinite(x) else None


def analyse_regression(pred, attribute: str, params: RegressionParityParams = RegressionParityParams()
                       ) -> RegressionParity:
    """Error and prediction parity of a Predictions object whose task has a numeric target (``y`` the target,
    ``score`` ŷ)."""
    spec = spec_of(pred)
    if not spec.numeric_target:
        raise DataError(f"Error and prediction parity need a numeric target; these are {spec.title} predictions.")
    view = pred.groups(attribute)
    return regression_parity(pred.y, pred.score, view.codes, view.names, pred.weight, attribute, params)
