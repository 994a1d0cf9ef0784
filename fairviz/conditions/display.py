"""Data conditions as display lists ([5] Han et al.): the retraining sweep (the Retraining simulator page and
``fairviz conditions run`` in a terminal), evaluation reweighting (its page) and the paper's tables (the reference
page). The JSON is each result's ``to_dict()``."""
from __future__ import annotations

import pandas as pd

from fairviz.conditions import (GRIDS, METHOD_NAMES, PAPER_RANGES, config_label, evaluation, figures, readings,
                                reference, simulate)
from fairviz.conditions.metrics import interval_text
from fairviz.conditions.results import ReweightingAudit, RetrainingAudit
from fairviz.core.display import Figure, Group, Item, Metric, Metrics, Table, text
from fairviz.core.wording import fmt

# ----------------------------------------------------------------------------------------------- retraining sweep


def simulation_summary(sim: RetrainingAudit) -> list[Item]:
    """What the terminal prints: the run, one line per condition, the notes and the readings."""
    lines: list[Item] = [*readings.condition_lines(sim), text(readings.LINES_LEGEND)]
    lines += [text("{warning}", "note", warning=w) for w in sim.warnings]
    lines += readings.simulation(sim)
    return [Group(readings.sweep_header(sim).plain(), tuple(lines))]


def simulation_head(sim: RetrainingAudit) -> list[Item]:
    """What the page shows above its tabs: warnings, the reading, how the models were trained and selected."""
    partial = [sim.completion.note()] if sim.completion is not None else []
    return [*partial, *[text("{warning}", "caveat", warning=w) for w in sim.warnings],
            readings.simulation_reading(sim), readings.run_note(sim)]


def sweep(sim: RetrainingAudit, p_y: float | None, key: tuple | None = None) -> list[Item]:
    return [Figure(lambda: figures.sweep_figure(sim, p_y), _key(key, "sweep", p_y)), text(readings.SWEEP_NOTE, "note")]


def cells(sim: RetrainingAudit, index: int, key: tuple | None = None) -> list[Item]:
    return [Figure(lambda: figures.cells_figure(sim.train_cells[index], sim.classes, sim.groups),
                   _key(key, "cells", index)), text(readings.CELLS_NOTE, "note")]


def grid(sim: RetrainingAudit, metric: str, key: tuple | None = None) -> list[Item]:
    return [Figure(lambda: figures.grid_figure(sim, metric), _key(key, "grid", metric)),
            Figure(lambda: figures.best_method_figure(sim), _key(key, "best")), text(readings.GRID_NOTE, "note")]


def method_settings(methods, grid_size: str) -> Table:
    """The hyperparameter settings each chosen method is trained with here, beside the paper's search."""
    frame = pd.DataFrame([{"method": METHOD_NAMES[k], "settings": "; ".join(config_label(k, c) for c in settings),
                           "paper": PAPER_RANGES.get(k, "—")} for k, settings in GRIDS[grid_size].items()
                          if k in methods], columns=["method", "settings", "paper"])
    return Table(frame, "conditions_method_settings", {c: "text" for c in frame.columns},
                 {"settings": "settings tried here", "paper": "the paper's search"})


SELECTED_LABELS = {"method_name": "method", "performance_mean": "accuracy", "performance_std": "± acc",
                   "fairness_mean": "Fairness", "fairness_std": "± fair", "dto": "DTO (test)", "dev_dto": "DTO (dev)",
                   "config": "selected setting", "alpha": "α", "leakage_mean": "leakage (test, balanced acc.)"}


def selected_table(sim: RetrainingAudit) -> Table:
    """The setting selected on dev per (condition, method): test mean ± std over seeds and DTO ([5] Table 3)."""
    frame = simulate.selected_frame(sim)
    key = "s" if sim.settings.condition == "grid" else "alpha"
    columns = (["p_y"] if key == "s" else []) + [key, "method_name", "config", "performance_mean", "performance_std",
                                                 "fairness_mean", "fairness_std", "dto", "dev_dto", "candidates"]
    if sim.settings.leakage:
        columns.append("leakage_mean")
    numbers = ("performance_mean", "performance_std", "fairness_mean", "fairness_std", "dto", "dev_dto")
    return Table(frame[columns], "conditions_selected",
                 {"method_name": "text", "config": "text", **{c: "num" for c in numbers}}, SELECTED_LABELS)


def selected(sim: RetrainingAudit) -> list[Item]:
    frame = simulate.selected_frame(sim)
    if frame.empty:
        return [text(readings.NOTHING_TRAINED, "finding")]
    return [selected_table(sim), text(readings.SELECTED_NOTE, "note"), readings.best_dto(float(frame["dto"].min()))]


# ----------------------------------------------------------------------------------------------- reweighting

HEADLINE = (("Accuracy (as is)", "accuracy"), ("Fairness = 1 − GAP(TPR)", "fairness"), ("DTO to (1, 1)", "dto"),
            ("GAP(PPR)", "gap_ppr"))


def reweighting_head(res: ReweightingAudit, ci: dict) -> list[Item]:
    """The predictions as they are (with their intervals), and what reweighting can and cannot move."""
    items: list[Item] = [Metrics(tuple(
        Metric(text(label), fmt(getattr(res.original, key)), readings.INTERVAL_HELP.format(ci=interval_text(ci.get(key))))
        for label, key in HEADLINE))]
    if len(res.groups) > 2:
        items.append(readings.many_groups(len(res.groups)))
    return items + [readings.intervals(ci), readings.reweighting(res),
                    Group(readings.WHY_GAP_TITLE, (text(readings.WHY_GAP),), key="why_gap")]


def reweighting_figure(res: ReweightingAudit, key: tuple | None = None) -> Figure:
    return Figure(lambda: figures.reweight_figure(res), _key(key, "reweight"))


def cells_table(res: ReweightingAudit, y, y_pred, z, index: int) -> list[Item]:
    """The cells now and under one condition, and the check that accuracy = Σ share × TPR."""
    chosen = res.rows[index].condition.label
    frame = evaluation.cell_shares(res, y, y_pred, z, index)
    table = Table(frame, "reweighting_cells", {"class": "int", "group": "text", "rows": "int", "share_now": "num",
                                               "share_then": "num", "tpr": "num"},
                  {"class": "class y", "share_now": "share now", "share_then": f"share at {chosen}",
                   "tpr": "TPR in the cell"})
    return [table, readings.cells_check(chosen, res.rows[index])]


def conditions_table(res: ReweightingAudit) -> list[Item]:
    frame = pd.DataFrame([{"condition": r.condition.label, "accuracy": r.scores.accuracy,
                           "macro_f1": r.scores.macro_f1, "gap_tpr": r.scores.gap_tpr,
                           "fairness": r.scores.fairness, "dto": r.scores.dto, "gap_ppr": r.scores.gap_ppr,
                           "gap_tpr_pairwise": r.gap_tpr_pairwise, "clipped": int(r.condition.clipped.sum())}
                          for r in res.rows])
    numbers = ("accuracy", "macro_f1", "gap_tpr", "fairness", "dto", "gap_ppr", "gap_tpr_pairwise")
    table = Table(frame, "reweighting_conditions", {"condition": "text", "clipped": "int", **{c: "num" for c in numbers}},
                  {"macro_f1": "macro-F1", "gap_tpr": "GAP(TPR)", "fairness": "Fairness", "dto": "DTO",
                   "gap_ppr": "GAP(PPR)", "gap_tpr_pairwise": "largest pairwise TPR gap", "clipped": "cells clipped"})
    return [table, text(readings.GAP_FPR_NOTE, "note")]


# ----------------------------------------------------------------------------------------------- the paper's tables

def reference_tables() -> list[Group]:
    """[5]'s published tables, as printed (DTO recomputed from the printed means beside the printed one)."""
    def printed(frame: pd.DataFrame, key: str) -> Table:
        return Table(frame, key, {c: "text" if not pd.api.types.is_numeric_dtype(frame[c]) else
                                  "int" if pd.api.types.is_integer_dtype(frame[c]) else "num2" for c in frame.columns})
    bios = reference.table2()
    return [Group("Table 3: Moji", (text(readings.TABLE_3), printed(reference.table3(), "paper_table_3")), key="table3"),
            Group("Table 1: Valence", (text(readings.TABLE_1), printed(reference.table1(), "paper_table_1")),
                  key="table1"),
            Group("Table 4: Arousal", (text(readings.TABLE_4), printed(reference.table4(), "paper_table_4")),
                  key="table4"),
            Group("Table 2: Bios", (text(readings.TABLE_2), Figure(figures.table2_figure, ("paper_table_2",)),
                                    Table(bios, "paper_table_2", {"profession": "text", "total": "int", "male": "int",
                                                                  "female": "int", "female ratio": "num"})),
                  key="table2")]


def _key(key: tuple | None, *what) -> tuple | None:
    return None if key is None else ("conditions", *key, *what)
