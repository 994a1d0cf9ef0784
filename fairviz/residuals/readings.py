"""Every sentence the Residual Distribution Fairness page, the report and the JSON write ([1]).

The JSON's warnings are plain strings (``no_knee``, ``small_groups``, …); the display list's paragraphs are
``fairviz.core.display.Text`` built from our templates, so a group name is data wherever it appears.
"""
from __future__ import annotations

import pandas as pd

from fairviz.core.display import Table, Text, join, text
from fairviz.core.focus import Focus
from fairviz.core.wording import fmt, fmt_interval, fmt_p, significance_words

# ----------------------------------------------------------------------------------------------- JSON warnings


def no_knee(group: str) -> str:
    return f"No knee found for group '{group}' (too few rows or a flat curve): F_h and F_v are undefined."


def small_groups(small: list[tuple[str, int]], reliable_n: int) -> str:
    """[1] App. B: knees of groups under ``reliable_n`` rows move with the sample."""
    named = ", ".join(f"{name} ({n:,})" for name, n in small)
    return f"Knees need about {reliable_n:,} rows per group to be reliable; smaller here: {named}."


def pooled_knee_near_zero() -> str:
    return ("A pooled knee lies near 0 (percentile or residual): F_h/F_v divide by it and can explode; "
            "read F_h_abs/F_v_abs instead.")


def rounded_grid(step: float, max_support: int) -> str:
    return (f"Resampling ran on residuals rounded to a grid of step {step:.4f} "
            f"(more than {max_support:,} distinct values); point estimates are exact.")


def rounded_grid_regression(step: float, max_support: int, unit: str) -> str:
    return (f"Resampling ran on residuals rounded to a grid of step {step:.4g} {unit} over the data's range "
            f"(more than {max_support:,} distinct values); point estimates are exact.")


def grid_error(measured: float, unit: str | None) -> str:
    """The grid's effect on F_dist, measured on this data (appended to ``rounded_grid_regression``)."""
    return f" On this grid F_dist moves by at most {measured:.2g} {unit} (measured on every pair)."


MULTICLASS = ("The residual distribution reads one score per row: pick a class in the sidebar to audit it "
              "one-vs-rest.")


# ----------------------------------------------------------------------------------------------- the page's frame

INTRO = text("Each curve sorts one group's residuals D = score − label from most under-predicted (left) to most "
             "over-predicted (right). Matching curves mean the model errs alike for every group; knees (◆) mark "
             "where a group's errors change regime.", "note")


def regression_intro(unit: str) -> Text:
    return text("Each curve sorts one group's residuals D = ŷ − y, in units of {unit}, from most under-predicted "
                "(left) to most over-predicted (right). Matching curves mean the model errs alike for every group; "
                "knees (◆) mark where a group's errors change regime.", "note", unit=unit)


REGRESSION_NOTE = text("Regression: there is no outcome to split by and no threshold, so the by-outcome curves and "
                       "metrics, the rates at τ (Theorem 6.1), threshold invariance and the ECE-based verdict are "
                       "left out.", "note")


def null_control(seed: int) -> Text:
    return text("Null control: group labels are randomly permuted (seed {seed}). Differences below are noise.",
                "finding", seed=seed)


def warning(message: str) -> Text:
    """A warning of the analysis (it may name a group: all of it is data)."""
    return text("{message}", "caveat", message=message)


# ----------------------------------------------------------------------------------------------- curves and pairs

def curves_reading(audit, focus: Focus = Focus()) -> Text:
    """Where the groups' typical errors lie, then the pair the page reads first ([1] §5): the reference group
    against the Summary's top group (``focus``), never a group under the size floor; every pair is in the table."""
    large = [g for g in audit.groups if g.n >= focus.min_group_size]
    spread = _spread(large if len(large) >= 2 else audit.groups, focus.min_group_size if len(large) >= 2 else None)
    pair = focus.pair({g.name: g.n for g in audit.groups})
    record = _pair_record(audit.pairs, pair) if pair else None
    if record is None:
        if pair is None and audit.pairs:
            return join(spread, text(" No other group has {floor:,} rows or more to compare with the reference, so "
                                     "no pair is read here: the groups are too small to tell (the pair table has "
                                     "every pair).", floor=focus.min_group_size))
        return spread
    group, reference = pair
    return join(spread, text(" *{g}* against the reference *{r}*: F_dist = {dist} (area between their curves), "
                             "{words}.", g=group, r=reference,
                             dist=fmt(record.f_dist) + (f" {audit.unit}" if audit.numeric_target else ""),
                             words=significance_words(record.p_dist)))


def _spread(groups, floor: int | None = None) -> Text:
    """The lowest and highest median residual, with enough digits to tell them apart (or "the same"); among the
    groups of ``floor`` rows or more when given (a tiny group's median is mostly noise)."""
    ordered = sorted(groups, key=lambda g: g.median_residual)
    low, high = ordered[0], ordered[-1]
    low_m, high_m = _apart(low.median_residual, high.median_residual)
    among = f" among groups of {floor:,}+ rows" if floor is not None else ""
    if low_m == high_m:
        return text("**Reading.** Typical error (median residual) is the same, {m}, for every group{among}.",
                    m=low_m, among=among)
    return text("**Reading.** Typical error (median residual){among} runs from {low_m} for *{low}* to {high_m} for "
                "*{high}*.", among=among, low_m=low_m, low=low.name, high_m=high_m, high=high.name)


def _apart(a: float, b: float) -> tuple[str, str]:
    """Two numbers with 3 digits, or up to 6 where 3 would print two different values alike."""
    for digits in (3, 4, 5, 6):
        x, y = fmt(a, digits), fmt(b, digits)
        if x != y:
            return x, y
    return fmt(a), fmt(b)


def _pair_record(pairs, pair: tuple[str, str]):
    return next((p for p in pairs if {p.group_i, p.group_j} == set(pair)), None)


def pairs_note(params) -> Text:
    return text("F_pattern = 1 − |median_i − median_j|/2 (1 = equal typical error). F_dist = Wasserstein-1 distance "
                "between the residual distributions (0 = identical). F_h/F_v compare knee positions/heights, "
                "normalised by the pooled curve's knees (unstable when those are near 0: see F_h_abs/F_v_abs). "
                "Intervals: {b} bootstrap resamples within each group ({kb} for F_h/F_v, knees re-detected); "
                "p-values: {b} permutations of group labels. F_dist Y=0 and Y=1 both 0 ⇔ equalized odds at every "
                "threshold (Theorem A.3); equal medians alone do not imply it.", "note",
                b=params.resamples, kb=params.knee_resamples)


def regression_pairs_note(params, unit: str, span: float) -> Text:
    return text("F_pattern = 1 − |median_i − median_j| / {span} (the range of D here, in {unit}; 1 = equal typical "
                "error). F_dist = Wasserstein-1 distance between the residual distributions, in {unit} "
                "(0 = identical). F_h/F_v compare knee positions/heights, normalised by the pooled curve's knees. "
                "Intervals: {b} bootstrap resamples within each group ({kb} for F_h/F_v, knees re-detected); "
                "p-values: {b} permutations of group labels.", "note",
                span=fmt(span, 4), unit=unit, b=params.resamples, kb=params.knee_resamples)


def pair_warning(group_i: str, group_j: str, message: str) -> Text:
    return text("⚠ {i} vs {j}: {message}", "note", i=group_i, j=group_j, message=message)


# ----------------------------------------------------------------------------------------------- groups

DECOMPOSITION = text("**Mean decomposition (Theorem A.1):** the gap in mean residual equals the gap in mean score "
                     "minus the gap in base rate, exactly.")

BASE_RATES = text("Base rates matter: a perfectly calibrated model on groups with different base rates has equal mean "
                  "residuals, yet its residual distributions (and medians) can still differ. Read F_dist and "
                  "F_pattern next to the base rates.", "note")


def regression_decomposition(unit: str) -> Text:
    return text("**Mean decomposition (Theorem A.1):** the gap in mean residual equals the gap in mean prediction "
                "minus the gap in mean target, exactly (all in {unit}).", unit=unit)


def knees_note(knees) -> Text:
    """How the knees were found ([1] §7.1)."""
    return text("Knees (§7.1): each group's sorted residuals are smoothed by LOWESS (span {frac:g}, {iterations} "
                "robustness iterations) and read by Kneedle (S = {s:g}) over every row of the group; above "
                "{points:,} rows, over that many evenly spaced percentiles (at 40,000 rows this moved the knees by "
                "0.00003 in our tests).", "note", frac=knees.frac, iterations=knees.iterations,
                s=knees.sensitivity, points=knees.max_points)


# ----------------------------------------------------------------------------------------------- Theorem 6.1

THRESHOLD_NOTE = text("Theorem 6.1: FPR(τ) = P(D ≥ τ | Y=0), TPR(τ) = P(D ≥ τ−1 | Y=1), and the positive rate is "
                      "their base-rate-weighted mix. The residual CDFs therefore contain every threshold's DP and EO "
                      "gaps; move τ in the sidebar to see both columns agree.", "note")


# ----------------------------------------------------------------------------------------------- knee concentration

def concentration_explanation(c) -> str:
    """What the calibration regime expects of the knees ([1] §8.2), and what the data show."""
    expectation = ("errors should concentrate in knee regions (ratio > 1.5)" if c.ece < 0.15
                   else "errors should be spread out (ratio between 0.8 and 1.2); knees then mark where behaviour "
                        "changes")
    return (f"ECE {c.ece:.3f} is {c.regime}: {expectation}. Knee rows have mean |D| {c.knee_mean:.3f}, "
            f"other rows {c.nonknee_mean:.3f}, ratio {c.ratio:.2f}.")


def concentration_verdict(c) -> Text:
    return text("**Knees {are} diagnostic here ({verdict}{borderline}).** {explanation}", "finding",
                are="are" if c.verdict == "supported" else "are not", verdict=c.verdict,
                borderline=", borderline" if c.borderline else "", explanation=concentration_explanation(c))


def concentration_metrics(c) -> list[tuple[str, str, str | None]]:
    """(label, value, help) of the headline numbers."""
    return [("Error ratio knee / elsewhere", f"{fmt(c.ratio, 2)}×", f"95% CI {fmt_interval(c.ratio_ci, 2)}"),
            ("Mann–Whitney p (two-sided)", fmt_p(c.mann_whitney.p_two_sided), None),
            ("ECE (15 bins)", fmt(c.ece), f"95% CI {fmt_interval(c.ece_ci)}"),
            ("Calibration regime", c.regime, None)]


def concentration_note(c, resamples: int) -> Text:
    return text("Ratio CI {ci} ({b} row resamples, regions fixed). Rule of the paper (§8.2): ECE < 0.15 → ratio > 1.5 "
                "expected; ECE ≥ 0.15 → 0.8–1.2 expected. The verdict reads the unrounded ratio; 'borderline' marks a "
                "ratio that rounds to a boundary at one decimal (the precision of the paper's Table 2), where the "
                "printed table could read either way. Caveat: knee regions near the ends include the tails, which "
                "hold the largest errors, so part of any ratio is mechanical; compare with the random-groups null "
                "control in the sidebar.", "note", ci=fmt_interval(c.ratio_ci, 2), b=resamples)


def regression_concentration_metrics(c) -> list[tuple[str, str, str | None]]:
    """(label, value, help) of a regression's headline numbers: no ECE, no regime."""
    return [("Error ratio knee / elsewhere", f"{fmt(c.ratio, 2)}×", f"95% CI {fmt_interval(c.ratio_ci, 2)}"),
            ("Mann–Whitney p (two-sided)", fmt_p(c.mann_whitney.p_two_sided), None)]


def regression_concentration(c, unit: str) -> Text:
    return text("Knee rows have mean |D| {knee} {unit}, other rows {rest} {unit}: ratio {ratio} (95% CI {ci}). The "
                "paper's verdict reads this ratio against the ECE regime, which a regression has not, so none is "
                "given.", "note", knee=fmt(c.knee_mean), rest=fmt(c.nonknee_mean), unit=unit, ratio=fmt(c.ratio, 2),
                ci=fmt_interval(c.ratio_ci, 2))


CALIBRATE_THEN_RERUN = text("Calibrate, then re-run (Fairness Beyond Metrics, Tables 2 and 7)", "subheading")


def calibrate_first(c) -> Text:
    """[1] §8.2: with ECE ≥ 0.15 the knees are not yet diagnostic; the checklist's first step is to recalibrate."""
    return text("**Calibrate first.** ECE {ece} (95% CI {ci}) is in the poor regime (≥ 0.15). "
                "*Fairness Beyond Metrics* finds knees diagnostic only for calibrated models: below ECE 0.15 the "
                "error concentrates in the knee regions, above it the error spreads along the whole curve (its Table "
                "2), so these knees do not yet mark where the errors sit. Recalibrate (Calibration page, Recalibration "
                "tab, *Add as a model*), then re-run this audit on the recalibrated model.", "finding",
                ece=fmt(c.ece), ci=fmt_interval(c.ece_ci))


def calibration_shape_table(shape) -> Table:
    """Table 2's two rows and Table 7's ECE before and after, on this data."""
    rows = [(role, model, c) for role, model, c in (("before", shape.before_model, shape.before),
                                                      ("after", shape.after_model, shape.after))]
    frame = pd.DataFrame({
        "step": [r for r, _, _ in rows], "model": [m for _, m, _ in rows],
        "ece": [c.ece for _, _, c in rows], "ece_ci": [(c.ece_ci.low, c.ece_ci.high) for _, _, c in rows],
        "regime": [c.regime for _, _, c in rows], "ratio": [c.ratio for _, _, c in rows],
        "ratio_ci": [(c.ratio_ci.low, c.ratio_ci.high) for _, _, c in rows],
        "verdict": [c.verdict + (" (borderline)" if c.borderline else "") for _, _, c in rows]})
    return Table(frame, "calibration_shape",
                 {"step": "text", "model": "text", "ece": "num", "ece_ci": "ci", "regime": "text", "ratio": "num2",
                  "ratio_ci": "ci", "verdict": "text"},
                 {"step": "", "ece": "ECE (15 bins)", "ece_ci": "ECE 95% CI", "regime": "calibration regime",
                  "ratio": "error ratio knee / elsewhere", "ratio_ci": "ratio 95% CI", "verdict": "knees diagnostic"})


def calibration_shape_reading(shape) -> Text:
    """Before → after in words, and what it means for reading the knees."""
    b, a = shape.before, shape.after
    if a.verdict == "supported" and a.regime != "poor":
        meaning = "after recalibration the knees are diagnostic: read D* on the recalibrated model."
    elif a.regime == "poor":
        meaning = ("the recalibrated scores are still poorly calibrated: try another method or a larger calibration "
                   "split.")
    else:
        meaning = ("the knees do not concentrate the error even with calibrated scores: on this data they mark where "
                   "the model's behaviour changes rather than where its errors sit.")
    return text("**Before and after recalibration** (the paper's Tables 2 and 7 on this data): *{before}* → "
                "*{after}*: ECE {eb} ({rb}) → {ea} ({ra}); knee/elsewhere error ratio {xb} → {xa}; verdict {vb} → "
                "{va}. So {meaning}",
                before=shape.before_model, after=shape.after_model, eb=fmt(b.ece), rb=b.regime, ea=fmt(a.ece),
                ra=a.regime, xb=fmt(b.ratio, 2), xa=fmt(a.ratio, 2), vb=b.verdict, va=a.verdict, meaning=meaning)


def calibration_shape_note(shape) -> Text:
    """Which rows each line reads, and where the recalibrated model comes from."""
    where = ("It is one of this session's models." if shape.added else
             "It was computed for this view (temperature scaling, the method of the paper's Table 7) and not added: "
             "add it, or another method, on the Calibration page to audit it on every page.")
    return text("Both lines read every row, knees found again on the recalibrated scores. The recalibration: {how} "
                "Its ECE here includes its own calibration rows, so it is slightly optimistic; the Calibration page "
                "judges it on the held-out rows. {where}", "note", how=shape.how, where=where)


# ----------------------------------------------------------------------------------------------- D*

def diagnostic_set(rows: int, share: float, params) -> Text:
    return text("**{rows:,} rows** ({share:.1%}) lie within ε = {eps} ({mode} mode) of their group's knees. These are "
                "the examples to read and probe first: where the model's behaviour changes for each group.",
                rows=rows, share=share, eps=str(params.region_eps), mode=params.region_mode)


def counts_only_dstar(shuffled: bool) -> Text:
    """D* of an upload the engine reduced to counts, when the file's own rows cannot be fetched."""
    why = (" while the groups are shuffled (null control)." if shuffled else
           "; to see each row's other columns (text, id, features), upload the file again or map them on the Home "
           "page (the file is then read row by row).")
    return text("This upload was reduced to counts per group, label and score, so D* lists those columns only{why}",
                "note", why=why)


# ----------------------------------------------------------------------------------------------- threshold invariance

def invariance_reading(result, gap_metrics, metric_names) -> Text:
    """[1] App. D.1: the RDF metrics do not move with τ; the classical gaps do (the largest CV named)."""
    worst = None
    for p in result.pairs:
        for m in gap_metrics:
            if p.cv.get(m) is not None and (worst is None or p.cv[m] > worst[0]):
                worst = (p.cv[m], m, p)
    base = "The RDF metrics have CV 0% over τ = 0.1…0.9: they do not depend on the threshold (App. D.1, Table 5)."
    if worst is None:
        return text(base)
    return text(base + " The classical gaps do: the largest CV is {cv:.1f}% ({metric}, {i} vs {j}).",
                cv=worst[0], metric=metric_names[worst[1]], i=worst[2].group_i, j=worst[2].group_j)


def cv_percent(cv: float | None) -> str:
    """A CV% cell as the table reads it: two decimals, "undefined" where the CV is undefined."""
    return "undefined" if cv is None or cv != cv else f"{cv:.2f}%"


INVARIANCE_NOTE = text("CV% = 100 · std (population) / |mean| over the nine thresholds; gaps are absolute (|i − j|) "
                       "and ratios min/max. A CV is 'undefined' where a rate is undefined at some τ or the mean is 0.",
                       "note")
