"""The sentences of the slice search (templates with data fields: every renderer escapes the fields)."""
from __future__ import annotations

from fairviz.core.display import Text, text
from fairviz.slices import metrics
from fairviz.slices.analysis import SliceResult
from fairviz.slices.methods import MeanMetric, method_of

TEST_NAMES = {"fisher": "Fisher's exact test",
              "match": "MATCH (The Art of Fairness, §4.5: the slice's confusion matrix drawn from the rest's cells, "
                       "taken as known; exact)"}
CORRECTION_NAMES = {"by": "Benjamini–Yekutieli (false discovery rate under any dependence)",
                    "bh": "Benjamini–Hochberg (false discovery rate for independent or positively dependent tests)"}


def metric_title(metric: str, task=None) -> str:
    return metrics.metric_title(metric, task)


def method_sentence(result: SliceResult) -> Text:
    c, p = result.counts, result.params
    fields = dict(slices=len(result.table), depth=c.max_depth, attributes=len(c.attributes), tested=result.tested,
                  floor=int(c.min_support), metric=metric_title(p.metric, c.task), tau=c.threshold,
                  correction=CORRECTION_NAMES[p.correction], alpha=p.alpha, lam=p.cps_lambda)
    if isinstance(metrics.metric_of(c.task, p.metric), MeanMetric):
        return text("{slices:,} slices of up to {depth} of {attributes} attributes; {tested:,} with at least "
                    "{floor:,} rows tested: the {metric} of each slice against the rest of the data, Welch's t-test "
                    "from the slice's and the rest's sums and sums of squares, {correction} at {alpha:g}. Slices "
                    "under the floor show the mean moved towards the rest's by λ = {lam:g} pseudo-rows and read "
                    "\"too small to tell\".", "note", **fields)
    where = method_of(c.task).condition
    test = (TEST_NAMES["match"] if p.test == "match" else TEST_NAMES["fisher"])
    return text("{slices:,} slices of up to {depth} of {attributes} attributes; {tested:,} with at least {floor:,} "
                "rows tested: the {metric} of each slice against the rest of the data " + where + test + ", "
                "{correction} at {alpha:g}. Slices under the floor show a CPS-smoothed estimate (Cross-Prior "
                "Smoothing, λ = {lam:g}) and read \"too small to tell\".", "note", **fields)


def search_sentence(result: SliceResult) -> Text | None:
    """What the pruned search computed and what it left out (None for the full lattice)."""
    s = result.counts.search
    if not s.top_k:
        return None
    return text("Pruned search (SliceLine, Sagadeeva and Boehm, SIGMOD 2021): a slice was expanded only while its "
                "score bound could beat the {k}-th best score; {queries} queries computed {sets:,} of {lattice:,} "
                "attribute combinations. {pruned:,} slices at or above the floor were not evaluated: the correction "
                "counts them as never rejected ({family:,} hypotheses), so the pruning saves time, not power.",
                "note", k=s.top_k, queries=s.queries, sets=s.grouping_sets, lattice=s.lattice_sets,
                pruned=s.pruned, family=result.family)


def headline(result: SliceResult) -> Text:
    significant = result.significant
    metric = metric_title(result.params.metric, result.counts.task)
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
