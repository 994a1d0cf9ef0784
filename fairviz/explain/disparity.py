"""Is an explanation method's quality different for the two groups? (paper §4.4, App. D; spec §3.3)

For every (method, metric) the per-sentence scores of group i (S_i) and group j (S_j) are compared with a
two-sided Mann–Whitney U test (unpaired, as in the paper, even for twins) and Cohen's d
= (mean_i − mean_j) / sqrt((var_i + var_j) / 2) with sample variances (ddof = 1) and the unweighted average of the
two variances (not the n-weighted pooled SD). d > 0 means group i scores higher. A cell is "significant" when
p ≤ α and "considerable" when also |d| ≥ 0.2. Extensions, labelled as such: Benjamini–Hochberg adjusted p over
the method × metric grid (off by default, as in the paper), a percentile-bootstrap CI of d, and for twin data a
paired Wilcoxon signed-rank p on the within-pair differences.

With several runs the boxplots and the tests pool the runs (as the paper's figures do) and ``runs_significant``
counts the runs whose own test has p ≤ α (the paper's Tables 3–5).

No torch here: the shipped results are analysed without loading any model library.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from fairviz.core.stats import Interval, benjamini_hochberg, percentile_interval
from fairviz.explain import DIRECTIONS, METHOD_NAMES, METRICS, SHORT_METRIC_NAMES
from fairviz.core.serialize import clean
from fairviz.explain.results import ExplainResult

CONSIDERABLE_D = 0.2
ASYMMETRY = 0.3            # gap in mean p(gold) without evidence that counts as a default-class asymmetry
NO_EVIDENCE = {            # instance column → (how the evidence is removed, what removes it that way)
    "p_gold_empty": ("every word deleted", "AOPC comprehensiveness and sufficiency"),
    "p_gold_masked": ("every word replaced by [MASK]", "LIME and SHAP"),
    "p_gold_zeroed": ("every word embedding set to zero", "the soft metrics"),
    "p_gold_pad": ("the IG baseline [CLS] [PAD]… [SEP]", "IG and IGxI"),
}


@dataclass(frozen=True)
class Cell:
    method: str
    metric: str
    group_i: str
    group_j: str
    n_i: int
    n_j: int
    undefined_i: int                 # sentences whose metric is undefined (NaN), left out of the test
    undefined_j: int
    median_i: float
    median_j: float
    mean_i: float
    mean_j: float
    p_value: float                   # two-sided Mann–Whitney U
    p_adjusted: float                # Benjamini–Hochberg over the grid (used for significance only with "bh")
    cohens_d: float                  # i minus j
    ci: Interval                     # bootstrap percentile CI of d
    significant: bool                # p (or adjusted p) ≤ α
    considerable: bool               # significant and |d| ≥ 0.2
    runs: int
    runs_significant: int            # runs whose own test gives p ≤ α (paper Tables 3–5)
    p_paired: float | None = None    # Wilcoxon signed-rank on twin differences (paired data only)

    @property
    def higher(self) -> str | None:
        if not np.isfinite(self.cohens_d) or self.cohens_d == 0:
            return None
        return self.group_i if self.cohens_d > 0 else self.group_j

    @property
    def better(self) -> str | None:
        """The group whose explanations score better on this metric (direction from spec §2.9)."""
        higher = self.higher
        if higher is None:
            return None
        return higher if DIRECTIONS[self.metric] > 0 else (self.group_j if higher == self.group_i else self.group_i)

    def to_dict(self) -> dict:
        return {"method": self.method, "metric": self.metric,
                "n": {self.group_i: self.n_i, self.group_j: self.n_j},
                "undefined": {self.group_i: self.undefined_i, self.group_j: self.undefined_j},
                "median": {self.group_i: _finite(self.median_i), self.group_j: _finite(self.median_j)},
                "mean": {self.group_i: _finite(self.mean_i), self.group_j: _finite(self.mean_j)},
                "p_value": _finite(self.p_value), "p_adjusted": _finite(self.p_adjusted),
                "cohens_d": _finite(self.cohens_d), "ci": self.ci.to_list(),
                "significant": self.significant, "considerable": self.considerable,
                "higher": self.higher, "better": self.better,
                "runs": self.runs, "runs_significant": self.runs_significant,
                "p_paired_wilcoxon": _finite(self.p_paired)}


@dataclass(frozen=True)
class DisparityReport:
    cells: tuple[Cell, ...]
    groups: tuple[str, str]
    alpha: float
    correction: str                  # "none" or "bh"
    resamples: int
    seed: int

    def cell(self, method: str, metric: str) -> Cell | None:
        return next((c for c in self.cells if c.method == method and c.metric == metric), None)

    @property
    def methods(self) -> list[str]:
        present = {c.method for c in self.cells}
        return [m for m in METHOD_NAMES if m in present]

    @property
    def metrics(self) -> list[str]:
        present = {c.metric for c in self.cells}
        return [m for m in METRICS if m in present]

    def table(self) -> pd.DataFrame:
        """One row per cell, the page's and the report's test table."""
        gi, gj = self.groups
        return pd.DataFrame([{
            "method": METHOD_NAMES[c.method], "metric": METRICS[c.metric],
            f"n {gi}": c.n_i, f"n {gj}": c.n_j, f"median {gi}": c.median_i, f"median {gj}": c.median_j,
            "p (Mann–Whitney)": c.p_value, "p (BH)": c.p_adjusted,
            f"Cohen's d ({gi} − {gj})": c.cohens_d, "d 95% CI": c.ci, "significant": c.significant,
            "|d| ≥ 0.2": c.considerable, "better": c.better or "—",
            "runs significant": f"{c.runs_significant}/{c.runs}",
            "p (paired Wilcoxon)": c.p_paired if c.p_paired is not None else np.nan,
            "undefined": c.undefined_i + c.undefined_j} for c in self.cells])

    def to_dict(self) -> dict:
        return {"groups": list(self.groups), "alpha": self.alpha, "correction": self.correction,
                "bootstrap_resamples": self.resamples, "seed": self.seed, "sign": f"{self.groups[0]} minus {self.groups[1]}",
                "cells": [c.to_dict() for c in self.cells]}


# ----------------------------------------------------------------------------------------------- statistics

def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann–Whitney p (scipy, asymptotic with tie and continuity corrections for larger samples).

    NaNs are dropped first; an empty group gives NaN; fewer than two distinct values overall gives p = 1.
    """
    a, b = _finite_values(a), _finite_values(b)
    if a.size == 0 or b.size == 0:
        return float("nan")
    if np.unique(np.concatenate([a, b])).size < 2:
        return 1.0
    return float(sps.mannwhitneyu(a, b, alternative="two-sided", method="auto").pvalue)


def cohens_d(a: np.ndarray, b: np.ndarray) -> float:
    """(mean_a − mean_b) / sqrt((var_a + var_b) / 2), ddof = 1.

    Both groups constant: 0 when they are equal, else undefined (NaN: the groups are perfectly separated and no
    standardised size exists; the spec's "d = 0 when the denominator is 0" would hide that). NaN if n < 2.
    """
    a, b = _finite_values(a), _finite_values(b)
    if a.size < 2 or b.size < 2:
        return float("nan")
    diff = a.mean() - b.mean()
    spread = np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    if spread == 0:
        return 0.0 if diff == 0 else float("nan")
    return float(diff / spread)


def cohens_d_interval(a: np.ndarray, b: np.ndarray, resamples: int = 1000, seed: int = 0,
                      level: float = 0.95) -> Interval:
    """Percentile bootstrap CI of d, resampling each group with replacement (sizes kept), vectorised."""
    a, b = _finite_values(a), _finite_values(b)
    if a.size < 2 or b.size < 2 or resamples <= 0:
        return Interval(np.nan, np.nan, level, 0)
    rng = np.random.default_rng(seed)
    ra = a[rng.integers(0, a.size, (resamples, a.size))]
    rb = b[rng.integers(0, b.size, (resamples, b.size))]
    spread = np.sqrt((ra.var(axis=1, ddof=1) + rb.var(axis=1, ddof=1)) / 2)
    diff = ra.mean(axis=1) - rb.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(spread > 0, diff / spread, np.where(diff == 0, 0.0, np.nan))
    return percentile_interval(d, level)


def paired_wilcoxon_p(differences: np.ndarray) -> float:
    diffs = _finite_values(differences)
    if diffs.size == 0:
        return float("nan")
    if not np.any(diffs):
        return 1.0
    return float(sps.wilcoxon(diffs, zero_method="wilcox", alternative="two-sided").pvalue)


# ----------------------------------------------------------------------------------------------- the grid

def compare(result: ExplainResult, methods: list[str] | None = None, metrics: list[str] | None = None,
            alpha: float = 0.05, correction: str = "none", resamples: int = 1000, seed: int = 0,
            groups: tuple[str, str] | None = None) -> DisparityReport:
    """Test every (method, metric) cell for a difference between the two groups."""
    if correction not in ("none", "bh"):
        raise ValueError("correction must be 'none' or 'bh'")
    gi, gj = groups or result.groups
    methods = [m for m in (methods or result.methods) if m in set(result.scores["method"])]
    metrics = [m for m in (metrics or result.metrics) if m in result.scores.columns]
    scores = result.scores
    paired = bool(result.meta.get("dataset", {}).get("paired"))
    runs = sorted(scores["run"].unique())
    raw, run_p = [], []
    for method in methods:
        block = scores[scores["method"] == method]
        for metric in metrics:
            a_all = block.loc[block["group"] == gi, metric].to_numpy(float)
            b_all = block.loc[block["group"] == gj, metric].to_numpy(float)
            run_p.append([mann_whitney_p(block.loc[(block["run"] == r) & (block["group"] == gi), metric].to_numpy(float),
                                         block.loc[(block["run"] == r) & (block["group"] == gj), metric].to_numpy(float))
                          for r in runs])
            raw.append((method, metric, a_all, b_all, mann_whitney_p(a_all, b_all),
                        _paired_p(block, metric, gi, gj) if paired else None))
    p_values = np.array([r[4] for r in raw], dtype=float)
    adjusted = benjamini_hochberg(p_values)            # always reported; decides significance only with "bh"
    run_p = np.array(run_p, dtype=float).reshape(len(raw), len(runs))
    if correction == "bh":                                   # each run's grid is corrected on its own
        run_p = np.column_stack([benjamini_hochberg(run_p[:, r]) for r in range(len(runs))]) if len(raw) else run_p
    per_run_counts = (run_p <= alpha).sum(axis=1)
    cells = []
    for k, (method, metric, a, b, p, p_pair) in enumerate(raw):
        per_run = int(per_run_counts[k])
        d = cohens_d(a, b)
        p_used = adjusted[k] if correction == "bh" else p
        significant = bool(np.isfinite(p_used) and p_used <= alpha)
        cells.append(Cell(
            method=method, metric=metric, group_i=gi, group_j=gj,
            n_i=int(np.isfinite(a).sum()), n_j=int(np.isfinite(b).sum()),
            undefined_i=int((~np.isfinite(a)).sum()), undefined_j=int((~np.isfinite(b)).sum()),
            median_i=_median(a), median_j=_median(b), mean_i=_mean(a), mean_j=_mean(b),
            p_value=p, p_adjusted=float(adjusted[k]), cohens_d=d,
            ci=cohens_d_interval(a, b, resamples, seed + k),
            significant=significant, considerable=significant and np.isfinite(d) and abs(d) >= CONSIDERABLE_D,
            runs=len(runs), runs_significant=per_run, p_paired=p_pair))
    return DisparityReport(tuple(cells), (gi, gj), alpha, correction, resamples, seed)


def _paired_p(block: pd.DataFrame, metric: str, gi: str, gj: str) -> float | None:
    wide = block.pivot_table(index=["run", "pair_id"], columns="group", values=metric, aggfunc="first")
    if gi not in wide.columns or gj not in wide.columns:
        return None
    return paired_wilcoxon_p((wide[gi] - wide[gj]).to_numpy(float))


def _finite_values(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x[np.isfinite(x)]


def _median(x) -> float:
    x = _finite_values(x)
    return float(np.median(x)) if x.size else float("nan")


def _mean(x) -> float:
    x = _finite_values(x)
    return float(x.mean()) if x.size else float("nan")


def _finite(x):
    return float(x) if x is not None and np.isfinite(x) else None


# ----------------------------------------------------------------------------------------------- readings

def model_warnings(result: ExplainResult, run: int | None = None) -> list[tuple[str, str]]:
    """(kind, text) warnings about the *model* that must be read before blaming the explainers (spec §5.5).

    - the label is (or depends on) gender: a model that solves the task must use gender;
    - twin (or gender-flipped) predictions differ: the model itself treats the groups differently;
    - default-class asymmetry: the all-[MASK] input already gives one group's gold label a high probability,
      so that group's explanations have little evidence to find (comprehensiveness near 0 by construction).
    """
    out = []
    gi, gj = result.groups
    behaviours = result.meta.get("runs", {})
    keys = [str(run)] if run is not None and str(run) in behaviours else list(behaviours)
    if not keys:
        return out
    b = behaviours[keys[0]]["behaviour"]
    apd = [behaviours[k]["behaviour"].get("apd") for k in keys]
    apd = [a for a in apd if a is not None]
    flips = [behaviours[k]["behaviour"].get("twin_prediction_differs_same_label") for k in keys]
    flips = [f for f in flips if f is not None]
    if b.get("label_depends_on_group"):
        out.append(("warn", "In this data set the label is gender or depends on it, so a model that solves the task "
                            "must use gender: twin predictions differ by design. Disparities below mix the model's "
                            "decision rule with the explainers' behaviour; compare every method with the Random row."))
    elif apd and (max(apd) >= 0.05 or (flips and max(flips) > 0)):
        how = "twins" if b.get("counterfactual") == "twins" else "the same texts with the gender word flipped"
        out.append(("bad", f"The model itself uses gender: its predictions for {how} differ (mean |Δp| = "
                           f"{max(apd):.3f}" + (f", {100 * max(flips):.0f}% of them change class" if flips else "")
                           + "). Part of any explanation disparity below is model disparity, not explainer "
                             "disparity."))
    elif apd:
        out.append(("good", f"The model barely reacts to gender: predictions for twins / gender-flipped texts differ "
                            f"by {max(apd):.4f} on average, so disparities below come from the explainers."))
    inst = result.instances if run is None else result.instances[result.instances["run"] == run]
    lines = []
    for column, (how, used_by) in NO_EVIDENCE.items():
        if column not in inst.columns:
            continue
        means = inst.groupby(["run", "group"])[column].mean().unstack("group")
        if gi not in means or gj not in means:
            continue
        gap = means[gi] - means[gj]
        skewed = gap[gap.abs() >= ASYMMETRY]
        if skewed.empty:
            continue
        favoured = [gi if g > 0 else gj for g in skewed]
        first = skewed.index[0]
        counts = ", ".join(f"{g} in {favoured.count(g)}" for g in (gi, gj) if favoured.count(g))
        lines.append(f"- {how} (used by {used_by}): the fallback is {counts} of {len(gap)} run(s); e.g. run {first}: "
                     f"p(gold) {means.loc[first, gi]:.2f} for {gi} vs {means.loc[first, gj]:.2f} for {gj}")
    if lines:
        out.append(("warn", "**Default-class asymmetry** (found by this tool's checks; not in the paper): with the evidence removed, the model falls back "
                            "to one class, so sentences whose gold label is that class lose little when their "
                            "important tokens are removed, and their comprehensiveness-type scores are small by "
                            "construction — a model effect, not an explainer one. Which class is the fallback "
                            "depends on how the evidence is removed (and can change between runs, which the pooled "
                            "test then averages):\n" + "\n".join(lines)))
    return out


def heatmap_values(report: DisparityReport) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """(methods, metrics, d where significant else NaN, runs_significant) for the disparity heatmap."""
    methods, metrics = report.methods, report.metrics
    d = np.full((len(methods), len(metrics)), np.nan)
    counts = np.zeros((len(methods), len(metrics)), dtype=int)
    for i, m in enumerate(methods):
        for j, k in enumerate(metrics):
            c = report.cell(m, k)
            if c is not None:
                counts[i, j] = c.runs_significant if c.runs > 1 else int(c.significant)
                if c.significant:
                    d[i, j] = c.cohens_d
    return [METHOD_NAMES[m] for m in methods], [SHORT_METRIC_NAMES[k] for k in metrics], d, counts


def disparity_json(result: ExplainResult, report: DisparityReport, warnings: list[str]) -> dict:
    """The explanation-disparity JSON that the CLI, the audit section and the page's download all write: per
    method × metric n per group, medians, p_value, p_adjusted, cohens_d, ci (and more), plus context."""
    tests = {}
    for cell in report.cells:
        tests.setdefault(cell.method, {})[cell.metric] = cell.to_dict()
    meta = result.meta
    return clean({
        "dataset": {k: meta["dataset"][k] for k in ("key", "title", "groups", "label_names", "paired", "n_explained")
                    if k in meta["dataset"]},
        "model": {k: meta["model"].get(k) for k in ("kind", "path", "description", "n_parameters", "device")},
        "settings": meta.get("settings"),
        "model_behaviour": {run: v["behaviour"] for run, v in meta.get("runs", {}).items()},
        "warnings": warnings,
        "groups": list(report.groups), "sign": f"{report.groups[0]} minus {report.groups[1]}",
        "alpha": report.alpha, "correction": report.correction, "bootstrap_resamples": report.resamples,
        "tests": tests,
    })
