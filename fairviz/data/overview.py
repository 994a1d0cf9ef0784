"""What the loaded data holds, before any audit: its size, base rate and mean score, and each group's share of it.

``overview(pred)`` is the typed summary; ``display(summary)`` its display list (the app's Home page draws it);
``score_shares`` the per-group score histograms behind Home's score-distribution figure.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairviz.core.display import Item, Metric, Metrics, Table, heading, text
from fairviz.data.model import Predictions


@dataclass(frozen=True)
class GroupSummary:
    name: str
    n: int
    share: float               # of all rows
    base_rate: float           # P(Y = 1) in the group
    mean_score: float


@dataclass(frozen=True)
class AttributeSummary:
    attribute: str
    groups: tuple[GroupSummary, ...]

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"group": g.name, "n": g.n, "share": g.share, "base rate": g.base_rate,
                              "mean score": g.mean_score} for g in self.groups],
                            columns=["group", "n", "share", "base rate", "mean score"])


@dataclass(frozen=True)
class DataOverview:
    source: str
    notes: tuple[str, ...]
    rows: int
    positive_rate: float
    mean_score: float
    attributes: tuple[AttributeSummary, ...]


def overview(pred: Predictions) -> DataOverview:
    """Weighted data (an engine's counts per cell) counts each entry by its weight, as every audit does."""
    w = pred.weight
    attributes = []
    for attribute in pred.attribute_names:
        view = pred.groups(attribute)
        groups = []
        for g, name in enumerate(view.names):
            mask = view.codes == g
            wg = None if w is None else w[mask]
            groups.append(GroupSummary(name, int(view.sizes[g]), float(view.sizes[g] / pred.n),
                                       float(np.average(pred.y[mask], weights=wg)),
                                       float(np.average(pred.score[mask], weights=wg))))
        attributes.append(AttributeSummary(attribute, tuple(groups)))
    return DataOverview(pred.source, tuple(pred.notes), pred.n, float(np.average(pred.y, weights=w)),
                        float(np.average(pred.score, weights=w)), tuple(attributes))


GROUP_FORMATS = {"group": "text", "n": "int", "share": "num", "base rate": "num", "mean score": "num"}


def display(summary: DataOverview) -> list[Item]:
    items: list[Item] = [heading("Now analysing: {source}", source=summary.source)]
    items += [text("{note}", "caveat", note=note) for note in summary.notes]
    items.append(Metrics((Metric(text("Rows"), f"{summary.rows:,}"),
                          Metric(text("Positive rate (label)"), f"{summary.positive_rate:.3f}"),
                          Metric(text("Mean score"), f"{summary.mean_score:.3f}"),
                          Metric(text("Group attributes"), f"{len(summary.attributes)}"))))
    items += [Table(a.frame(), key=f"groups:{a.attribute}", formats=GROUP_FORMATS,
                    title=text("{attribute}", attribute=a.attribute)) for a in summary.attributes]
    return items


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
