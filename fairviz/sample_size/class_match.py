"""MATCH per class ([3] §4.5 on one-vs-rest counts): for each class c, is a group's score on "class c vs the rest"
what the reference's error pattern would give at the group's own size? Benjamini–Hochberg adjusts the p-values
across every class × group × metric of the table (not per class), so a table of C classes is not C times as
likely to flag noise.

The reference defaults to the whole population, not the complement: MATCH treats the reference's rates as exact,
and a complement as noisy as the group doubles the variance the null leaves out. On data with no disparity at all
(three groups of 60/30/10%, 800 rows, three classes, 40 seeds) the complement flagged 19 of 40 data sets at BH 5%,
the population 1 of 40: against the population the group's own rows are part of the reference, so the null is
conservative (Var(p_g − p_pop) = (1 − s)·σ²/n_g for a group of share s).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from fairviz.core import stats
from fairviz.core.counts import ConfusionCounts
from fairviz.core.display import Text, text
from fairviz.core.markup import plot_text
from fairviz.core.theme import TEMPLATE
from fairviz.core.wording import fmt, fmt_p
from fairviz.data.model import DataError
from fairviz.data.tasks import spec_of
from fairviz.sample_size.match import match_groups
from fairviz.sample_size.results import MatchAudit, MatchParams, MatchResult


CLASS_MATCH = MatchParams(reference="population")


@dataclass(frozen=True)
class ClassMatch:
    """MATCH of every group × metric for each class; ``audits[c]``'s p_adjusted are over the whole table."""
    attribute: str
    classes: tuple[str, ...]
    audits: tuple[MatchAudit, ...]
    params: MatchParams

    def results(self) -> list[tuple[str, MatchResult]]:
        return [(c, r) for c, audit in zip(self.classes, self.audits) for r in audit.results]

    def get(self, class_name: str, group: str, metric: str) -> MatchResult | None:
        return self.audits[self.classes.index(class_name)].get(group, metric)

    def significant(self) -> list[tuple[str, MatchResult]]:
        return [(c, r) for c, r in self.results() if r.p_adjusted is not None and r.p_adjusted < self.params.alpha]

    def to_dict(self) -> dict:
        return {"attribute": self.attribute, "reference": self.audits[0].reference_label if self.audits else None,
                "metrics": list(self.params.metrics),
                "results": [{"class": c, "group": r.group, "metric": r.metric, **r.to_dict()}
                            for c, r in self.results()]}


def one_vs_rest_counts(y, predicted, codes, n_groups: int, n_classes: int, weights=None) -> np.ndarray:
    """(C, G, 4) counts TP, FN, FP, TN of "class c vs the rest" per group; an entry of weight w counts w times."""
    y, predicted, codes = (np.asarray(a, dtype=np.int64) for a in (y, predicted, codes))
    w = None if weights is None else np.asarray(weights, dtype=float)
    flat = (y * n_groups + codes) * n_classes + predicted
    T = np.bincount(flat, weights=w, minlength=n_classes * n_groups * n_classes).round().astype(np.int64)
    T = T.reshape(n_classes, n_groups, n_classes)
    out = np.zeros((n_classes, n_groups, 4), dtype=np.int64)
    for c in range(n_classes):
        tp = T[c, :, c]
        fn, fp = T[c].sum(1) - tp, T[:, :, c].sum(0) - tp
        out[c] = np.stack([tp, fn, fp, T.sum((0, 2)) - tp - fn - fp], axis=1)
    return out


def match_by_class(y, predicted, codes, names: Sequence[str], classes: Sequence[str], weights=None,
                   attribute: str = "", params: MatchParams = CLASS_MATCH) -> ClassMatch:
    """MATCH per class and group with Benjamini–Hochberg over classes × groups × metrics. ``y`` and ``predicted``
    are class codes 0…C−1; groups with no rows are left out."""
    classes, names = tuple(str(c) for c in classes), tuple(names)
    y, predicted, codes = (np.asarray(a) for a in (y, predicted, codes))
    if y.shape != predicted.shape or y.shape != codes.shape:
        raise DataError("The label, the predicted class and the groups must have one value per row each.")
    for values, what in ((y, "label"), (predicted, "predicted class")):
        numbers = np.asarray(values, dtype=float)
        if not np.all(np.isfinite(numbers)):
            raise DataError(f"The {what} has {int(np.count_nonzero(~np.isfinite(numbers))):,} missing values; drop "
                            "them first.")
        if numbers.size and (numbers.min() < 0 or numbers.max() >= len(classes) or np.any(numbers % 1)):
            raise DataError(f"The {what} has values that are not one of the {len(classes)} classes.")
    if weights is not None:
        w = np.asarray(weights, dtype=float)
        if w.shape != y.shape or not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w % 1):
            raise DataError("The weights must be whole numbers of rows (0 or more), one per entry.")
    counts = one_vs_rest_counts(y, predicted, codes, len(names), len(classes), weights)
    present = [g for g in range(len(names)) if counts[0, g].sum() > 0]
    if len(present) < 2:
        raise DataError(f"MATCH needs at least two groups with rows; this attribute has {len(present)}.")
    audits = [match_groups(attribute, [names[g] for g in present],
                           [ConfusionCounts(*map(int, counts[c, g])) for g in present], params)
              for c in range(len(classes))]
    flat = [r for audit in audits for r in audit.results]
    adjusted = iter(stats.benjamini_hochberg([np.nan if r.p_value is None else r.p_value for r in flat]))
    audits = [replace(audit, results=[replace(r, p_adjusted=_finite(next(adjusted))) for r in audit.results])
              for audit in audits]
    return ClassMatch(attribute, classes, tuple(audits), params)


def _finite(x) -> float | None:
    return float(x) if np.isfinite(x) else None


def analyse_class_match(pred, attribute: str, params: MatchParams = CLASS_MATCH) -> ClassMatch:
    """MATCH per class of a Predictions object whose task has classes."""
    spec = spec_of(pred)
    if not spec.per_class:
        raise DataError(f"MATCH per class needs predictions of several classes; these are {spec.title} predictions.")
    view = pred.groups(attribute)
    return match_by_class(pred.y, pred.predicted, view.codes, view.names, pred.classes, pred.weight, attribute,
                          params)


def class_match_sentence(match: ClassMatch) -> Text:
    """The per-class MATCH table in one sentence: how many scores are out of line, and the clearest."""
    hits = match.significant()
    if not hits:
        return text("MATCH per class: no group's one-vs-rest score is out of line with {ref} at the group's own size "
                    "({tests} tests, Benjamini–Hochberg over classes × groups × metrics).", "finding",
                    ref=match.to_dict()["reference"], tests=len(match.results()))
    c, r = min(hits, key=lambda h: h[1].p_adjusted)
    return text("MATCH per class: {count} of {tests} scores are out of line with {ref} at the group's own size; the "
                "clearest is **{g}**'s {metric} for class **{c}** ({score} against {refscore}; adjusted p {p}, "
                "n = {n}).", "finding", count=len(hits), tests=len(match.results()),
                ref=match.to_dict()["reference"], g=r.group, metric=r.metric.upper(), c=c, score=fmt(r.score),
                refscore=fmt(r.reference_score), p=fmt_p(r.p_adjusted), n=f"{r.n:,}")


def class_match_figure(match: ClassMatch, metric: str = "tpr", height: int | None = None):
    """Class × group heatmap of one metric's MATCH: colour is −log10 of the adjusted p (white: in line with the
    reference), the score against the reference's printed in each cell."""
    groups = match.audits[0].names if match.audits else ()
    z, labels = [], []
    for c in match.classes:
        row, row_labels = [], []
        for g in groups:
            r = match.get(c, g, metric)
            row.append(np.nan if r is None or r.p_adjusted is None else -np.log10(max(r.p_adjusted, 1e-12)))
            row_labels.append("—" if r is None or r.score is None else
                              f"{fmt(r.score)} vs {fmt(r.reference_score)}")
        z.append(row)
        labels.append(row_labels)
    fig = go.Figure(go.Heatmap(z=z, x=[plot_text(g) for g in groups], y=[plot_text(c) for c in match.classes],
                               text=labels, texttemplate="%{text}" if len(groups) * len(match.classes) <= 150 else None,
                               colorscale=[[0, "#ffffff"], [1, "#D55E00"]], zmin=0,
                               zmax=max([3.0, *(v for row in z for v in row if np.isfinite(v))]),
                               colorbar=dict(title="−log10 adjusted p"),
                               hovertemplate="class %{y}, group %{x}: %{text}<extra></extra>"))
    fig.update_layout(template=TEMPLATE, height=height or min(700, 220 + 40 * len(match.classes)),
                      title=f"MATCH per class: {metric.upper()} against {plot_text(match.to_dict()['reference'])}",
                      xaxis_title="group", yaxis=dict(title="class", autorange="reversed"))
    return fig
