"""Probabilistic forecasts as display lists ([3] ch. 5).

Forecast fairness: ``display`` is the whole section of one ``ForecastAudit`` result (headline numbers, the
reading, then one group per view: groups, coverage gaps, model comparison, PIT), drawn by the 'Forecast fairness'
page and the HTML renderer; ``summary`` is the few lines ``fairviz forecast evaluate`` prints (the JSON's keys are
``result.to_dict()``). The PTN: ``evaluation`` is a trained PTN's Table 5.2 evaluation on the 'Lorenz & PTN' page.
"""
from __future__ import annotations

from fairviz.core.display import Bullets, Figure, Group, Item, Metric, Metrics, Table, text
from fairviz.core.wording import fmt, fmt_interval
import pandas as pd

from fairviz.forecast import ForecastAudit, band_key, crps
from fairviz.forecast import figures as figs
from fairviz.forecast import readings


def display(result: ForecastAudit, key: tuple | None = None) -> list[Item]:
    """The section in reading order. ``key`` identifies the data and settings (figures are kept per key)."""
    items: list[Item] = [text("{warning}", "caveat", warning=w) for w in result.warnings]
    items += [headline(result), readings.summary(result), groups_group(result, key), gaps_group(result, key)]
    if result.skills:
        items.append(comparison_group(result, key))
    items.append(Group("PIT by group", (
        Figure(lambda: figs.pit_figure({g.name: g.pit_hist for g in result.groups}), _key(key, "pit")),
        text(readings.PIT_NOTE, "note")), key="pit"))
    return items


def summary(result: ForecastAudit, source: str, n_rows: int) -> list[Item]:
    """What the terminal prints: the source, the notes, one line per group and one per compared group."""
    items: list[Item] = [readings.source_line(source, n_rows, result)]
    items += [text("{warning}", "note", warning=w) for w in result.warnings]
    items.append(Bullets(tuple(readings.group_line(g) for g in [*result.groups, result.overall])))
    if result.skills:
        skills = [*result.skills, *([result.skill_overall] if result.skill_overall else [])]
        items.append(Bullets(tuple(readings.skill_line(result, s) for s in skills)))
    return items


def headline(result: ForecastAudit) -> Metrics:
    o = result.overall
    metrics = [Metric(text("Series × steps"), f"{o.n_series:,} × {o.n_rows // max(o.n_series, 1)}"),
               Metric(text("CRPS (all)"), fmt(o.crps), help=f"95% CI {fmt_interval(o.ci.get('crps'))}"),
               Metric(text("Pinball loss (all)"), fmt(o.pinball), help=f"mean over {result.levels.size} levels")]
    band = result.headline_band
    if band is not None:
        metrics.append(Metric(text("{band} band coverage", band=readings.band_label(band)), fmt(o.coverage[band]),
                              help=f"95% CI {fmt_interval(o.ci.get(f'coverage_{band_key(band)}'))}"))
    return Metrics(tuple(metrics))


def groups_table(result: ForecastAudit) -> Table:
    formats = {"group": "text", "series": "int", "rows": "int", "crps": "num", "crps_ci": "ci", "pinball": "num",
               "pinball_ci": "ci"}
    labels = {"crps": "CRPS", "crps_ci": "CRPS CI", "pinball_ci": "pinball CI"}
    for b in result.bands:
        k, label = band_key(b), readings.band_label(b)
        formats.update({f"coverage_{k}": "num", f"coverage_{k}_ci": "ci", f"width_{k}": "num"})
        labels.update({f"coverage_{k}": f"coverage {label}", f"coverage_{k}_ci": f"CI {label}",
                       f"width_{k}": f"width {label}"})
    return Table(result.groups_table(), "forecast_groups", formats, labels)


def groups_group(result: ForecastAudit, key: tuple | None) -> Group:
    items: list[Item] = [
        groups_table(result),
        Figure(lambda: figs.group_metric_figure(result, "crps", "CRPS by group (lower is better)"), _key(key, "crps")),
        Figure(lambda: figs.group_metric_figure(result, "pinball", "Mean pinball loss by group"),
               _key(key, "pinball"))]
    band = result.headline_band
    if band is not None:
        items.append(Figure(lambda: figs.group_metric_figure(
            result, f"width_{band_key(band)}", f"Mean width of the {readings.band_label(band)} band (sharpness)"),
            _key(key, "width", band)))
    items += [text(readings.ACCURACY_NOTE, "note"), readings.crps_form_note(result)]
    return Group("Groups", tuple(items), key="groups")


def gaps_table(result: ForecastAudit) -> Table:
    return Table(result.gaps_table(), "forecast_coverage_gaps",
                 {"band": "pct", "group_i": "text", "group_j": "text", "gap": "num", "ci": "ci", "differs": "bool"},
                 {"group_i": "group i", "group_j": "group j", "gap": "coverage gap (i − j)", "ci": "95% CI",
                  "differs": "differs"})


def gaps_group(result: ForecastAudit, key: tuple | None) -> Group:
    if not result.bands:
        return Group("Coverage gaps", (text(readings.NO_BANDS, "finding"),), key="gaps")
    return Group("Coverage gaps", (Figure(lambda: figs.coverage_gap_figure(result), _key(key, "gaps")),
                                   gaps_table(result), text(readings.GAPS_NOTE, "note")), key="gaps")


def skills_table(result: ForecastAudit) -> Table:
    return Table(result.skills_table(), "forecast_skill",
                 {"group": "text", "series": "int", "crps_a": "num", "crps_b": "num", "skill": "num", "ci": "ci",
                  "share_series_better": "num"},
                 {"crps_a": f"CRPS {result.model}", "crps_b": f"CRPS {result.compare_model}",
                  "skill": "skill (1 − A/B)", "ci": "95% CI",
                  "share_series_better": "share of series where A is better"})


def comparison_group(result: ForecastAudit, key: tuple | None) -> Group:
    return Group("Model comparison", (Figure(lambda: figs.skill_figure(result), _key(key, "skill")),
                                      skills_table(result), text(readings.SKILL_NOTE, "note")), key="comparison")


def _key(key: tuple | None, *what) -> tuple | None:
    return None if key is None else ("forecast_fairness", *key, *what)


# ----------------------------------------------------------------------------------------------- the PTN

QUARTILES = ("First quartile", "Second quartile", "Third quartile")
OUTPERFORMED = "Percent of forecasts outperformed by PTN"


def table_5_2(evaluation, label: str) -> Table:
    """The skill of this PTN next to the thesis's Table 5.2 (quartile rows as 2-digit numbers, the last row a
    percentage, so every cell is text)."""
    s = evaluation.skill
    frame = pd.DataFrame({
        "": [*QUARTILES, OUTPERFORMED],
        f"{label} vs Gaussian-NVAR (this data)": [*[fmt(v, 2) for v in s.quartiles], f"{100 * s.outperformed:.1f}%"],
        **{f"Thesis: {c}": [*(f"{crps.TABLE_5_2[r][k]:.2f}" for r in QUARTILES),
                            f"{crps.TABLE_5_2[OUTPERFORMED][k]:.1f}%"]
           for k, c in enumerate(crps.TABLE_5_2["columns"])}})
    return Table(frame, "table_5_2", {c: "text" for c in frame.columns})


def bands_table(evaluation) -> Table:
    frame = pd.DataFrame({"band": list(crps.BANDS), "coverage": [evaluation.coverage[b] for b in crps.BANDS],
                          "coverage_baseline": [evaluation.coverage_baseline[b] for b in crps.BANDS],
                          "width": [evaluation.width[b] for b in crps.BANDS]})
    return Table(frame, "ptn_bands", {"band": "pct", "coverage": "num", "coverage_baseline": "num", "width": "num"},
                 {"coverage": "PTN coverage", "coverage_baseline": "baseline coverage", "width": "PTN mean width"},
                 title=text("Band coverage and width (x units)"))


def evaluation(evaluation, label: str, meta: dict, key: tuple | None = None) -> list[Item]:
    """A trained PTN against the Gaussian-NVAR baseline on the test windows ([3] Table 5.2, Eq. 5.10)."""
    ev = evaluation
    return [table_5_2(ev, label), readings.skill_verdict(ev.skill), text(readings.SKILL_SCORE_NOTE, "note"),
            Figure(lambda: figs.crps_distribution_figure(ev.crps_model, ev.crps_baseline), _ptn_key(key, "crps")),
            Figure(lambda: figs.coverage_figure(list(crps.BANDS), {"PTN": ev.coverage,
                                                                   "Gaussian-NVAR": ev.coverage_baseline}),
                   _ptn_key(key, "coverage")),
            Figure(lambda: figs.pit_figure({"PTN": ev.pit_hist, "Gaussian-NVAR": ev.pit_hist_baseline}),
                   _ptn_key(key, "pit")),
            bands_table(ev), readings.band_honesty(ev), readings.training_note(ev.skill, meta)]


def _ptn_key(key: tuple | None, *what) -> tuple | None:
    return None if key is None else ("ptn_evaluation", *key, *what)


SEARCH_NUMBERS = ("f (CRPS)", "f_v (CRPS)", "f² + f_v²", "mutation p", "dropout", "first_dropout", "slope",
                  "noise_std", "arch_lr", "lr", "beta1", "beta2", "arch_beta1", "arch_beta2")


def search_table(result) -> Table:
    """Every candidate of the genetic search ([3] Algorithm 2), best first."""
    frame = pd.DataFrame(result.table())
    return Table(frame, "ptn_search", {c: "num4" for c in SEARCH_NUMBERS if c in frame.columns})
