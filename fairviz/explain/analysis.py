"""Is an explanation method's quality different for the two groups? ([4] §4.4, App. D)

``compare`` tests every (method, metric) cell of a result: the per-sentence scores of group i against group j
(``fairviz.explain.disparity``). A cell is "significant" when p ≤ α and "considerable" when also |d| ≥ 0.2.
Benjamini–Hochberg adjusted p over the method × metric grid is always reported and decides significance only when
asked (off by default, as in the paper).

With several runs the boxplots and the tests pool the runs (as the paper's figures do) and ``runs_significant``
counts the runs whose own test has p ≤ α (the paper's Tables 3–5). No torch here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairviz.core.stats import benjamini_hochberg
from fairviz.explain.disparity import (cohens_d, cohens_d_interval, finite_values, mann_whitney_p,
                                       paired_wilcoxon_p)
from fairviz.explain.registry import METHOD_NAMES, METRICS
from fairviz.explain.results import Cell, DisparityAudit, ExplainResult

CONSIDERABLE_D = 0.2


def compare(result: ExplainResult, methods: list[str] | None = None, metrics: list[str] | None = None,
            alpha: float = 0.05, correction: str = "none", resamples: int = 1000, seed: int = 0,
            groups: tuple[str, str] | None = None) -> DisparityAudit:
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
    return DisparityAudit(tuple(cells), (gi, gj), alpha, correction, resamples, seed)


def _paired_p(block: pd.DataFrame, metric: str, gi: str, gj: str) -> float | None:
    wide = block.pivot_table(index=["run", "pair_id"], columns="group", values=metric, aggfunc="first")
    if gi not in wide.columns or gj not in wide.columns:
        return None
    return paired_wilcoxon_p((wide[gi] - wide[gj]).to_numpy(float))


def _median(x) -> float:
    x = finite_values(x)
    return float(np.median(x)) if x.size else float("nan")


def _mean(x) -> float:
    x = finite_values(x)
    return float(x.mean()) if x.size else float("nan")


def heatmap_values(report: DisparityAudit) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
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
    return [METHOD_NAMES[m] for m in methods], [METRICS[k].short for k in metrics], d, counts
