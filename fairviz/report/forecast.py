"""Forecast fairness as a display list ([3] ch. 5): what the 'Forecast fairness' page, an HTML report and
``fairviz forecast evaluate`` in a terminal show of one ``ForecastFairness`` result.

``display`` is the whole section (headline numbers, the reading, then one group per view: groups, coverage gaps,
model comparison, PIT); ``summary`` is the few lines a terminal prints (the JSON's keys are ``result.to_dict()``).
"""
from __future__ import annotations

from fairviz.core.display import Bullets, Figure, Group, Item, Metric, Metrics, Table, text
from fairviz.core.wording import fmt, fmt_interval
from fairviz.forecast import ForecastFairness, band_key
from fairviz.forecast import figures as figs
from fairviz.forecast import readings


def display(result: ForecastFairness, key: tuple | None = None) -> list[Item]:
    """The section in reading order. ``key`` identifies the data and settings (figures are kept per key)."""
    items: list[Item] = [text("{warning}", "caveat", warning=w) for w in result.warnings]
    items += [headline(result), readings.summary(result), groups_group(result, key), gaps_group(result, key)]
    if result.skills:
        items.append(comparison_group(result, key))
    items.append(Group("PIT by group", (
        Figure(lambda: figs.pit_figure({g.name: g.pit_hist for g in result.groups}), _key(key, "pit")),
        text(readings.PIT_NOTE, "note")), key="pit"))
    return items


def summary(result: ForecastFairness, source: str, n_rows: int) -> list[Item]:
    """What the terminal prints: the source, the notes, one line per group and one per compared group."""
    items: list[Item] = [readings.source_line(source, n_rows, result)]
    items += [text("{warning}", "note", warning=w) for w in result.warnings]
    items.append(Bullets(tuple(readings.group_line(g) for g in [*result.groups, result.overall])))
    if result.skills:
        skills = [*result.skills, *([result.skill_overall] if result.skill_overall else [])]
        items.append(Bullets(tuple(readings.skill_line(result, s) for s in skills)))
    return items


def headline(result: ForecastFairness) -> Metrics:
    o = result.overall
    metrics = [Metric(text("Series × steps"), f"{o.n_series:,} × {o.n_rows // max(o.n_series, 1)}"),
               Metric(text("CRPS (all)"), fmt(o.crps), help=f"95% CI {fmt_interval(o.ci.get('crps'))}"),
               Metric(text("Pinball loss (all)"), fmt(o.pinball), help=f"mean over {result.levels.size} levels")]
    band = result.headline_band
    if band is not None:
        metrics.append(Metric(text("{band} band coverage", band=readings.band_label(band)), fmt(o.coverage[band]),
                              help=f"95% CI {fmt_interval(o.ci.get(f'coverage_{band_key(band)}'))}"))
    return Metrics(tuple(metrics))


def groups_table(result: ForecastFairness) -> Table:
    formats = {"group": "text", "series": "int", "rows": "int", "crps": "num", "crps_ci": "ci", "pinball": "num",
               "pinball_ci": "ci"}
    labels = {"crps": "CRPS", "crps_ci": "CRPS CI", "pinball_ci": "pinball CI"}
    for b in result.bands:
        k, label = band_key(b), readings.band_label(b)
        formats.update({f"coverage_{k}": "num", f"coverage_{k}_ci": "ci", f"width_{k}": "num"})
        labels.update({f"coverage_{k}": f"coverage {label}", f"coverage_{k}_ci": f"CI {label}",
                       f"width_{k}": f"width {label}"})
    return Table(result.groups_table(), "forecast_groups", formats, labels)


def groups_group(result: ForecastFairness, key: tuple | None) -> Group:
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
    items.append(text(readings.ACCURACY_NOTE, "note"))
    return Group("Groups", tuple(items), key="groups")


def gaps_table(result: ForecastFairness) -> Table:
    return Table(result.gaps_table(), "forecast_coverage_gaps",
                 {"band": "pct", "group_i": "text", "group_j": "text", "gap": "num", "ci": "ci", "differs": "bool"},
                 {"group_i": "group i", "group_j": "group j", "gap": "coverage gap (i − j)", "ci": "95% CI",
                  "differs": "differs"})


def gaps_group(result: ForecastFairness, key: tuple | None) -> Group:
    if not result.bands:
        return Group("Coverage gaps", (text(readings.NO_BANDS, "finding"),), key="gaps")
    return Group("Coverage gaps", (Figure(lambda: figs.coverage_gap_figure(result), _key(key, "gaps")),
                                   gaps_table(result), text(readings.GAPS_NOTE, "note")), key="gaps")


def skills_table(result: ForecastFairness) -> Table:
    return Table(result.skills_table(), "forecast_skill",
                 {"group": "text", "series": "int", "crps_a": "num", "crps_b": "num", "skill": "num", "ci": "ci",
                  "share_series_better": "num"},
                 {"crps_a": f"CRPS {result.model}", "crps_b": f"CRPS {result.compare_model}",
                  "skill": "skill (1 − A/B)", "ci": "95% CI",
                  "share_series_better": "share of series where A is better"})


def comparison_group(result: ForecastFairness, key: tuple | None) -> Group:
    return Group("Model comparison", (Figure(lambda: figs.skill_figure(result), _key(key, "skill")),
                                      skills_table(result), text(readings.SKILL_NOTE, "note")), key="comparison")


def _key(key: tuple | None, *what) -> tuple | None:
    return None if key is None else ("forecast_fairness", *key, *what)
