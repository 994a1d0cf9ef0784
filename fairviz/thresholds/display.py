"""Per-group thresholds as a display list (the threshold explorer page): the reading, the accuracy/fairness trade-off
curve with the chosen policy and a single threshold τ, the per-group threshold table and the notes. Its JSON is
``ThresholdExplorer.to_dict()``."""
from __future__ import annotations

import pandas as pd

from fairviz.core.display import Figure, Item, Metric, Metrics, Table, text
from fairviz.thresholds import ThresholdExplorer, figures, readings

TABLE_LABELS = {"group": "group", "n": "rows", "positives": "positives", "rule": "rule",
                "tpr": "TPR (expected)", "fpr": "FPR (expected)", "selection_rate": "selection (expected)",
                "realised_tpr": "TPR (decisions)", "realised_fpr": "FPR (decisions)",
                "realised_selection": "selection (decisions)"}


def display(result: ThresholdExplorer, key: tuple | None = None) -> list[Item]:
    return [*explorer(result, key), *notes(result)]


def explorer(result: ThresholdExplorer, key: tuple | None = None) -> list[Item]:
    """The reading, the headline numbers, the trade-off curve and the per-group table (the page puts its actions
    right after these)."""
    return [readings.headline(result), headline_numbers(result),
            Figure(lambda: figures.trade_off_figure(result), None if key is None else ("thresholds_trade_off", *key)),
            text(readings.CURVE_NOTE, "note"), thresholds_table(result), text(readings.TABLE_NOTE, "note")]


def notes(result: ThresholdExplorer) -> list[Item]:
    """How the decisions realise the rule, the in-sample caveat and the work behind it."""
    return [readings.realised(result), text(readings.IN_SAMPLE, "caveat"), text(readings.WORK, "note")]


def headline_numbers(result: ThresholdExplorer) -> Metrics:
    policy, single = result.audit.policy, result.audit.single_threshold
    name = readings.GAP_NAME[policy.params.constraint]
    gap = name[0].upper() + name[1:]
    return Metrics((Metric(text("Expected accuracy"), f"{policy.accuracy:.3f}"),
                    Metric(text("{gap} (expected)", gap=gap), f"{policy.max_gap:.3f}"),
                    Metric(text("{gap} (decisions)", gap=gap), f"{result.adjusted.realised_gap():.4f}"),
                    Metric(text("Accuracy at τ = {tau:.2f}", tau=result.tau), f"{single.accuracy:.3f}"),
                    Metric(text("{gap} at τ = {tau:.2f}", gap=gap, tau=result.tau),
                           f"{single.max_gap:.3f}")))


def thresholds_table(result: ThresholdExplorer) -> Table:
    realised = {r.group: r for r in result.adjusted.realised}
    frame = pd.DataFrame([{"group": r.group, "n": r.n, "positives": int(round(r.positives)),
                           "rule": readings.rule_text(r), "tpr": r.tpr, "fpr": r.fpr,
                           "selection_rate": float(r.selection_rate), "realised_tpr": realised[r.group].tpr,
                           "realised_fpr": realised[r.group].fpr,
                           "realised_selection": realised[r.group].selection_rate}
                          for r in result.audit.policy.rules], columns=list(TABLE_LABELS))
    formats = {"group": "text", "n": "int", "positives": "int", "rule": "text",
               **{c: "num4" for c in list(TABLE_LABELS)[4:]}}
    return Table(frame, "thresholds_per_group", formats, TABLE_LABELS,
                 title=text("Per-group thresholds"))
