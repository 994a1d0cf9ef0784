"""The sentences of the slice search (templates with data fields: every renderer escapes the fields)."""
from __future__ import annotations

from fairviz.core.display import Text, text
from fairviz.slices.analysis import SLICE_METRICS, SliceResult

CORRECTION_NAMES = {"by": "Benjamini–Yekutieli (false discovery rate under any dependence)",
                    "bh": "Benjamini–Hochberg (false discovery rate for independent or positively dependent tests)"}


def metric_title(metric: str) -> str:
    return SLICE_METRICS[metric][2]


def method_sentence(result: SliceResult) -> Text:
    c, p = result.counts, result.params
    return text("{slices:,} slices of up to {depth} of {attributes} attributes; {tested:,} with at least {floor:,} "
                "rows tested: the {metric} of each slice against the rest of the data at τ = {tau:g}, Fisher's exact "
                "test, {correction} at {alpha:g}. Slices under the floor show a CPS-smoothed estimate (Cross-Prior "
                "Smoothing, λ = {lam:g}) and read \"too small to tell\".", "note",
                slices=len(result.table), depth=c.max_depth, attributes=len(c.attributes), tested=result.tested,
                floor=int(c.min_support), metric=metric_title(p.metric), tau=c.threshold,
                correction=CORRECTION_NAMES[p.correction], alpha=p.alpha, lam=p.cps_lambda)


def headline(result: SliceResult) -> Text:
    significant = result.significant
    metric = metric_title(result.params.metric)
    if significant.empty:
        return text("No slice's {metric} differs from the rest of the data after the correction.", "finding",
                    metric=metric)
    top = significant.iloc[0]
    return text("{count:,} slices differ from the rest in {metric}; the largest difference: **{slice}** "
                "({n:,} rows) at {value:.3f} against {rest:.3f} for the rest (adjusted p = {p:.2g}).", "finding",
                count=len(significant), metric=metric, slice=top["slice"], n=int(top["n"]), value=top["metric"],
                rest=top["rest"], p=top["p_adjusted"])


def notes(result: SliceResult) -> list[Text]:
    return [text("{note}", "caveat", note=note) for note in result.notes]
