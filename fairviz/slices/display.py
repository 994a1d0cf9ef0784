"""The slice search's display list (the Slices page, ``fairviz slices`` and its JSON).

JSON (``SliceResult.to_dict``): metric, alpha, correction, threshold, min_support, max_depth, attributes, rows,
tested, significant, notes, ``slices`` (one row per slice, ranked: slice, depth, n, metric, rest, difference,
ci_low, ci_high, p, p_adjusted, significant, too_small, cps, error_rate, fpr, fnr, selection_rate, mean_residual,
calibration_gap; a regression's mean_residual (prediction − target), mae, rmse; a multiclass error_rate,
mean_confidence; score: SliceLine's score, which the pruned search ranks by), task, family (the hypotheses the
correction counts), search (top_k, queries, grouping_sets, lattice_grouping_sets, evaluated, pruned).
``calibration_gap`` is calibration in the large, |mean label − mean score| (a one-bin ECE)."""
from __future__ import annotations

import hashlib

import pandas as pd

from fairviz.core.display import Figure, Item, Table, heading, text
from fairviz.slices import readings
from fairviz.slices.analysis import SliceResult
from fairviz.slices.figures import treemap

LABELS = {"slice": "slice", "n": "n", "metric": "metric", "rest": "rest", "difference": "difference",
          "ci": "difference 95% CI", "p": "p", "p_adjusted": "adj. p", "cps": "CPS estimate", "reading": "reading"}
FORMATS = {"slice": "text", "n": "int", "metric": "num", "rest": "num", "difference": "num", "ci": "ci", "p": "p",
           "p_adjusted": "p", "cps": "num", "reading": "text"}
MAX_ROWS = 200          # rows of the ranked table shown; the JSON keeps every slice


def ranked_frame(result: SliceResult, rows: int = MAX_ROWS) -> pd.DataFrame:
    t = result.table.head(rows)
    reading = ["too small to tell" if small else ("differs" if sig else ("no evidence" if pd.notna(p) else "untested"))
               for small, sig, p in zip(t["too_small"], t["significant"], t["p"])]
    return pd.DataFrame({"slice": t["slice"], "n": t["n"], "metric": t["metric"], "rest": t["rest"],
                         "difference": t["difference"], "ci": list(zip(t["ci_low"], t["ci_high"])), "p": t["p"],
                         "p_adjusted": t["p_adjusted"], "cps": t["cps"], "reading": reading})


def figure_key(result: SliceResult) -> tuple:
    """What the treemap draws: the metric and every slice's name, size and difference (a figure cache keyed by less
    would show one search's treemap after another's)."""
    drawn = result.table[["slice", "n", "difference", "too_small"]]
    digest = hashlib.sha1(pd.util.hash_pandas_object(drawn, index=False).to_numpy().tobytes()).hexdigest()
    return ("slices", result.counts.task, result.params.metric, digest)


def slices_display(result: SliceResult, figure: bool = True) -> list[Item]:
    title = readings.metric_title(result.params.metric, result.counts.task)
    search = readings.search_sentence(result)
    items: list[Item] = [heading("Slices: where the {metric} differs", metric=title), readings.headline(result),
                         readings.method_sentence(result), *([search] if search else []), *readings.notes(result)]
    # the treemap first: on a projector the picture of where the model fails opens the page, the ranked table after
    if figure and len(result.table):
        items.append(Figure(lambda: treemap(result, title), key=figure_key(result),
                            caption=text("Tiles sized by rows, coloured by the difference from the rest.", "note")))
    shown = min(len(result.table), MAX_ROWS)
    items.append(Table(ranked_frame(result), "slices", FORMATS, LABELS,
                       caption=text("{shown:,} of {total:,} slices, significant ones first by the size of their "
                                    "difference.", "note", shown=shown, total=len(result.table))))
    return items
