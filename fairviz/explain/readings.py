"""The sentences of the explanation-disparity analysis, as display-list text (``fairviz.core.display.text``):
our marks come from the templates here, names and numbers are fields, so a group called ``**x**`` stays ``**x**``.

- ``model_readings``: what the *model* does that must be read before blaming the explainers ([4] §5: the label
  depends on gender; twin predictions differ; a default-class asymmetry once the evidence is removed);
- ``overall_reading``, ``random_reading``: what the grid of tests says, and what the Random row says about it;
- the notes that go under the tests table, the heatmap and the twin pair.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairviz.core.display import Text, join, text
from fairviz.core.wording import fmt
from fairviz.explain.analysis import CONSIDERABLE_D
from fairviz.explain.registry import METHOD_NAMES, METRICS, RANDOM
from fairviz.explain.results import DisparityAudit, ExplainResult

ASYMMETRY = 0.3            # gap in mean p(gold) without evidence that counts as a default-class asymmetry
NO_EVIDENCE = {            # instance column → (how the evidence is removed, what removes it that way)
    "p_gold_empty": ("every word deleted", "AOPC comprehensiveness and sufficiency"),
    "p_gold_masked": ("every word replaced by [MASK]", "LIME and SHAP"),
    "p_gold_zeroed": ("every word embedding set to zero", "the soft metrics"),
    "p_gold_pad": ("the IG baseline [CLS] [PAD]… [SEP]", "IG and IGxI"),
}
_LEVEL = {"good": "finding", "warn": "caveat", "bad": "error", "info": "finding"}
_SOURCE_MARK = {"b": "**", "i": "*", "code": "`"}


@dataclass(frozen=True)
class ModelReading:
    """One reading about the model: ``kind`` good, warn or bad; a paragraph and, for some, one line per case."""
    kind: str
    text: Text
    lines: tuple[Text, ...] = ()

    @property
    def level(self) -> str:
        return _LEVEL[self.kind]

    def source(self) -> str:
        """The reading as the JSON's ``warnings`` have always written it: Markdown marks around our bold words,
        one ``- `` line per case."""
        head = "".join(f"{_SOURCE_MARK[s.style]}{s.text}{_SOURCE_MARK[s.style]}" if s.style else s.text
                       for s in self.text.spans)
        return "\n".join([head] + [f"- {line.plain()}" for line in self.lines])


def model_readings(result: ExplainResult, run: int | None = None) -> list[ModelReading]:
    """The model's own behaviour by group, read before the explainers' ([4] §5, Table 7):

    - the label is (or depends on) gender: a model that solves the task must use gender;
    - twin (or gender-flipped) predictions differ: the model itself treats the groups differently;
    - default-class asymmetry: the all-[MASK] input already gives one group's gold label a high probability,
      so that group's explanations have little evidence to find (comprehensiveness near 0 by construction).
    """
    out = []
    behaviours = result.meta.get("runs", {})
    keys = [str(run)] if run is not None and str(run) in behaviours else list(behaviours)
    if not keys:
        return out
    b = behaviours[keys[0]]["behaviour"]
    apd = [a for a in (behaviours[k]["behaviour"].get("apd") for k in keys) if a is not None]
    flips = [f for f in (behaviours[k]["behaviour"].get("twin_prediction_differs_same_label") for k in keys)
             if f is not None]
    if b.get("label_depends_on_group"):
        out.append(ModelReading("warn", text(
            "In this data set the label is gender or depends on it, so a model that solves the task must use "
            "gender: twin predictions differ by design. Disparities below mix the model's decision rule with the "
            "explainers' behaviour; compare every method with the Random row.", "caveat")))
    elif apd and (max(apd) >= 0.05 or (flips and max(flips) > 0)):
        how = "twins" if b.get("counterfactual") == "twins" else "the same texts with the gender word flipped"
        changed = text(", {share:.0f}% of them change class", share=100 * max(flips)) if flips else ""
        out.append(ModelReading("bad", join(
            text("The model itself uses gender: its predictions for {how} differ (mean |Δp| = {apd:.3f}",
                 how=how, apd=max(apd)), changed,
            "). Part of any explanation disparity below is model disparity, not explainer disparity.",
            level="error")))
    elif apd:
        out.append(ModelReading("good", text(
            "The model barely reacts to gender: predictions for twins / gender-flipped texts differ by {apd:.4f} on "
            "average, so disparities below come from the explainers.", "finding", apd=max(apd))))
    lines = _asymmetries(result, run)
    if lines:
        out.append(ModelReading("warn", text(
            "**Default-class asymmetry** (found by this tool's checks; not in the paper): with the evidence "
            "removed, the model falls back to one class, so sentences whose gold label is that class lose little "
            "when their important tokens are removed, and their comprehensiveness-type scores are small by "
            "construction — a model effect, not an explainer one. Which class is the fallback depends on how the "
            "evidence is removed (and can change between runs, which the pooled test then averages):", "caveat"),
            tuple(lines)))
    return out


def _asymmetries(result: ExplainResult, run: int | None) -> list[Text]:
    """One line per way of removing the evidence whose fallback favours one group by ≥ ``ASYMMETRY``."""
    gi, gj = result.groups
    inst = result.instances if run is None else result.instances[result.instances["run"] == run]
    lines = []
    for column, (how, used_by) in NO_EVIDENCE.items():
        if column not in inst.columns:
            continue
        means = inst.groupby(["run", "group"])[column].mean().unstack("group")
        if gi not in means or gj not in means:
            continue
        gap = means[gi] - means[gj]
        skewed = gap[gap.abs() >= ASYMMETRY]
        if skewed.empty:
            continue
        favoured = [gi if g > 0 else gj for g in skewed]
        first = skewed.index[0]
        counts = ", ".join(f"{g} in {favoured.count(g)}" for g in (gi, gj) if favoured.count(g))
        lines.append(text("{how} (used by {used_by}): the fallback is {counts} of {runs} run(s); e.g. run {first}: "
                          "p(gold) {p_i:.2f} for {gi} vs {p_j:.2f} for {gj}", how=how, used_by=used_by,
                          counts=counts, runs=len(gap), first=first, p_i=means.loc[first, gi], gi=gi,
                          p_j=means.loc[first, gj], gj=gj))
    return lines


def model_warnings(result: ExplainResult, run: int | None = None) -> list[tuple[str, str]]:
    """(kind, text) of every model reading, as the JSON's ``warnings`` write them."""
    return [(r.kind, r.source()) for r in model_readings(result, run)]


def undefined_methods(result: ExplainResult, methods: list[str]) -> list[Text]:
    """Why a method has no scores at all (e.g. IG without ×input on a BERT-style model) instead of an empty box."""
    scores = result.scores
    out = []
    for method in methods:
        block = scores[scores["method"] == method]
        if len(block) and block[list(METRICS)].isna().all().all():
            reason = block["nan_reason"].replace("", np.nan).dropna()
            reason = reason.mode().iloc[0] if len(reason) else "no metric could be computed"
            out.append(text(
                "**{method} has no defined scores here**: {reason}. For IG this is expected on BERT-style models: "
                "the gradient w.r.t. the word embeddings sums to zero over the hidden dimension (they enter a "
                "LayerNorm), so IG without ×input is rounding noise; IG×Input is the usable variant.", "caveat",
                method=METHOD_NAMES[method], reason=reason))
    return out


def _test_name(report: DisparityAudit) -> str:
    return "BH-adjusted p" if report.correction == "bh" else "p"


def overall_reading(report: DisparityAudit) -> Text | None:
    """How many cells differ, how many considerably, and the largest effect."""
    cells = report.cells
    if not cells:
        return None
    sig = [c for c in cells if c.significant]
    big = [c for c in sig if c.considerable]
    worst = max(cells, key=lambda c: abs(c.cohens_d) if np.isfinite(c.cohens_d) else -1)
    gi, gj = report.groups
    head = text("**Reading.** {sig} of {cells} method × metric cells differ between {gi} and {gj} ({test} ≤ {alpha}); "
                "{big} of them with a considerable effect (|d| ≥ {considerable}, ★ above the boxes). ",
                sig=len(sig), cells=len(cells), gi=gi, gj=gj, test=_test_name(report), alpha=str(report.alpha),
                big=len(big), considerable=str(CONSIDERABLE_D))
    if not np.isfinite(worst.cohens_d):
        return head
    direction = text("better for {group}", group=worst.better) if worst.better else "no direction"
    return join(head, text("The largest effect is {method} on {metric}: d = {d} (", method=METHOD_NAMES[worst.method],
                           metric=METRICS[worst.metric].label.lower(), d=fmt(worst.cohens_d, 2)),
                direction, ").")


def random_reading(report: DisparityAudit) -> Text:
    """What the Random method's row says: a disparity random scores also show is the model's and the data's."""
    if not any(c.method == RANDOM for c in report.cells):
        return text("Add the Random method to see which disparities the model and the data produce on their own.")
    random_sig = [c for c in report.cells if c.method == RANDOM and c.significant]
    if not random_sig:
        return text("**Random baseline:** no metric separates the groups for random explanations, so the significant "
                    "cells above are explainer behaviour, not a by-product of the model or the sentence lengths.")
    return text("**Random baseline:** even random explanations differ between the groups on {names}. A random "
                "explanation has no explainer behaviour, so on these metrics the model and the data alone create a "
                "gap; a real method's disparity there is explainer disparity only beyond the Random row.",
                names=", ".join(METRICS[c.metric].label.lower() for c in random_sig))


def heatmap_note(report: DisparityAudit, runs: int) -> Text:
    gi, gj = report.groups
    pooled = (" Colour and d come from the runs pooled; 'k/R runs' counts the runs whose own test is significant "
              "(the paper's tables). The two can disagree when runs point in opposite directions." if runs > 1 else "")
    return text("Colour = sign of Cohen's d ({gi} − {gj}): purple where {gi}'s explanations score higher, brown where "
                "{gj}'s do. Whether higher is better depends on the metric (↑/↓ in the panel titles). ★ = |d| ≥ 0.2 "
                "(considerable). n.s. = not significant.{pooled}", "note", gi=gi, gj=gj, pooled=pooled)


def disparity_note(report: DisparityAudit) -> Text:
    gi, gj = report.groups
    return text("Two-sided Mann–Whitney U on the per-sentence scores of {gi} vs {gj} (unpaired, as in the paper); "
                "Cohen's d = (mean {gi} − mean {gj}) / √((s²_{gi} + s²_{gj})/2) with a 1,000-resample bootstrap CI. "
                "'better' uses each metric's direction (↑: AOPC comprehensiveness, both soft metrics, Gini; ↓: AOPC "
                "sufficiency, sparsity, sensitivity — soft sufficiency follows its formula, eq. 2, not the paper's ↓). "
                "The paired Wilcoxon column (twins only) is an extension: it uses the pairing the paper ignores.",
                "note", gi=gi, gj=gj)


def twin_note() -> Text:
    return text("Scores are L1-normalised over the tokens shown ([CLS]/[SEP] are left out, as in every metric). "
                "Purple pushes towards the gold label, brown against it (Grad is a magnitude, never negative).", "note")


def twin_confidence(p_a: float, p_b: float) -> Text:
    return text("The model's own confidence differs between these two sentences (p(gold) {a:.3f} vs {b:.3f}): "
                "different explanations are expected here.", "caveat", a=p_a, b=p_b)
