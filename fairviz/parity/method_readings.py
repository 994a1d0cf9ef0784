"""The sentences of regression and multiclass parity: what each number means and how sure it is (CI, p, the
Benjamini–Hochberg-adjusted p, the group sizes). A group under the Summary's size floor (the
method's ``min_group_size``) is described, never headlined. Names and
units are data: they go into fields, never into the template (``fairviz.core.display.text``)."""
from __future__ import annotations

from fairviz.core.display import Text, join, text
from fairviz.core.stats import fewest_permutations, permutations_can_reject
from fairviz.core.wording import fmt, fmt_p
from fairviz.parity.one_vs_rest import ClassGroup, MulticlassParity
from fairviz.parity.error_parity import PAIR_STATS, RegressionPair, RegressionParity

RATE_WORDS = {"tpr": "true positive rate (rows of the class predicted as it)",
              "fpr": "false positive rate (rows of other classes predicted as it)",
              "ppr": "selection rate (rows predicted as the class)"}
STAT_WORDS = {"bias_gap": "bias gap", "mae_gap": "MAE gap", "rmse_gap": "RMSE gap", "w1": "Wasserstein-1 distance",
              "ks": "KS distance", "auc": "statistical-parity AUC", "bounded_mse": "worst-group MSE",
              "bounded_mae": "worst-group MAE", "proxy_gap": "proxy-class GAP(TPR)"}


def _in(units: str | None) -> str:
    return f" {units}" if units else ""


def _ci(interval) -> str:
    if interval is None:
        return "CI undefined"
    low, high = interval.to_list() if hasattr(interval, "to_list") else interval
    return "CI undefined" if low is None or high is None else f"95% CI [{low:+.3f}, {high:+.3f}]"


# ----------------------------------------------------------------------------------------------- regression

def untested_reason(permutations: int, alpha: float) -> str:
    """Why a section's permutation tests cannot reject (said instead of "no gap", which nothing tested)."""
    return (f"{permutations:,} permutation{'' if permutations == 1 else 's'} of group labels cannot reach "
            f"α = {alpha:g} (the smallest p-value is 1/(permutations + 1); --resamples "
            f"{fewest_permutations(alpha)} or more can)")


def regression_about(units: str | None) -> Text:
    return text("Errors are ŷ − y{units}: a positive bias over-predicts. Each gap is group − reference; its "
                "p-value comes from shuffling group labels, and the adjusted p corrects for the number of pairs "
                "(Benjamini–Hochberg).", "note", units=f", in {units}" if units else "")


def regression_headline(result: RegressionParity) -> Text:
    """The section's point: the strongest test beyond noise, or that none is."""
    flagged = result.flagged()
    if not permutations_can_reject(result.params.permutations, result.params.alpha):
        return text("Not tested: {why}, so the gaps are point estimates without a test (the Summary tests the bias "
                    "and MAE gaps by Welch's t-test).", "finding",
                    why=untested_reason(result.params.permutations, result.params.alpha))
    if not flagged:
        return text("No gap between groups ({count} tests: errors, predictions, worst-group loss, proxy classes) is "
                    "beyond sampling noise once the number of tests is accounted for.", "finding",
                    count=len(result.pairs) * 6 + 3)
    pairs = [f for f in flagged if isinstance(f[1], RegressionPair) and f[1].against_reference]
    # a comparison with the reference reads first; among equals, errors before distances, then the largest gap
    what, subject, p = min(pairs or flagged, key=lambda f: (f[2], _order(f[0]), -abs(_size(f))))
    units = result.params.units
    if isinstance(subject, RegressionPair):
        return join(pair_sentence(subject, what, units),
                    text(" Beyond noise after correcting for {families} families of tests (family-adjusted p {p}).",
                         families=result.families(), p=fmt_p(p)), level="finding")
    if what.startswith("bounded"):
        return join(bounded_sentence(subject, result.params.min_group_size, units), level="finding")
    return join(proxy_sentence(result), level="finding")


def _order(what: str) -> int:
    return PAIR_STATS.index(what) if what in PAIR_STATS else len(PAIR_STATS)


def _size(flag) -> float:
    what, subject, _ = flag
    if isinstance(subject, RegressionPair):
        value = subject.values[what]
        return value - 0.5 if what == "auc" else value
    return 0.0


def pair_sentence(pair: RegressionPair, stat: str, units: str | None = None) -> Text:
    g, o, v = pair.group, pair.other, pair.values
    sure = (f"p {fmt_p(pair.p_values[stat])}, adjusted {fmt_p(pair.p_adjusted.get(stat))}; "
            f"n = {pair.n_group:,} and {pair.n_other:,}")
    if stat == "bias_gap":
        direction = "over-predicted" if v[stat] > 0 else "under-predicted"
        return text("**{g}** is {direction} by {size}{units} more than **{o}** on average (bias gap {value:+.3f}, "
                    "{ci}; {sure}).", g=g, o=o, direction=direction, size=fmt(abs(v[stat])), units=_in(units),
                    value=v[stat], ci=_ci(pair.intervals[stat]), sure=sure)
    if stat in ("mae_gap", "rmse_gap"):
        name = "MAE" if stat == "mae_gap" else "RMSE"
        ratio = v[stat.replace("gap", "ratio")]
        return text("**{g}**'s {name} is {size}{units} {more} than **{o}**'s ({ratio}× theirs; gap {value:+.3f}, "
                    "{ci}; {sure}).", g=g, o=o, name=name, size=fmt(abs(v[stat])), units=_in(units),
                    more="larger" if v[stat] > 0 else "smaller", ratio=fmt(ratio, 2), value=v[stat],
                    ci=_ci(pair.intervals[stat]), sure=sure)
    if stat == "auc":
        return text("A random row of **{g}** is predicted higher than a random row of **{o}** {pct} of the time "
                    "(statistical-parity AUC {value}; ½ = no ordering; {sure}).", g=g, o=o,
                    pct=f"{100 * v[stat]:.1f}%", value=fmt(v[stat]), sure=sure)
    label = "Wasserstein-1" if stat == "w1" else "Kolmogorov–Smirnov"
    meaning = (f"moving one group's predictions onto the other's takes {fmt(v[stat])}{_in(units)} per row"
               if stat == "w1" else f"the share of rows predicted below some value differs by up to "
                                    f"{100 * v[stat]:.1f} points")
    return text("The predictions of **{g}** and **{o}** differ: {label} distance {value} ({meaning}; {sure}).",
                g=g, o=o, label=label, value=fmt(v[stat]), meaning=meaning, sure=sure)


def bounded_sentence(bounded, floor: int, units: str | None = None) -> Text:
    """The worst-served group, a finding when it has at least ``floor`` rows (the Summary's size floor)."""
    name = bounded.loss.upper()
    squared = f" ({units})²" if units and bounded.loss == "mse" else _in(units)
    return text("The worst-served group is **{group}** (n = {n}): {name} {value}{units} ({ci}) against {overall} "
                "over all rows; a worst group this bad arises from shuffled group labels with p {p}.",
                "finding" if bounded.n >= floor else "plain", group=bounded.group, n=f"{bounded.n:,}",
                name=name, value=fmt(bounded.value), units=squared, ci=_ci(bounded.interval).replace("+", ""),
                overall=fmt(bounded.overall), p=fmt_p(bounded.p_value))


def proxy_sentence(result: RegressionParity) -> Text:
    proxy = result.proxy
    return text("Cut at its quantiles into {k} classes (as in *Systematic Evaluation of Predictive Fairness*), the "
                "target's class is predicted equally often across groups up to GAP(TPR) = {gap} (0: equal; "
                "p {p}, group labels shuffled). Pearson r between target and prediction differs by {pearson} "
                "between the groups.", k=proxy.n_classes, gap=fmt(proxy.value), p=fmt_p(proxy.p_value),
                pearson=fmt(proxy.pearson_gap))


# ----------------------------------------------------------------------------------------------- multiclass

def multiclass_headline(result: MulticlassParity) -> Text:
    gap = result.gaps["tpr"]
    worst = max(((c, v) for c, v in zip(result.classes, gap.per_class) if v == v), key=lambda x: x[1],
                default=(None, float("nan")))
    flagged = result.flagged()
    verdict = ("beyond sampling noise" if any(k == "gap_tpr" for k, _, _ in flagged)
               else "within what shuffled group labels give")
    if not permutations_can_reject(result.params.permutations, result.params.alpha):
        verdict = f"not tested: {untested_reason(result.params.permutations, result.params.alpha)}"
    parts = text("GAP(TPR) = {gap} over {k} classes (root mean square over classes of how far each group's true "
                 "positive rate sits from the class's overall rate; 0: every group is recognised equally well): "
                 "{verdict} (p {p}).", "finding", gap=fmt(gap.value), k=len(result.classes), verdict=verdict,
                 p=fmt_p(gap.p_value))
    if worst[0] is None:
        return parts
    return join(parts, text(" The class that contributes most is **{c}** ({v}).", c=worst[0], v=fmt(worst[1])),
                level="finding")


def cell_sentence(cell: ClassGroup, reference: str) -> Text:
    gap, ci = cell.gaps["tpr_gap"], cell.gap_intervals["tpr_gap"]
    head = ("Rows of class **{c}** in **{g}** are recognised {pct} points {more} often than in **{ref}** "
            "(TPR gap {gap:+.3f}, {ci}).") if gap is not None else "Class **{c}** has no rows in **{g}**."
    return text(head + " OFI {ofi} (p {p}, adjusted over classes × groups {padj}): {reading}; DI {di} "
                "({rule}). n = {n}.", c=cell.class_name, g=cell.group, ref=reference,
                pct=fmt(abs(100 * gap), 1) if gap is not None else "", more="more" if (gap or 0) > 0 else "less",
                gap=gap or 0.0, ci=_ci(ci), ofi=fmt(cell.ofi), p=fmt_p(cell.ofi_p), padj=fmt_p(cell.ofi_p_adjusted),
                reading=cell.reading, di=fmt(cell.di), rule=cell.four_fifths, n=f"{cell.counts.n:,}")


def most_disparate_cell(result: MulticlassParity) -> ClassGroup | None:
    """The class × group with the largest |TPR gap| among groups at or above the size floor."""
    sizes = {g.name: g.n for g in result.groups}
    cells = [c for c in result.per_class if c.gaps["tpr_gap"] is not None and sizes[c.group] >= result.params.min_group_size]
    return max(cells, key=lambda c: abs(c.gaps["tpr_gap"]), default=None)


def performance_sentence(result: MulticlassParity) -> Text:
    big = [g for g in result.groups if g.n >= result.params.min_group_size] or list(result.groups)
    low, high = min(big, key=lambda g: g.macro_f1), max(big, key=lambda g: g.macro_f1)
    return text("Macro-F1 (the mean over classes of each class's F1) ranges from {lo} for **{lg}** ({lci}, n = "
                "{ln}) to {hi} for **{hg}** ({hci}, n = {hn}); overlapping intervals mean the gap may be noise.",
                lo=fmt(low.macro_f1), lg=low.name, lci=_ci(low.intervals["macro_f1"]).replace("+", ""),
                ln=f"{low.n:,}", hi=fmt(high.macro_f1), hg=high.name,
                hci=_ci(high.intervals["macro_f1"]).replace("+", ""), hn=f"{high.n:,}")
