"""Sample-size significance ([3] ch. 4), composed once: count each group on the label (𝓑 and OFI flip to the
benefit where it is the negative prediction, so FPR here is the FPR of every other page), run MATCH for
every group × metric and smooth every group's counts with CPS. The page, the CLI and the HTML report all call this.

The techniques live beside it: ``match`` (the test), ``nulls`` (its null distributions), ``cps`` (Cross-Prior
Smoothing and expected-error curves), ``jaggedness`` (subsample bands), ``holes`` (undefined metrics).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from fairviz.core.counts import ConfusionCounts
from fairviz.data import Predictions
from fairviz.data.groups import group_counts
from fairviz.sample_size.cps import cps_groups
from fairviz.sample_size.match import match_groups
from fairviz.sample_size.results import MatchAudit, MatchParams, SignificanceAudit, SignificanceParams

Progress = Callable[[float, str], None]


def analyse(pred: Predictions, attribute: str | None = None, params: SignificanceParams = SignificanceParams(),
            progress: Progress | None = None) -> SignificanceAudit:
    """MATCH and CPS for every group of ``attribute``."""
    view = pred.groups(attribute)
    counts = group_counts(pred, view, params.threshold)
    return from_counts(view.attribute, view.names, counts, params, progress)


def from_counts(attribute: str, names: Sequence[str], counts: Sequence[ConfusionCounts],
                params: SignificanceParams = SignificanceParams(),
                progress: Progress | None = None) -> SignificanceAudit:
    """The section for groups given by their counts on the label."""
    matched = match_groups(attribute, names, counts, params.match, progress, params.benefit)
    smoothed = cps_groups(names, counts, params.cps_lambda, params.match.reference, benefit=params.benefit)
    return SignificanceAudit(matched, smoothed, params.cps_lambda)


def with_cps_lambda(result: SignificanceAudit, lam: float) -> SignificanceAudit:
    """The same section with CPS at another prior scale: MATCH (seconds) is kept, CPS (milliseconds) is redone."""
    if lam == result.cps_lambda:
        return result
    audit = result.match
    smoothed = cps_groups(audit.names, [audit.counts[name] for name in audit.names], lam, audit.params.reference,
                          benefit=audit.benefit)
    return replace(result, cps=smoothed, cps_lambda=lam)


def analyse_match(pred: Predictions, attribute: str | None = None, threshold: float = 0.5,
                  benefit: str = "positive", params: MatchParams = MatchParams(),
                  progress: Progress | None = None) -> MatchAudit:
    """MATCH alone for every group × metric of ``attribute``."""
    view = pred.groups(attribute)
    counts = group_counts(pred, view, threshold)
    return match_groups(view.attribute, view.names, counts, params, progress, benefit)
