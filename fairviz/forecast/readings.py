"""Forecast fairness in words ([3] ch. 5): what the page, the HTML report and the terminal say about a result.

Names of groups and models are fields of the templates (``fairviz.core.display.text``), never part of them, so a
group named ``**x**`` reads as typed wherever it is shown.
"""
from __future__ import annotations

import numpy as np

from fairviz.core.display import Text, join, text
from fairviz.core.wording import fmt, fmt_interval
from fairviz.forecast.results import ForecastFairness, GroupScores, GroupSkill

HONESTY_WORDS = {"too wide": "too wide", "too narrow": "too narrow", "about right": "about right",
                 "unknown": "too few series to tell"}

ABOUT = ("Quantile forecasts for several groups: is the forecast as accurate (CRPS, pinball loss), as sharp (band "
         "width) and as honest (coverage of its bands) for every group? Intervals resample whole series within each "
         "group (a cluster bootstrap), because the steps of one series are not independent.")
ACCURACY_NOTE = ("CRPS is computed from the given quantile levels (2 × the level-weighted pinball loss; exact for "
                 "levels (j − ½)/c, an approximation for sparse levels). A narrower band is only better if its "
                 "coverage holds: read width next to coverage.")
GAPS_NOTE = ("Coverage gap = coverage of group i minus group j for the same band (the equalized-coverage view of "
             "fair prediction intervals). Intervals: percentile bootstrap over series, resampled within each group.")
NO_BANDS = "None of the chosen bands is described by the file's quantile levels."
PIT_NOTE = ("PIT = the forecast's CDF at the truth. Flat: calibrated. U-shaped: bands too narrow for that group "
            "(truths fall in the tails). Hump: too wide. Sloped: biased up or down.")
SKILL_NOTE = ("[3] ch. 5 argues that static context lets a forecaster adapt to under-represented subsets "
              "(microclimates). Read it here as: is the skill of the model with context larger on the rare group "
              "than on the common one? Intervals: paired bootstrap over series (both models resampled together).")


def band_label(band: float) -> str:
    return f"{100 * band:g}%"


def verdict_level(result: ForecastFairness) -> str:
    """How the summary reads: an error-coloured finding when the headline band's largest coverage gap excludes 0
    and is at least 0.05, a caveat when it excludes 0 but is smaller, a plain finding otherwise."""
    band = result.headline_band
    gap = result.largest_gap(band) if band is not None else None
    if gap is None or not gap.excludes_zero:
        return "finding"
    return "error" if abs(gap.gap) >= 0.05 else "caveat"


def summary(result: ForecastFairness) -> Text:
    """The reading: which group is forecast worst and best, the headline band's largest coverage gap, and the
    skill of model A over model B on the groups where it is highest and lowest."""
    worst = max(result.groups, key=lambda g: g.crps)
    best = min(result.groups, key=lambda g: g.crps)
    parts = [text("**Reading.** The forecasts of *{worst}* are the least accurate (CRPS {worst_crps}, CI "
                  "{worst_ci}) and those of *{best}* the most (CRPS {best_crps}, CI {best_ci}).",
                  worst=worst.name, worst_crps=fmt(worst.crps), worst_ci=fmt_interval(worst.ci.get("crps")),
                  best=best.name, best_crps=fmt(best.crps), best_ci=fmt_interval(best.ci.get("crps")))]
    band = result.headline_band
    gap = result.largest_gap(band) if band is not None else None
    if gap is not None:
        i, j = result.group(gap.group_i), result.group(gap.group_j)
        parts.append(text(
            " The {band} band covers {cover_i} of *{group_i}*'s truths ({honesty_i}) and {cover_j} of *{group_j}*'s "
            "({honesty_j}): a gap of {gap:+.3f} (95% CI {ci}), ",
            band=band_label(band), cover_i=fmt(i.coverage[band]), group_i=i.name,
            honesty_i=HONESTY_WORDS[result.honesty(i.name, band)], cover_j=fmt(j.coverage[band]), group_j=j.name,
            honesty_j=HONESTY_WORDS[result.honesty(j.name, band)], gap=gap.gap, ci=fmt_interval(gap.ci)))
        parts.append("so the forecast states its uncertainty differently well for the two groups."
                     if gap.excludes_zero else "not distinguishable from resampling noise.")
    if result.skills:
        lo = min(result.skills, key=lambda s: s.skill if np.isfinite(s.skill) else np.inf)
        hi = max(result.skills, key=lambda s: s.skill if np.isfinite(s.skill) else -np.inf)
        parts.append(text(" Against '{b}', '{a}' has skill {hi_skill} on *{hi}* and {lo_skill} on *{lo}* "
                          "(1 − CRPS ratio; > 0 means A is better).", a=result.model, b=result.compare_model,
                          hi_skill=fmt(hi.skill), hi=hi.name, lo_skill=fmt(lo.skill), lo=lo.name))
    return join(*parts, level=verdict_level(result))


def source_line(source: str, n_rows: int, result: ForecastFairness) -> Text:
    return text("{source}: model '{model}', {n_rows} rows, attribute '{attribute}'", "heading", source=source,
                model=result.model, n_rows=f"{n_rows:,}", attribute=result.attribute)


def group_line(g: GroupScores) -> Text:
    """One group's scores in a line (the terminal)."""
    cover = ", ".join(f"{100 * float(b):g}% {fmt(v)}" for b, v in g.coverage.items())
    return text("{name}: {n_series} series, CRPS {crps}, pinball {pinball}, coverage {cover}", name=g.name,
                n_series=f"{g.n_series:,}", crps=fmt(g.crps), pinball=fmt(g.pinball), cover=cover)


def skill_line(result: ForecastFairness, s: GroupSkill) -> Text:
    """The skill of A over B on one group, with its interval, in a line (the terminal)."""
    return text("skill of '{a}' over '{b}' on {name}: {skill} (95% CI {low} to {high})", a=result.model,
                b=result.compare_model, name=s.name, skill=fmt(s.skill), low=fmt(s.ci.to_list()[0]),
                high=fmt(s.ci.to_list()[1]))


def series_crps(crps: float, group_crps: float) -> Text:
    return text("Mean CRPS of this series: {crps:.3f} (group mean {group}).", "note", crps=crps, group=fmt(group_crps))
