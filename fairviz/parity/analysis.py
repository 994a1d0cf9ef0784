"""Group parity ([3] ch. 3): count each group's confusion matrix in the benefit orientation, then every pair metric.

A prediction is a *benefit* (hired, granted, released): by default the positive prediction (score ≥ τ); with
``benefit="negative"`` the classes are swapped (TP↔TN, FN↔FP), as [3] does for COMPAS, where "low risk"
is the beneficial outcome. From a group's counts:

- benefit b = P̂/n (what the group got), expected benefit E[b] = P/n (what its labels warrant);
- marginal benefit 𝓑 = b − E[b] = (FP − FN)/n (> 0 unjust surplus, < 0 unjust lack);
- OFI(i, j) = 𝓑_i − 𝓑_j ∈ [−2, 2], DI(i, j) = b_i/b_j (Definition 3.1), DPPL(i, j) = b_i − b_j,
  and the identity OFI = DPPL − (Prev_i − Prev_j): OFI is the disparity left once base rates are accounted for.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from fairviz.core.confusion_metrics import Cells
from fairviz.core.counts import ConfusionCounts
from fairviz.data import Predictions
from fairviz.data.groups import group_counts
from fairviz.parity.pair_metrics import PAIR_METRICS, oriented, pairwise_matrix, per_group_quantities
from fairviz.parity.results import GroupParity, ParityAudit, ParityParams

SMALL_GROUP = 30
Progress = Callable[[float, str], None]


def analyse(pred: Predictions, attribute: str | None = None, params: ParityParams = ParityParams(),
            progress: Progress | None = None) -> ParityAudit:
    report = progress or (lambda *_: None)
    view = pred.groups(attribute)
    report(0.1, "Counting confusion matrices")
    counts = group_counts(pred, view, params.threshold, params.benefit)
    report(0.5, "Pairwise metrics")
    audit = from_counts(view.attribute, view.names, counts, params)
    if len(view.names) > pred.limits.max_pair_groups:       # the matrices stay whole; the pair table is bounded
        audit = replace(audit, pair_groups=pred.limits.max_pair_groups,
                        warnings=audit.warnings + (pred.limits.pair_note(view.attribute, len(view.names)),))
    report(1.0, "Done")
    return audit


def from_counts(attribute: str, names: Sequence[str], counts: Sequence[ConfusionCounts],
                params: ParityParams = ParityParams()) -> ParityAudit:
    """The parity audit of groups given by their counts (already in the benefit orientation)."""
    names = tuple(names)
    cells = Cells.of(list(counts))
    per_group = per_group_quantities(cells, names, params.benefit)
    matrices = {k: pairwise_matrix(oriented(m, params.benefit), names, per_group, params.di_variant,
                                   params.di_zero_convention)
                for k, m in PAIR_METRICS.items()}
    groups = []
    for name, c in zip(names, counts):
        b = c.predicted_positive / c.n if c.n else float("nan")
        e = c.positives / c.n if c.n else float("nan")
        groups.append(GroupParity(name, c, b, e, b - e))
    warnings = []
    small = [f"'{g.name}' (n = {g.n:,})" for g in groups if g.n < SMALL_GROUP]
    if small:
        warnings.append(f"Small group{'s' if len(small) > 1 else ''}: {', '.join(small)}. Their metrics swing with a "
                        "single row; check them on the Sample-size significance page.")
    return ParityAudit(attribute, params, groups, matrices, tuple(warnings))


