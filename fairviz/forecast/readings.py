"""Forecast fairness in words ([3] ch. 5): what the page, the HTML report and the terminal say about a result.

Names of groups and models are fields of the templates (``fairviz.core.display.text``), never part of them, so a
group named ``**x**`` reads as typed wherever it is shown.
"""
from __future__ import annotations

import numpy as np

from fairviz.core.display import Text, join, text
from fairviz.core.wording import fmt, fmt_interval
from fairviz.forecast.results import ForecastAudit, GroupScores, GroupSkill

HONESTY_WORDS = {"too wide": "too wide", "too narrow": "too narrow", "about right": "about right",
                 "unknown": "too few series to tell"}

ABOUT = ("Quantile forecasts for several groups: is the forecast as accurate (CRPS, pinball loss), as sharp (band "
         "width) and as honest (coverage of its bands) for every group? Intervals resample whole series within each "
         "group (a cluster bootstrap), because the steps of one series are not independent.")
ACCURACY_NOTE = ("CRPS here is 2 Σ_j w_j ρ_τj(y − q_j): the pinball loss integrated over the given quantile levels "
                 "with cell-width weights w_j (each level's cell on [0, 1], edges halfway between neighbours; exact "
                 "for levels (j − ½)/c, an approximation for sparse levels). A narrower band is only better if its "
                 "coverage holds: read width next to coverage.")
def crps_form_note(result) -> Text:
    """Which CRPS is shown, and what the equal-weight form (another library's) gives on these levels."""
    ours = result.overall.crps
    return text("The equal-weight form 2/c Σ_j ρ_τj (every level alike, as in scoringrules' quantile CRPS) gives "
                "{equal} on these {c} levels, {diff} of the cell-width value {ours}: compare CRPS across tools only "
                "in the same form.", "note", equal=fmt(result.crps_equal_weights), c=len(result.levels),
                diff=f"{result.crps_equal_weights / ours - 1:+.1%}" if ours else "—", ours=fmt(ours))


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


def verdict_level(result: ForecastAudit) -> str:
    """How the summary reads: an error-coloured finding when the headline band's largest coverage gap excludes 0
    and is at least 0.05, a caveat when it excludes 0 but is smaller, a plain finding otherwise."""
    band = result.headline_band
    gap = result.largest_gap(band) if band is not None else None
    if gap is None or not gap.excludes_zero:
        return "finding"
    return "error" if abs(gap.gap) >= 0.05 else "caveat"


def summary(result: ForecastAudit) -> Text:
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


def source_line(source: str, n_rows: int, result: ForecastAudit) -> Text:
    return text("{source}: model '{model}', {n_rows} rows, attribute '{attribute}'", "heading", source=source,
                model=result.model, n_rows=f"{n_rows:,}", attribute=result.attribute)


def group_line(g: GroupScores) -> Text:
    """One group's scores in a line (the terminal)."""
    cover = ", ".join(f"{100 * float(b):g}% {fmt(v)}" for b, v in g.coverage.items())
    return text("{name}: {n_series} series, CRPS {crps}, pinball {pinball}, coverage {cover}", name=g.name,
                n_series=f"{g.n_series:,}", crps=fmt(g.crps), pinball=fmt(g.pinball), cover=cover)


def skill_line(result: ForecastAudit, s: GroupSkill) -> Text:
    """The skill of A over B on one group, with its interval, in a line (the terminal)."""
    return text("skill of '{a}' over '{b}' on {name}: {skill} (95% CI {low} to {high})", a=result.model,
                b=result.compare_model, name=s.name, skill=fmt(s.skill), low=fmt(s.ci.to_list()[0]),
                high=fmt(s.ci.to_list()[1]))


def series_crps(crps: float, group_crps: float) -> Text:
    return text("Mean CRPS of this series: {crps:.3f} (group mean {group}).", "note", crps=crps, group=fmt(group_crps))


# ----------------------------------------------------------------------------------------------- Lorenz & PTN

def divergence_time(div) -> str:
    return "not within t ≤ 100" if not np.isfinite(div.divergence_time) else f"t = {div.divergence_time:.1f}"


def float_resolution(delta: float, x0: float) -> Text:
    return text("A change of {delta:.0e} is below float64 resolution at x₀ = {x0:g}: both starts are the same number, "
                "so they never separate. Pick a larger perturbation.", "caveat", delta=delta, x0=x0)


def butterfly(div, delta: float) -> Text:
    """What the butterfly effect means for forecasting ([3] §5.3)."""
    when = "" if not np.isfinite(div.divergence_time) else f" (by t ≈ {div.divergence_time:.0f})"
    return text("**Reading.** Two starts {delta:.0e} apart in x stay together for a while, then the gap grows about "
                "as e^({rate}·t) until the trajectories are unrelated{when}. This is why one deterministic forecast "
                "of a chaotic system is trustworthy only at short leads, and why the PTN forecasts a distribution.",
                delta=delta, rate=fmt(div.growth_rate(), 2), when=when)


RK4_NOTE = ("Vectorised RK4 on the thesis's grid (1,000 points on [0, 100], 10 internal steps between points); it "
            "agrees with scipy's DOP853 to 1e-6 over short horizons at 100 internal steps (tested).")


def fan(score) -> Text:
    """One fan against the truth and the Gaussian-NVAR baseline ([3] Figs. 5.5–5.6)."""
    better = "the PTN is better" if score.crps < score.crps_baseline else "the baseline is better"
    head = text("**Reading.** CRPS of this forecast: {crps:.3f} (PTN) vs {base:.3f} (Gaussian around the NVAR "
                "forecast, sd = its mean absolute error per lead); {better} here. The truth is inside the 50% band at "
                "{in50:.0f}% of the 16 steps and inside the 90% band at {in90:.0f}%. ", crps=score.crps,
                base=score.crps_baseline, better=better, in50=100 * score.inside[0.5], in90=100 * score.inside[0.9])
    steps = score.multimodal_steps
    if not steps.size:
        return join(head, "The density has one mode at every step.")
    return join(head, text("The density has {modes} separate modes at step(s) {steps}: the PTN sees several possible "
                           "routes; the median can sit between them, where the system may never go ([3] Fig. 5.6).",
                           modes=int(score.modes.max()), steps=", ".join(map(str, steps))))


def skill_verdict(skill) -> Text:
    """The Table 5.2 reading: skill at the median CRPS and the share of forecasts the PTN wins."""
    return text("**Skill at the median CRPS: {q2}** (1 − CRPS_PTN/CRPS_baseline at the second quartile of {n} test "
                "forecasts); the PTN's forecast beats the baseline's in {won:.1f}% of them. Thesis (chaos, vs "
                "deterministic): 0.57 and 94.3%.", "finding" if skill.quartiles[1] > 0 else "error",
                q2=fmt(skill.quartiles[1], 2), n=f"{skill.n:,}", won=100 * skill.outperformed)


SKILL_SCORE_NOTE = ("Skill score SS = 1 − CRPS_model/CRPS_baseline at the quartiles of each model's per-forecast CRPS "
                    "(Eq. 5.10; the thesis reports quartiles because per-forecast skill is heavily left-skewed). The "
                    "baseline is the thesis's: a normal distribution around the NVAR forecast with sd = the NVAR's "
                    "mean absolute error at that lead (on the validation split), scored with the same 111 levels. Our "
                    "PTN is CPU-sized, trained for minutes on a fraction of the thesis's data, so compare the form, "
                    "not the numbers.")


def band_honesty(evaluation) -> Text:
    over = evaluation.coverage[0.5] - 0.5
    words = "too wide" if over > 0.03 else "too narrow" if over < -0.03 else "about right"
    return text("**Reading.** A band is honest when its coverage matches its name. The PTN's 50% band holds the truth "
                "{c50:.0f}% of the time ({words}); the Gaussian baseline's 90% band only {b90:.0f}%: around a wrong "
                "deterministic forecast a single bell curve is both too narrow and centred in the wrong place.",
                c50=100 * evaluation.coverage[0.5], words=words, b90=100 * evaluation.coverage_baseline[0.9])


def training_note(skill, meta: dict) -> Text:
    return text("Test windows: {n}. Training: {seconds:.0f} s on {device} ({per_epoch:.2f} s per epoch). Raw "
                "(unsorted) ordering penalty {penalty}: outputs are sorted before use.", "note", n=f"{skill.n:,}",
                seconds=meta.get("train_seconds", float("nan")), device=meta.get("device", "cpu"),
                per_epoch=meta.get("seconds_per_epoch", float("nan")), penalty=fmt(meta.get("raw_order_penalty"), 4))


def trained_skill(skill) -> Text:
    """A trained PTN's skill against the Gaussian-NVAR baseline, in a line (the page and ``fairviz ptn train``)."""
    return text("Skill vs the Gaussian-NVAR baseline at the CRPS quartiles: {quartiles}; {won:.1f}% of {n} test "
                "forecasts outperformed.", quartiles=", ".join(fmt(v, 2) for v in skill.quartiles),
                won=100 * skill.outperformed, n=f"{skill.n:,}")


def search_best(result) -> Text:
    """The genetic search's best candidate ([3] Algorithm 2)."""
    best = result.ranking[0]
    stopped = ", stopped early (no improvement of the best f_v)" if result.stopped_early else ""
    return text("**Best candidate: agent {id}** (generation {generation}): f = {f:.4f}, f_v = {fv:.4f}. {runs} "
                "generation(s) run{stopped}. Best f_v after each generation: {history}.", id=best.id,
                generation=best.generation, f=best.fitness, fv=best.val_fitness, runs=result.generations_run,
                stopped=stopped, history=", ".join(f"{v:.4f}" for v in result.best_by_generation))


def trained_run(trained) -> Text:
    return text("{seconds:.0f} s on {device}. The DARTS weights show which operation each cell leans on (the thesis "
                "prunes the ones near zero after the search).", seconds=trained.seconds, device=trained.device)
