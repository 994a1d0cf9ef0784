"""The MATCH test ([3] §4.5): is a group's score what the reference's error pattern would give at the group's own
size? With the reference's cell probabilities ``p_ref`` a group of n rows has ``CM ~ Multinomial(n, p_ref)``; the
observed score's place in that distribution, ``P(S ≤ S_obs)``, is its percentile.

MCC, F1 and PT are enumerated exactly over all C(n+3, 3) matrices for small n, else drawn by seeded Monte Carlo;
OFI against the reference redraws both the group and the reference from ``p_ref`` at their own sizes (so the
reference's own noise counts too). p-values are two-sided, ``min(1, 2·min(P(S ≤ s), P(S ≥ s)))`` ([3] gives only
the percentile), and Benjamini–Hochberg adjusts them across every group and metric of the table.
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

from fairviz.core import stats
from fairviz.core.confusion_metrics import CELL_ORDER, METRICS as CM_METRICS, Cells, probabilities
from fairviz.core.counts import ConfusionCounts
from fairviz.sample_size.holes import configurations, multinomial_log_weights, undefined_probability
from fairviz.sample_size.nulls import (BenefitNull, BinomialNull, EmpiricalNull, JRMNull, Null, peizer_pratt_cdf)
from fairviz.sample_size.results import MATCH_METRICS, MatchAudit, MatchParams, MatchResult, on_the_benefit, scalar

Progress = Callable[[float, str], None]


def monte_carlo_draws(n: int, reference: ConfusionCounts, params: MatchParams, stream: int = 0) -> Cells:
    """``params.draws`` matrices of n rows from the reference's cells. The generator is seeded by (seed, stream, n,
    reference counts), so the same question always gets the same draws: the plotted null and the table agree.
    A small cache lets MCC, F1 and PT of one group share the draws."""
    key = (int(params.seed), stream, int(n), int(params.draws),
           *(int(round(getattr(reference, f))) for f in CELL_ORDER))
    return _draws(key)


@lru_cache(maxsize=4)
def _draws(key: tuple) -> Cells:
    seed, stream, n, draws, *cells = key
    rng = np.random.default_rng([seed, stream, n, *cells])
    counts = np.array(cells, dtype=float)
    sample = Cells.from_draws(rng.multinomial(n, counts / counts.sum(), size=draws))
    for array in sample:
        array.setflags(write=False)
    return sample


def null_distribution(metric: str, n: int, reference: ConfusionCounts, params: MatchParams = MatchParams()) -> Null:
    """The exact (or Monte Carlo) distribution of ``metric`` for n rows drawn from the reference's cells.

    For ``"ofi"`` it is OFI(group, reference) with both redrawn from the reference at their own sizes."""
    if metric == "ofi":
        own, ref = monte_carlo_draws(n, reference, params, 1), monte_carlo_draws(reference.n, reference, params, 2)
        return EmpiricalNull((own.fp - own.fn) / n - (ref.fp - ref.fn) / reference.n, None, "Monte Carlo", 0.0)
    p = dict(zip(CELL_ORDER, probabilities(reference)))
    spec = CM_METRICS[metric]
    if spec.family == "binomial":
        return BinomialNull(n, p[spec.cells[0]] + p[spec.cells[1]])
    if spec.family == "benefit":
        return BenefitNull(n, p["fp"], p["fn"])
    if spec.family == "jrm":
        pair = p[spec.cells[0]] + p[spec.cells[1]]
        return JRMNull(n, pair, p[spec.cells[0]] / pair if pair > 0 else 0.0, params.condition_on_defined)
    probs = np.array([p[c] for c in CELL_ORDER])
    exact_undefined = undefined_probability(metric, n, probs)
    if n <= params.enumeration_limit:
        cells = configurations(n)
        weights = np.exp(multinomial_log_weights(cells, probs))
        return EmpiricalNull(spec(cells), weights, "exact enumeration", exact_undefined)
    return EmpiricalNull(spec(monte_carlo_draws(n, reference, params)), None, "Monte Carlo", exact_undefined)


def match(counts: ConfusionCounts, reference: ConfusionCounts, metric: str, params: MatchParams = MatchParams(),
          group: str = "") -> MatchResult:
    """MATCH for one group and one metric against a reference's confusion counts (integers)."""
    n = int(counts.n)
    if metric == "ofi":
        return _match_ofi(counts, reference, params, group)
    spec = CM_METRICS[metric]
    score = scalar(spec(Cells.of(counts)))
    ref_score = scalar(spec(Cells.of(reference)))
    null = null_distribution(metric, n, reference, params)
    undefined = null.undefined
    if score is None:
        return MatchResult(group, metric, n, None, ref_score, None, None, None, None, undefined, null.method,
                           note=f"undefined for this group: {spec.undefined_when}")
    if (spec.family == "jrm" and null.defined <= 0) or (isinstance(null, EmpiricalNull) and not null.size):
        return MatchResult(group, metric, n, score, ref_score, None, None, None, None, undefined, null.method,
                           note="the reference never defines this metric at this size")
    method, bound = null.method, None
    lower, upper = _exact_tails(null, score)
    exact_lower = lower
    if params.method == "normal" and hasattr(null, "normal_cdf"):
        if not isinstance(null, BinomialNull) or null.normal_valid():
            lower, upper = float(null.normal_cdf(score)[0]), float(null.normal_sf(score)[0])
            method, bound = "normal (continuity-corrected)", null.berry_esseen()
        else:
            method += " (normal not valid: n·p or n·q below 5)"
    elif params.method == "peizer_pratt" and isinstance(null, BinomialNull):
        k = int(round(score * n))
        pp_lower, pp_upper = peizer_pratt_cdf(k, n, null.p), peizer_pratt_cdf(k - 1, n, null.p)
        if pp_lower is not None and pp_upper is not None:
            lower, upper, method = pp_lower, 1.0 - pp_upper, "Peizer–Pratt"
        else:
            method += " (Peizer–Pratt needs min(x + 1, n − x) ≥ 2)"
    cdf = null.share_at_most(score) if isinstance(null, EmpiricalNull) else exact_lower
    p_two = min(1.0, 2 * min(lower, upper))
    return MatchResult(group, metric, n, score, ref_score, cdf, lower, upper, p_two, undefined, method, bound)


def _exact_tails(null: Null, score: float) -> tuple[float, float]:
    if isinstance(null, EmpiricalNull):
        return null.p_values(score)
    return float(null.cdf(score)[0]), float(null.sf(score)[0])


def _match_ofi(counts, reference, params, group) -> MatchResult:
    """OFI(group, reference) = 𝓑_group − 𝓑_reference against both redrawn from the reference at their sizes."""
    n = int(counts.n)
    score = (counts.fp - counts.fn) / n - (reference.fp - reference.fn) / reference.n
    null = null_distribution("ofi", n, reference, params)
    lower, upper = null.p_values(score)
    return MatchResult(group, "ofi", n, float(score), 0.0, null.share_at_most(score), lower, upper,
                       min(1.0, 2 * min(lower, upper)), 0.0, "Monte Carlo (two-sample)")


def reference_counts(names: Sequence[str], counts: Sequence[ConfusionCounts],
                     reference: str) -> tuple[dict, str]:
    """The reference each group is compared with: the complement, the whole population, or one named group."""
    total = ConfusionCounts(*(sum(getattr(c, f) for c in counts) for f in CELL_ORDER))
    if reference == "complement":
        refs = {name: ConfusionCounts(*(getattr(total, f) - getattr(c, f) for f in CELL_ORDER))
                for name, c in zip(names, counts)}
        return refs, "all other rows"
    if reference == "population":
        return {name: total for name in names}, "the whole population"
    if reference not in names:
        raise ValueError(f"the reference group '{reference}' is not one of the groups ({', '.join(names)})")
    ref = counts[list(names).index(reference)]
    return {name: (None if name == reference else ref) for name in names}, f"group '{reference}'"


def match_groups(attribute: str, names: Sequence[str], counts: Sequence[ConfusionCounts],
                 params: MatchParams = MatchParams(), progress: Progress | None = None,
                 benefit: str = "positive") -> MatchAudit:
    """MATCH for every group × metric, with Benjamini–Hochberg across the whole table. ``counts`` on the label;
    𝓑 and OFI are taken on the ``benefit`` prediction."""
    report = progress or (lambda *_: None)
    names = tuple(names)
    refs, label = reference_counts(names, counts, params.reference)
    unknown = [m for m in params.metrics if m not in MATCH_METRICS]
    if unknown:
        raise ValueError(f"unknown MATCH metric(s): {', '.join(unknown)}")
    results = []
    for g, (name, own) in enumerate(zip(names, counts)):
        report(g / max(len(names), 1), f"MATCH for {name}")
        ref = refs[name]
        if ref is None or ref.n == 0 or own.n == 0:
            why = "it is the reference" if ref is None else "the reference is empty" if own.n else "the group is empty"
            results += [MatchResult(name, m, int(own.n), None, None, None, None, None, None, None, "—", note=why)
                        for m in params.metrics]
            continue
        for metric in params.metrics:
            results.append(match(on_the_benefit(own, metric, benefit), on_the_benefit(ref, metric, benefit), metric,
                                 params, name))
    adjusted = stats.benjamini_hochberg([np.nan if r.p_value is None else r.p_value for r in results])
    results = [replace(r, p_adjusted=None if not np.isfinite(a) else float(a)) for r, a in zip(results, adjusted)]
    report(1.0, "Done")
    return MatchAudit(attribute, params, names, dict(zip(names, counts)), refs, results, label, benefit)


