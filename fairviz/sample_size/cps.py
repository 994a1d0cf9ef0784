"""Cross-Prior Smoothing ([3] Algorithm 1): a small group's counts borrow λ pseudo-rows of the reference's error
pattern; and the exact expected error of raw, additive-ε and CPS metrics for small samples of a group."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from fairviz.core.confusion_metrics import CELL_ORDER, METRICS as CM_METRICS, Cells, probabilities
from fairviz.core.counts import ConfusionCounts
from fairviz.sample_size.holes import configurations, multinomial_log_weights
from fairviz.sample_size.match import reference_counts
from fairviz.sample_size.results import CPSRow, ErrorCurves, MatchAudit, on_the_benefit, scalar

CURVE_LIMIT = 150               # expected-error curves enumerate up to n = 150 (585,276 matrices)


def cps_cells(cells: Cells, reference_probs: np.ndarray, lam: float = 5.0) -> Cells:
    """Algorithm 1 vectorised: α = CM + λ·p_ref, CM_smooth = α/Σα · n (real-valued, same total)."""
    if lam < 0:
        raise ValueError("the prior scale λ must be ≥ 0")
    n = cells.n
    alpha = [np.asarray(c, float) + lam * p for c, p in zip(cells, reference_probs)]
    total = sum(alpha)
    return Cells(*(divide_or_zero(a * n, total) for a in alpha))


def divide_or_zero(a, b):
    out = np.zeros(np.broadcast(a, b).shape)
    np.divide(a, b, out=out, where=np.asarray(b) != 0)
    return out


def cps(counts: ConfusionCounts, reference: ConfusionCounts, lam: float = 5.0) -> ConfusionCounts:
    """Cross-Prior Smoothing of one group's counts towards a reference (λ = 5 by default; λ = 0: unchanged)."""
    smooth = cps_cells(Cells.of(counts), probabilities(reference), lam)
    return ConfusionCounts(*(float(np.ravel(getattr(smooth, f))[0]) for f in CELL_ORDER))


def cps_groups(names: Sequence[str], counts: Sequence[ConfusionCounts], lam: float = 5.0,
               reference: str = "complement", metrics: Sequence[str] = tuple(CM_METRICS),
               benefit: str = "positive") -> list[CPSRow]:
    """Each group's counts (on the label) smoothed, and its metrics raw and smoothed (𝓑 on the ``benefit``: the
    flip commutes with smoothing, so 𝓑 of the flipped smoothed counts is the smoothed 𝓑 on the benefit)."""
    refs, _ = reference_counts(names, counts, reference)
    rows = []
    for name, own in zip(names, counts):
        ref = refs[name]
        smooth = own if ref is None or ref.n == 0 else cps(own, ref, lam)
        rows.append(CPSRow(name, int(own.n), own, smooth,
                           {m: own_value(on_the_benefit(own, m, benefit), m) for m in metrics},
                           {m: own_value(on_the_benefit(smooth, m, benefit), m) for m in metrics}))
    return rows


def expected_errors(counts: ConfusionCounts, reference: ConfusionCounts, metrics: Sequence[str],
                    sizes: Sequence[int], lams: Sequence[float] = (5.0,),
                    epsilons: Sequence[float] = (1.0,)) -> dict[str, ErrorCurves]:
    """Enumerate every matrix of n rows (n ≤ 150), weighted by the group's own multinomial, and average the
    squared error of the raw metric, additive ε-smoothing and CPS(λ) against the full group's metric."""
    sizes = np.array(sorted({int(s) for s in sizes}), dtype=int)
    if sizes.size == 0 or sizes[0] < 1 or sizes[-1] > CURVE_LIMIT:
        raise ValueError(f"sample sizes must lie in 1…{CURVE_LIMIT}")
    p_group, p_ref = probabilities(counts), probabilities(reference)
    targets = {m: scalar(CM_METRICS[m](Cells.of(counts))) for m in metrics}
    labels = ["raw"] + [f"ε = {e:g}" for e in epsilons] + [f"CPS λ = {lam:g}" for lam in lams]
    mse = {m: {label: np.full(sizes.size, np.nan) for label in labels} for m in metrics}
    mass = {m: {label: np.full(sizes.size, np.nan) for label in labels} for m in metrics}
    for s, n in enumerate(sizes):
        cells = configurations(int(n))
        weights = np.exp(multinomial_log_weights(cells, p_group))
        variants = {"raw": cells}
        variants.update({f"ε = {e:g}": Cells(*(np.asarray(c, float) + e for c in cells)) for e in epsilons})
        variants.update({f"CPS λ = {lam:g}": cps_cells(cells, p_ref, lam) for lam in lams})
        for label, variant in variants.items():
            for m in metrics:
                if targets[m] is None:
                    continue
                values = CM_METRICS[m](variant)
                ok = np.isfinite(values)
                defined = weights[ok].sum()
                mass[m][label][s] = defined
                if defined > 0:
                    mse[m][label][s] = float(weights[ok] @ (values[ok] - targets[m]) ** 2 / defined)
    return {m: ErrorCurves(m, sizes, targets[m] if targets[m] is not None else float("nan"), mse[m], mass[m])
            for m in metrics}


def own_value(counts: ConfusionCounts, metric: str) -> float | None:
    """A group's own value of a metric (the target its small samples aim at); None when undefined."""
    return scalar(CM_METRICS[metric](Cells.of(counts)))


def population_counts(audit: MatchAudit) -> ConfusionCounts:
    """Every group's counts added up."""
    return ConfusionCounts(*(sum(getattr(audit.counts[g], f) for g in audit.names) for f in CELL_ORDER))


def curve_reference(audit: MatchAudit, group: str) -> ConfusionCounts:
    """What a group's samples are smoothed towards: its reference, or all other rows for the reference itself."""
    reference = audit.references[group]
    if reference is not None:
        return reference
    counts, total = audit.counts[group], population_counts(audit)
    return ConfusionCounts(*(getattr(total, f) - getattr(counts, f) for f in CELL_ORDER))
