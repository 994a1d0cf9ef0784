"""Slice statistics: each slice's metric against the REST of the data (everything outside it), a difference with an
Agresti–Caffo interval, an exact two-sided test, and Benjamini–Yekutieli over every slice tested.

The test is Fisher's exact conditional test of the slice's 2×2 table (metric numerator / the rest of its
denominator) against the rest's: MATCH ([3] §4.5) draws the group from the reference's cells as if the reference
were known, which is right for a small group against a large reference but understates the noise when a slice holds
half the data (every depth-1 slice of a binary attribute does); the hypergeometric test is its exact two-sample
analogue and needs no Monte Carlo for 5,000 slices. The p-value is two-sided as MATCH's, min(1, 2·min tail).
MATCH itself is offered (``SliceParams(test="match")``, exact for these rates, about 3 ms a slice) for a reader who
wants the book's test, with the rest of the data as its reference.

Slices overlap and nest, so their tests are dependent in ways that positive regression dependence (which BH needs)
does not cover for two-sided tests: Benjamini–Yekutieli controls the false discovery rate under any dependence. Under
the complete null every discovery is false, so it then bounds the chance of any discovery (family-wise) as well."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as sps

from fairviz.core.confusion_metrics import CELL_ORDER, Cells
from fairviz.core.counts import ConfusionCounts
from fairviz.data.model import DataError
from fairviz.data.tasks import spec_of
from fairviz.sample_size.cps import cps_cells
from fairviz.sample_size.match import match
from fairviz.slices.counts import SliceCounts, slice_names
from fairviz.slices.methods import CountMetric, MeanMetric, every_metric, method_of, rate, summed
from fairviz.slices.metrics import metric_of, score

CORRECTIONS = ("by", "bh")
TESTS = ("fisher", "match")
# the slice metric → MATCH's name of it ([3] §4.5): the error rate's test is the accuracy's (1 − the same count)
MATCH_NAMES = {"error_rate": "acc", "fpr": "fpr", "fnr": "fnr", "selection_rate": "ppr"}
Z95 = 1.959963984540054


@dataclass(frozen=True)
class SliceParams:
    metric: str = "fpr"
    alpha: float = 0.05             # the false discovery rate
    correction: str = "by"          # 'by' (any dependence) or 'bh' (independent or positively dependent tests)
    cps_lambda: float = 5.0         # CPS prior scale for the smoothed estimates
    test: str = "fisher"            # binary: 'fisher' (two-sample, exact) or 'match' (the rest's cells as known)

    def __post_init__(self):
        if self.test not in TESTS:
            raise DataError(f"Unknown slice test '{self.test}': choose {' or '.join(TESTS)}.")
        if self.metric not in every_metric():
            raise DataError(f"Unknown slice metric '{self.metric}': choose one of {', '.join(every_metric())}.")
        if self.correction not in CORRECTIONS:
            raise DataError(f"Unknown correction '{self.correction}': choose 'by' or 'bh'.")
        if not 0 < self.alpha < 1:
            raise DataError(f"The false discovery rate must lie in (0, 1) (got {self.alpha}).")


@dataclass(frozen=True)
class SliceResult:
    """The ranked slices (``table``: one row per slice, significant ones first by the size of their difference) and
    what they were computed from."""

    params: SliceParams
    counts: SliceCounts
    table: pd.DataFrame
    tested: int
    notes: tuple[str, ...] = field(default=())

    @property
    def significant(self) -> pd.DataFrame:
        return self.table[self.table["significant"]]

    def to_dict(self) -> dict:
        columns = ["slice", "depth", "n", "metric", "rest", "difference", "ci_low", "ci_high", "p", "p_adjusted",
                   "significant", "too_small", "cps", "error_rate", "fpr", "fnr", "selection_rate", "mean_residual",
                   "calibration_gap", "ece", "mae", "rmse", "mean_confidence", "score"]
        frame = self.table.reindex(columns=columns)
        rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
        rows = [{c: _plain(v) for c, v in row.items()} for row in rows]
        return {"metric": self.params.metric, "alpha": self.params.alpha, "correction": self.params.correction,
                "threshold": self.counts.threshold, "min_support": self.counts.min_support,
                "max_depth": self.counts.max_depth, "attributes": list(self.counts.attributes),
                "rows": int(self.counts.total["n"]), "tested": self.tested,
                "significant": int(self.table["significant"].sum()), "notes": list(self.notes),
                "task": self.counts.task, "family": self.family, "search": self.search_dict(), "slices": rows}

    @property
    def family(self) -> int:
        """The hypotheses the correction counts: the slices tested and those a pruned search left unevaluated."""
        return self.tested + int(self.counts.search.pruned)

    def search_dict(self) -> dict:
        s = self.counts.search
        return {"top_k": s.top_k, "score": "SliceLine (α = 0.95)" if s.top_k else None, "queries": s.queries,
                "grouping_sets": s.grouping_sets, "lattice_grouping_sets": s.lattice_sets,
                "evaluated": s.evaluated, "pruned": s.pruned}


def _plain(value):
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not np.isfinite(value) else float(value)
    return value


def find_slices(counts: SliceCounts, params: SliceParams = SliceParams()) -> SliceResult:
    """Every slice's metrics, its difference from the rest with a 95% interval, the test and the correction, ranked:
    significant slices by |difference|, then the other tested slices by p, then those too small to tell.

    The correction's family is every slice at or above the support floor in the lattice searched: the slices tested,
    and, after a pruned search, the ones it left unevaluated (``counts.search.pruned``) counted as p = 1. A rejection
    set of Benjamini–Yekutieli's over that family is self-consistent for the true p-values whatever chose the
    pruned ones (Blanchard and Roquain, 2008), so the false discovery rate stays under α under any dependence; the
    pruning saves work, not multiple-testing burden."""
    metric = metric_of(counts.task, params.metric)
    t, total = counts.table, counts.total
    out = pd.DataFrame({"slice": slice_names(t, counts.attributes),
                        "depth": t["depth"].to_numpy(int), "n": t["n"].to_numpy(float)})
    for a in counts.attributes:
        out[a] = t[a].to_numpy(object)
    n = t["n"].to_numpy(float)
    out["too_small"] = n < counts.min_support
    method_of(counts.task).describe(out, t)
    if isinstance(metric, MeanMetric):
        testable, p = _mean_slices(out, t, total, params, metric)
    else:
        testable, p = _count_slices(out, t, total, params, metric, counts.task)
    out["score"] = score(t, total, counts.task, params.metric)         # SliceLine's, as the pruned search ranks
    out["p"] = p
    out["p_adjusted"] = np.nan
    family = int(testable.sum()) + int(counts.search.pruned)
    if testable.any():
        out.loc[testable, "p_adjusted"] = adjust(p[testable], params.correction, family)
    out["significant"] = out["p_adjusted"].to_numpy() < params.alpha
    out = rank(out)
    return SliceResult(params, counts, out, int(testable.sum()), counts.notes)


def _count_slices(out: pd.DataFrame, t: pd.DataFrame, total: dict, params: SliceParams, metric: CountMetric,
                  task: str):
    """A count metric: its rate, Agresti–Caffo's interval, Fisher's exact test (or MATCH on a confusion matrix at
    τ) and the CPS-smoothed estimate. Fills ``out``; returns the testable slices and their p-values."""
    num_cells, den_cells = metric.numerator, metric.denominator
    at_tau = spec_of(task).thresholded           # the confusion cells at τ: MATCH, and CPS on the cells
    x, m = summed(t, num_cells), summed(t, den_cells)
    x_rest, m_rest = summed(total, num_cells) - x, summed(total, den_cells) - m
    out["metric"], out["rest"] = rate(x, m), rate(x_rest, m_rest)
    out["difference"] = out["metric"] - out["rest"]
    out["ci_low"], out["ci_high"] = agresti_caffo(x, m, x_rest, m_rest)
    testable = ~out["too_small"].to_numpy() & (m > 0) & (m_rest > 0)
    p = np.full(len(out), np.nan)
    if params.test == "match":
        if not at_tau:
            raise DataError(f"MATCH tests a confusion-matrix metric at τ; the {metric.title} of {task} predictions "
                            "takes Fisher's exact test.")
        p[testable] = match_against_rest(t[testable], total, params.metric)
    else:
        p[testable] = fisher_two_sided(x[testable], m[testable], x_rest[testable], m_rest[testable])
    if at_tau:
        out["cps"] = cps_metric(t, total, num_cells, den_cells, params.cps_lambda)
    else:
        out["cps"] = (x + params.cps_lambda * rate(x_rest, m_rest)) / (m + params.cps_lambda)
    return testable, p


def _mean_slices(out: pd.DataFrame, t: pd.DataFrame, total: dict, params: SliceParams, metric: MeanMetric):
    """A mean metric of a per-row value v (e.g. the residual r = prediction − target, or |r|): Welch's t-test of the
    slice against the rest from the per-slice sums Σv and Σv², the interval of the difference with
    Welch–Satterthwaite's degrees of freedom, and a CPS-like estimate (λ pseudo-rows at the rest's mean)."""
    n = t["n"].to_numpy(float)
    v, q = t[metric.column].to_numpy(float), t[metric.square].to_numpy(float)
    n_rest, v_rest, q_rest = total["n"] - n, total[metric.column] - v, total[metric.square] - q
    mean, mean_rest = rate(v, n), rate(v_rest, n_rest)
    var, var_rest = sample_variance(v, q, n), sample_variance(v_rest, q_rest, n_rest)
    out["metric"], out["rest"] = mean, mean_rest
    out["difference"] = mean - mean_rest
    t_stat, df, se = welch(mean, var, n, mean_rest, var_rest, n_rest)
    testable = ~out["too_small"].to_numpy() & (n >= 2) & (n_rest >= 2) & np.isfinite(t_stat)
    p = np.full(len(out), np.nan)
    p[testable] = 2 * sps.t.sf(np.abs(t_stat[testable]), df[testable])
    half = np.full(len(out), np.nan)
    ok = np.isfinite(se) & np.isfinite(df)
    half[ok] = sps.t.ppf(0.975, df[ok]) * se[ok]
    out["ci_low"], out["ci_high"] = out["difference"] - half, out["difference"] + half
    out["cps"] = (v + params.cps_lambda * mean_rest) / (n + params.cps_lambda)
    return testable, p


def sample_variance(v, q, n) -> np.ndarray:
    """(Σv² − (Σv)²/n) / (n − 1), never below 0 (rounding)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (q - v * v / n) / (n - 1)
    return np.where(n >= 2, np.maximum(out, 0.0), np.nan)


def welch(mean, var, n, mean_rest, var_rest, n_rest):
    """Welch's t, its Welch–Satterthwaite degrees of freedom and the standard error of the difference."""
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = var / n, var_rest / n_rest
        se = np.sqrt(a + b)
        t_stat = (mean - mean_rest) / se
        df = (a + b) ** 2 / (a * a / (n - 1) + b * b / (n_rest - 1))
    bad = ~(se > 0)
    return np.where(bad, np.nan, t_stat), np.where(bad, np.nan, df), np.where(bad, np.nan, se)


def agresti_caffo(x, m, x_rest, m_rest) -> tuple[np.ndarray, np.ndarray]:
    """95% interval of p_slice − p_rest: each proportion with one success and one failure added (Agresti and Caffo,
    2000), which keeps its coverage near 95% for small slices and rates near 0 or 1."""
    p1, p2 = (x + 1) / (m + 2), (x_rest + 1) / (m_rest + 2)
    half = Z95 * np.sqrt(p1 * (1 - p1) / (m + 2) + p2 * (1 - p2) / (m_rest + 2))
    centre = p1 - p2
    bad = (m <= 0) | (m_rest <= 0)
    return np.where(bad, np.nan, centre - half), np.where(bad, np.nan, centre + half)


def match_against_rest(t: pd.DataFrame, total: dict, metric: str) -> np.ndarray:
    """MATCH ([3] §4.5, ``fairviz.sample_size.match``) of each slice's metric against the rest of the data: the
    slice's confusion matrix drawn from the rest's cells at the slice's size (weights rounded to whole rows). Exact
    (binomial or joint-ratio) for these rate metrics, so no Monte Carlo; about 3 ms a slice."""
    cells = {c: np.round(t[c].to_numpy(float)).astype(np.int64) for c in ("tp", "fn", "fp", "tn")}
    whole = {c: int(round(total[c])) for c in cells}
    out = np.full(len(t), np.nan)
    for k in range(len(t)):
        own = ConfusionCounts(*(int(cells[c][k]) for c in ("tp", "fn", "fp", "tn")))
        rest = ConfusionCounts(*(whole[c] - int(cells[c][k]) for c in ("tp", "fn", "fp", "tn")))
        found = match(own, rest, MATCH_NAMES[metric]).p_value
        out[k] = np.nan if found is None else found
    return out


def fisher_two_sided(x, m, x_rest, m_rest) -> np.ndarray:
    """Fisher's exact test, two-sided as min(1, 2·min tail), of x of m against x_rest of m_rest (weights rounded to
    whole rows)."""
    x, m = np.round(x), np.round(m)
    x_rest, m_rest = np.round(x_rest), np.round(m_rest)
    population, successes = m + m_rest, x + x_rest
    lower = sps.hypergeom.cdf(x, population, successes, m)
    upper = sps.hypergeom.sf(x - 1, population, successes, m)
    return np.minimum(1.0, 2 * np.minimum(lower, upper))


def adjust(p: np.ndarray, correction: str, family: int | None = None) -> np.ndarray:
    """Benjamini–Hochberg step-up adjusted p-values; Benjamini–Yekutieli multiplies them by Σ 1/i. ``family``: the
    number of hypotheses when more than ``p`` holds (the rest count as p = 1: they are never rejected)."""
    p = np.asarray(p, float)
    k = max(p.size, int(family or 0))
    order = np.argsort(p)
    scale = k / np.arange(1, p.size + 1)
    if correction == "by":
        scale = scale * np.sum(1.0 / np.arange(1, k + 1))
    stepped = np.minimum.accumulate((p[order] * scale)[::-1])[::-1]
    out = np.empty(p.size)
    out[order] = np.minimum(stepped, 1.0)
    return out


def cps_metric(t: pd.DataFrame, total: dict, num_cells, den_cells, lam: float) -> np.ndarray:
    """The metric after Cross-Prior Smoothing ([3] Algorithm 1) towards the rest's cells: a small slice borrows λ
    pseudo-rows of the rest's error pattern; a large one is barely moved."""
    own = Cells(*(t[c].to_numpy(float) for c in CELL_ORDER))
    rest = [total[c] - t[c].to_numpy(float) for c in CELL_ORDER]
    rest_n = sum(rest)
    probs = [np.divide(r, rest_n, out=np.zeros_like(r), where=rest_n > 0) for r in rest]
    smooth = cps_cells(own, probs, lam)
    cells = dict(zip(CELL_ORDER, smooth))
    return rate(sum(cells[c] for c in num_cells), sum(cells[c] for c in den_cells))


def rank(out: pd.DataFrame) -> pd.DataFrame:
    group = np.where(out["significant"], 0, np.where(out["p"].notna(), 1, 2))
    key = np.where(group == 0, -out["difference"].abs().fillna(0), np.where(group == 1, out["p"].fillna(1), -out["n"]))
    out = out.assign(_g=group, _k=key, _n=-out["n"]).sort_values(["_g", "_k", "_n", "slice"], kind="stable")
    return out.drop(columns=["_g", "_k", "_n"]).reset_index(drop=True)
