"""Per-group thresholds in words (Hardt, Price and Srebro, *Equality of Opportunity in Supervised Learning*, NeurIPS
2016): what the threshold explorer says. Names from the data are template fields, never template text."""
from __future__ import annotations

from fairviz.core.display import Text, text
from fairviz.thresholds.results import CONSTRAINT_SHORT, CONSTRAINT_TITLES, GroupRule, ThresholdExplorer

WORK = ("Post-processing in the sense of Hardt, Price and Srebro, *Equality of Opportunity in Supervised Learning* "
        "(NeurIPS 2016): each group gets its own threshold on the scores (no model object is needed), chosen by a "
        "linear programme over every group's ROC convex hull for the best expected accuracy under the constraint. "
        "Where no single threshold of a group reaches the common rate, the group's rows between two thresholds get "
        "a yes at random with a fixed probability.")
GAP_NAME = {"equal_selection": "selection-rate gap", "equal_tpr": "TPR gap", "equalized_odds": "largest TPR or FPR gap"}
CURVE_NOTE = ("The curve: the best expected accuracy when the groups' rates may differ by at most the gap on the "
              "horizontal axis (0: the constraint holds exactly). The grey point is one threshold τ for everyone, "
              "on the same axes.")
TABLE_NOTE = ("The rule: \"≥ t\" gives a yes to every row scoring t or more; \"p = q on [a, b)\" gives a row scoring "
              "from a up to (not including) b a yes with probability q (a randomised rule); every other row gets a "
              "no. Expected rates are the rule's; the decisions' rates are those of the model the page adds.")
IN_SAMPLE = ("The thresholds are fitted and judged on the same rows: on new rows the groups' rates will differ by "
             "sampling noise, most in small groups. Fit them on one part of the data and check them on the rest "
             "before using them.")


def headline(result: ThresholdExplorer) -> Text:
    policy, single = result.audit.policy, result.audit.single_threshold
    cost = single.accuracy - policy.accuracy
    return text("**{constraint}** between the groups of **{attribute}**: expected accuracy {accuracy:.3f} with a "
                "{gap_name} of {gap:.3f}, against {single_accuracy:.3f} and a {gap_name} of {single_gap:.3f} for "
                "one threshold τ = {tau:.2f} for everyone ({change}).", "finding",
                constraint=CONSTRAINT_TITLES[policy.params.constraint].capitalize(), attribute=policy.attribute,
                accuracy=policy.accuracy, gap_name=GAP_NAME[policy.params.constraint], gap=policy.max_gap,
                single_accuracy=single.accuracy, single_gap=single.max_gap, tau=result.tau,
                change=(f"the constraint costs {cost:.3f} accuracy" if cost > 5e-4 else
                        f"the constraint gains {-cost:.3f} accuracy over τ" if cost < -5e-4 else
                        "about the same accuracy"))


def rule_text(rule: GroupRule) -> str:
    """A group's rule in a table cell: "≥ 0.65", or "≥ 0.55; p = 0.928 on [0.45, 0.55)" for a randomised one."""
    top = max(rule.thresholds)
    if not rule.randomised:
        return "nobody" if top == float("inf") else f"≥ {top:.4g}"
    parts = [] if top == float("inf") else [f"≥ {top:.4g}"]
    for lower, upper, chance in rule.bands():
        where = f"≥ {lower:.4g}" if upper == float("inf") else f"[{lower:.4g}, {upper:.4g})"
        parts.append(f"p = {chance:.3f} on {where}")
    return "; ".join(parts)


def realised(result: ThresholdExplorer) -> Text:
    adjusted = result.adjusted
    smallest = min(adjusted.realised, key=lambda r: r.n)
    sd = max((r.label_blind_sd for r in adjusted.realised), default=0.0)
    return text("The decisions are drawn label-blind, as a deployed rule must be: each group gets its expected "
                "number of yeses to within half a row, and which rows get them never depends on the outcome. So "
                "the rule's rates are equal by construction, while the decisions' realised {gap_name} is {gap:.4f}: "
                "a group's TPR varies around the rule's by up to ±{sd:.3f} (one standard deviation; one row of the "
                "smallest group, **{group}**, is {share:.4f} of its positives).", "note",
                gap_name=GAP_NAME[adjusted.policy.params.constraint], gap=adjusted.realised_gap(),
                group=smallest.group, share=1 / max(smallest.positives, 1), sd=sd)


def added_note(title: str) -> Text:
    return text("Added **{title}** as a model: every page now audits it. To explore thresholds again, choose a model "
                "with scores in the sidebar's Model picker.", "finding", title=title)


def model_title(model: str, constraint: str, attribute: str) -> str:
    return f"{model} · {CONSTRAINT_SHORT[constraint]} by {attribute}"


def model_note(title: str, model: str, constraint: str, attribute: str, slack: float, seed: int) -> str:
    """What the added model's note says (the data's notes: plain text)."""
    within = f" within {slack:g}" if slack else ""
    return (f"'{title}': the decisions (1 = yes, 0 = no) of per-group thresholds on '{model}' (Hardt, Price and Srebro "
            f"2016) for {CONSTRAINT_SHORT[constraint]} between the groups of {attribute}{within}; randomised rules "
            f"realise their expected rates on these rows (seed {seed}). Any τ above 0 reproduces the decisions.")
