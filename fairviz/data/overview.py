"""What the loaded data holds, before any audit: its size, base rate and mean score, and each group's share of it
(regression: the mean target and prediction; multiclass: the accuracy and mean top-label confidence).

``overview(pred)`` is the typed summary; ``display(summary)`` its display list (the app's Home page draws it);
``score_shares`` the per-group score histograms behind Home's score-distribution figure.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairviz.core.display import Item, Metric, Metrics, Table, heading, text
from fairviz.data.model import Predictions
from fairviz.data.task_spec import DEFAULT_TASK
from fairviz.data.tasks import spec_of

# the two numbers the overview gives per group are the task's (``TaskSpec.overview``, ``overview_labels``): what
# ``base_rate`` and ``mean_score`` hold


@dataclass(frozen=True)
class GroupSummary:
    name: str
    n: int
    share: float               # of all rows
    base_rate: float           # P(Y = 1) in the group (regression: mean target; multiclass: accuracy)
    mean_score: float          # (regression: mean prediction; multiclass: mean top-label confidence)


@dataclass(frozen=True)
class AttributeSummary:
    attribute: str
    groups: tuple[GroupSummary, ...]
    task: str = DEFAULT_TASK

    def frame(self) -> pd.DataFrame:
        rate, score = spec_of(self.task).overview
        return pd.DataFrame([{"group": g.name, "n": g.n, "share": g.share, rate: g.base_rate, score: g.mean_score}
                             for g in self.groups], columns=["group", "n", "share", rate, score])


@dataclass(frozen=True)
class DataOverview:
    source: str
    notes: tuple[str, ...]
    rows: int
    positive_rate: float
    mean_score: float
    attributes: tuple[AttributeSummary, ...]
    task: str = DEFAULT_TASK


def overview(pred: Predictions) -> DataOverview:
    """Weighted data (an engine's counts per cell) counts each entry by its weight, as every audit does."""
    w = pred.weight
    first = (pred.predicted == pred.y).astype(float) if spec_of(pred).per_class else pred.y   # classes: accuracy
    attributes = []
    for attribute in pred.attribute_names:
        view = pred.groups(attribute)
        groups = []
        for g, name in enumerate(view.names):
            mask = view.codes == g
            wg = None if w is None else w[mask]
            groups.append(GroupSummary(name, int(view.sizes[g]), float(view.sizes[g] / pred.n),
                                       float(np.average(first[mask], weights=wg)),
                                       float(np.average(pred.score[mask], weights=wg))))
        attributes.append(AttributeSummary(attribute, tuple(groups), pred.task))
    return DataOverview(pred.source, tuple(pred.notes), pred.n, float(np.average(first, weights=w)),
                        float(np.average(pred.score, weights=w)), tuple(attributes), pred.task)


def display(summary: DataOverview) -> list[Item]:
    rate, score = spec_of(summary.task).overview_labels
    items: list[Item] = [heading("Now analysing: {source}", source=summary.source)]
    items += [text("{note}", "caveat", note=note) for note in summary.notes]
    items.append(Metrics((Metric(text("Rows"), f"{summary.rows:,}"),
                          Metric(text(rate), _number(summary.positive_rate)),
                          Metric(text(score), _number(summary.mean_score)),
                          Metric(text("Group attributes"), f"{len(summary.attributes)}"))))
    columns = spec_of(summary.task).overview
    formats = {"group": "text", "n": "int", "share": "num", columns[0]: "num", columns[1]: "num"}
    items += [Table(a.frame(), key=f"groups:{a.attribute}", formats=formats,
                    title=text("{attribute}", attribute=a.attribute)) for a in summary.attributes]
    return items


def _number(value: float) -> str:
    """Three decimals for rates and scores; two for a regression's values of any size (4g wrote 2e+05 for a price)."""
    if not np.isfinite(value):
        return "—"
    return f"{value:.3f}" if abs(value) <= 1 else f"{value:,.2f}"


def score_shares(pred: Predictions, attribute: str, bins: np.ndarray,
                 shown: int) -> tuple[list[str], list[np.ndarray]]:
    """The ``shown`` largest groups of ``attribute`` and the share of each group's rows in each score bin."""
    view = pred.groups(attribute)
    order = np.argsort(-view.sizes, kind="stable")[:shown]
    w = pred.weight
    shares = []
    for g in order:
        mask = view.codes == g
        counts = np.histogram(pred.score[mask], bins, weights=None if w is None else w[mask])[0]
        shares.append(counts / max(int(view.sizes[g]), 1))
    return [view.names[g] for g in order], shares
