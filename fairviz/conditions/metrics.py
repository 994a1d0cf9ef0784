"""Performance and fairness of a classifier under the paper's definitions (*Systematic Evaluation of Predictive
Fairness*, §4.2 and §4.4), all computed from one confusion tensor ``T[y, z, ŷ]`` (counts or weights).

- performance: accuracy (micro) and macro-F1;
- per-cell one-vs-rest rates: TPR_{c,g} = P(ŷ = c | y = c, z = g), FPR_{c,g} = P(ŷ = c | y ≠ c, z = g),
  PPR_{c,g} = P(ŷ = c | z = g);
- GAP of a rate: for each class, Σ_g |rate_{c,g} − rate_c| (rate_c over all groups), then the root mean square
  over classes. With two groups this is exactly |rate_{c,1} − rate_{c,2}|. A class with an empty cell is left
  out of the mean and listed (never scored as 0 or 0.5);
- Fairness = 1 − GAP(TPR) (equal opportunity), DTO = distance of (performance, fairness) to the utopia (1, 1).

Regression (§7): Pearson r per group and its gap. Leakage (not in the paper): accuracy of a linear probe that
predicts z from representations. Intervals: percentile bootstrap resampling rows within (y, z) cells.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fairviz.core.stats import Interval, percentile_interval

RATES = ("tpr", "fpr", "ppr")


def confusion(y, y_pred, z, n_classes: int, n_groups: int, weights=None) -> np.ndarray:
    """T[c, g, k] = (weighted) number of rows with y = c, z = g, ŷ = k."""
    y, y_pred, z = (np.asarray(a, dtype=int) for a in (y, y_pred, z))
    flat = (y * n_groups + z) * n_classes + y_pred
    size = n_classes * n_groups * n_classes
    return np.bincount(flat, weights=weights, minlength=size).reshape(n_classes, n_groups, n_classes).astype(float)


def accuracy_of(T: np.ndarray) -> float:
    total = T.sum()
    return float(np.trace(T.sum(1)) / total) if total > 0 else float("nan")


def macro_f1_of(T: np.ndarray) -> float:
    cm = T.sum(1)                                   # y × ŷ
    tp = np.diag(cm)
    support, predicted = cm.sum(1), cm.sum(0)
    denom = support + predicted
    f1 = np.divide(2 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    present = support > 0
    return float(f1[present].mean()) if present.any() else float("nan")


def rate_cells(T: np.ndarray, rate: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cells C×G, overall per class C, defined C×G) of a one-vs-rest rate."""
    n_classes = T.shape[0]
    if rate == "tpr":
        num = np.einsum("cgc->cg", T)                       # y = c, ŷ = c
        den = T.sum(2)                                      # y = c
    elif rate == "fpr":
        pred = T.sum(0).T                                   # [k, g]: rows predicted k in group g
        num = pred - np.einsum("cgc->cg", T)                # predicted c but y ≠ c
        den = T.sum((0, 2))[None, :] - T.sum(2)             # y ≠ c in group g
    elif rate == "ppr":
        num = T.sum(0).T                                    # predicted c in group g
        den = np.broadcast_to(T.sum((0, 2))[None, :], num.shape).copy()
    else:
        raise ValueError(f"unknown rate '{rate}' (use tpr, fpr or ppr)")
    defined = den > 0
    cells = np.divide(num, den, out=np.full(num.shape, np.nan), where=defined)
    total_den = den.sum(1)
    overall = np.divide(num.sum(1), total_den, out=np.full(n_classes, np.nan), where=total_den > 0)
    return cells, overall, defined


@dataclass(frozen=True)
class Gap:
    """A rate's GAP: the RMS over classes of Σ_g |rate_{c,g} − rate_c| (or of the largest pairwise difference)."""

    rate: str
    value: float                    # NaN when every class was excluded
    per_class: np.ndarray           # NaN for excluded classes
    cells: np.ndarray               # C×G
    excluded: tuple[int, ...]       # classes left out: a group had no rows to define the rate

    def to_dict(self, classes=None) -> dict:
        names = list(classes) if classes is not None else list(range(self.per_class.size))
        return {"rate": self.rate, "gap": self.value, "per_class": self.per_class.tolist(),
                "excluded_classes": [names[c] for c in self.excluded]}


def gap_of(T: np.ndarray, rate: str = "tpr", group_agg: str = "sum_abs_dev", power: float = 2.0) -> Gap:
    cells, overall, defined = rate_cells(T, rate)
    if group_agg == "sum_abs_dev":
        per_class = np.abs(cells - overall[:, None]).sum(1)
    elif group_agg == "max_pairwise":
        per_class = np.nanmax(cells, 1) - np.nanmin(cells, 1)
    else:
        raise ValueError(f"unknown group aggregation '{group_agg}'")
    ok = defined.all(1)
    per_class = np.where(ok, per_class, np.nan)
    values = per_class[ok]
    if values.size == 0:
        value = float("nan")
    elif np.isinf(power):
        value = float(values.max())
    else:
        value = float(np.mean(values ** power) ** (1 / power))
    return Gap(rate, value, per_class, cells, tuple(int(c) for c in np.flatnonzero(~ok)))


def dto(performance, fairness, utopia=(1.0, 1.0), normalize: bool = False):
    """Distance to the utopia point; with ``normalize`` both axes are first divided by their maxima over the
    candidates (fairlib's epoch selection), so the candidate best on both axes has DTO 0."""
    perf = np.asarray(performance, dtype=float)
    fair = np.asarray(fairness, dtype=float)
    if normalize:
        perf = perf / np.nanmax(perf)
        fair = fair / np.nanmax(fair)
    out = np.hypot(utopia[0] - perf, utopia[1] - fair)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class Scores:
    """One model on one split: the paper's three figures plus the other gaps."""

    n: int
    accuracy: float
    macro_f1: float
    gap_tpr: float
    gap_fpr: float
    gap_ppr: float
    excluded_classes: tuple[int, ...] = ()
    ci: dict = field(default_factory=dict)          # name → Interval (bootstrap within cells), when asked for

    @property
    def fairness(self) -> float:
        return 1.0 - self.gap_tpr

    @property
    def dto(self) -> float:
        return dto(self.accuracy, self.fairness)

    def to_dict(self) -> dict:
        out = {"n": self.n, "accuracy": self.accuracy, "macro_f1": self.macro_f1, "gap_tpr": self.gap_tpr,
               "gap_fpr": self.gap_fpr, "gap_ppr": self.gap_ppr, "fairness": self.fairness, "dto": self.dto,
               "excluded_classes": list(self.excluded_classes)}
        if self.ci:
            out["ci"] = {k: v.to_list() for k, v in self.ci.items()}
        return out


def scores_of(T: np.ndarray) -> Scores:
    tpr = gap_of(T, "tpr")
    return Scores(int(round(T.sum())), accuracy_of(T), macro_f1_of(T), tpr.value, gap_of(T, "fpr").value,
                  gap_of(T, "ppr").value, tpr.excluded)


def evaluate(y, y_pred, z, n_classes: int, n_groups: int, resamples: int = 0, seed: int = 0,
             level: float = 0.95) -> Scores:
    """Scores of predictions; with ``resamples`` > 0, percentile bootstrap intervals resampled within (y, z) cells."""
    T = confusion(y, y_pred, z, n_classes, n_groups)
    base = scores_of(T)
    if resamples <= 0:
        return base
    y, y_pred, z = (np.asarray(a, dtype=int) for a in (y, y_pred, z))
    cell = y * n_groups + z
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(cell == c) for c in np.unique(cell)]
    names = ("accuracy", "macro_f1", "fairness", "gap_tpr", "gap_fpr", "gap_ppr", "dto")
    draws = np.empty((resamples, len(names)))
    for b in range(resamples):
        idx = np.concatenate([m[rng.integers(0, m.size, m.size)] for m in members])
        s = scores_of(confusion(y[idx], y_pred[idx], z[idx], n_classes, n_groups))
        draws[b] = [getattr(s, k) for k in names]
    ci = {k: percentile_interval(draws[:, i], level) for i, k in enumerate(names)}
    return Scores(base.n, base.accuracy, base.macro_f1, base.gap_tpr, base.gap_fpr, base.gap_ppr,
                  base.excluded_classes, ci)


# ------------------------------------------------------------------------------------------ regression

def pearson(a, b) -> float:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size < 2 or a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


@dataclass(frozen=True)
class RegressionScores:
    pearson: float
    mae: float
    rmse: float
    pearson_gap: float
    mae_gap: float
    rmse_gap: float

    @property
    def fairness(self) -> float:
        """The paper's Table 1: 1 − |r_1 − r_2| (the largest pairwise difference with more groups)."""
        return 1.0 - self.pearson_gap

    @property
    def dto(self) -> float:
        return dto(self.pearson, self.fairness)

    def to_dict(self) -> dict:
        return {"pearson": self.pearson, "mae": self.mae, "rmse": self.rmse, "pearson_gap": self.pearson_gap,
                "mae_gap": self.mae_gap, "rmse_gap": self.rmse_gap, "fairness": self.fairness, "dto": self.dto}


def evaluate_regression(y, y_pred, z) -> RegressionScores:
    y, y_pred, z = np.asarray(y, float), np.asarray(y_pred, float), np.asarray(z)
    err = y_pred - y
    per = []
    for g in np.unique(z):
        m = z == g
        per.append((pearson(y[m], y_pred[m]), np.abs(err[m]).mean(), np.sqrt((err[m] ** 2).mean())))
    per = np.array(per)
    spread = np.nanmax(per, 0) - np.nanmin(per, 0)
    return RegressionScores(pearson(y, y_pred), float(np.abs(err).mean()), float(np.sqrt((err ** 2).mean())),
                            *map(float, spread))


# ------------------------------------------------------------------------------------------ leakage

@dataclass(frozen=True)
class Leakage:
    accuracy: float
    balanced_accuracy: float
    chance: float           # the majority group's share on the test split

    def to_dict(self) -> dict:
        return {"accuracy": self.accuracy, "balanced_accuracy": self.balanced_accuracy, "chance": self.chance}


def leakage(h_dev, z_dev, h_test, z_test) -> Leakage:
    """How well a linear probe fit on dev representations predicts z on test ones (0.5 balanced = no leakage)."""
    from sklearn.svm import LinearSVC
    from threadpoolctl import threadpool_limits
    z_test = np.asarray(z_test)
    with threadpool_limits(1):
        probe = LinearSVC(C=0.1, class_weight="balanced", dual=False, max_iter=10000).fit(h_dev, z_dev)
        hat = probe.predict(h_test)
    recalls = [np.mean(hat[z_test == g] == g) for g in np.unique(z_test)]
    return Leakage(float(np.mean(hat == z_test)), float(np.mean(recalls)),
                   float(np.bincount(z_test).max() / z_test.size))


def interval_text(ci: Interval | None) -> str:
    if ci is None or not np.isfinite(ci.low):
        return "—"
    return f"[{ci.low:.3f}, {ci.high:.3f}]"
