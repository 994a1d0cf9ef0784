"""The explanation-disparity section ([4]): its display list, drawn by the page, the HTML report and the terminal,
and its JSON (``fairviz audit --explain``, ``fairviz explain``, the page's download).

In the audit it runs only when asked (the audit settings' ``explain``, an ``ExplainAuditParams``) and only on
predictions with a text column: the model under audit is not available to fairviz, so a tiny BERT is trained on the
texts and labels and its explanations are compared between the groups of the audited attribute (the two largest
groups). The section reads the audit's settings as ``options`` (duck-typed: ``attribute``, ``explain``,
``progress``), so that this concept stays below the report.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairviz.core.checks import Check, Section
from fairviz.core.display import Bullets, Figure, Group, Item, Metric, Metrics, Table, Text, text
from fairviz.core.wording import fmt, fmt_interval
from fairviz.data import Predictions
from fairviz.data.tasks import BINARY
from fairviz.explain import (METHOD_NAMES, METRICS, DisparityAudit, ExplainParams, ExplainResult, ModelParams,
                             compare, disparity_json, model_readings, model_warnings, run)
from fairviz.explain import data as xdata
from fairviz.explain import figures as figs
from fairviz.explain import readings

TITLE = "Explanation disparity"


@dataclass(frozen=True)
class ExplainAuditParams:
    model: ModelParams = field(default_factory=ModelParams)
    settings: ExplainParams = field(default_factory=ExplainParams)
    alpha: float = 0.05
    correction: str = "none"


@dataclass(frozen=True)
class ExplainSection:
    """What the audit found: the explanations and their comparison, computed once; or why the section was skipped."""
    result: ExplainResult | None = None
    report: DisparityAudit | None = None
    skipped: str = ""

    def warnings(self) -> list[str]:
        return [text for _, text in model_warnings(self.result)] if self.result is not None else []


def run_section(pred: Predictions, attribute: str, options: ExplainAuditParams, progress=None) -> ExplainSection:
    """Train, explain and compare the two largest groups, or say why the audit cannot include this section."""
    if not pred.mapping.text:
        return ExplainSection(skipped="no text column is mapped, so there is nothing to explain")
    dataset = xdata.from_predictions(pred, attribute, key="audit")
    result = run(dataset, options.model, options.settings, progress=progress)
    return ExplainSection(result, compare(result, alpha=options.alpha, correction=options.correction))


def section_dict(found: ExplainSection) -> dict:
    if found.result is None:
        return {"explanations": {"skipped": found.skipped}}
    return {"explanations": disparity_json(found.result, found.report, found.warnings())}


# ----------------------------------------------------------------------------------------------- display

def display(pred: Predictions, found: ExplainSection | None, options) -> list[Item]:
    """The audit's section: the whole analysis, or why it was skipped."""
    if found is None:
        return []
    if found.result is None:
        return [text("Skipped: {reason}.", "note", reason=found.skipped)]
    return disparity_display(found.result, found.report)


def disparity_display(result: ExplainResult, report: DisparityAudit, key: str | None = None) -> list[Item]:
    """What the data and the model are, what the model itself does, then the boxplots, the tests, the heatmap and
    the diagnostics (groups keyed ``model``, ``boxplots``, ``tests``, ``heatmap``, ``diagnostics``: the page puts
    them in its tabs). ``key`` names the result for the figures' cache (None: figures are not kept)."""
    shown = (tuple(report.methods), tuple(report.metrics), report.alpha, report.correction)
    fig_key = (lambda name: None if key is None else ("explain", name, key, *shown))
    boxplots = [Figure(lambda: figs.metric_boxplots(result, report, report.metrics, report.methods),
                       fig_key("boxplots"))]
    reading = readings.overall_reading(report)
    boxplots += [reading] if reading is not None else []
    return [
        *header(result),
        Group("The model", model_items(result), key="model"),
        *readings.undefined_methods(result, report.methods),
        Group("Boxplots", tuple(boxplots), key="boxplots"),
        Group("Tests", (disparity_table(report), readings.disparity_note(report)), key="tests"),
        Group("Heatmap", (Figure(lambda: figs.disparity_heatmap(report), fig_key("heatmap"),
                                 caption=readings.heatmap_note(report, len(result.runs))),
                          readings.random_reading(report)), key="heatmap"),
        Group("Diagnostics", tuple(diagnostics(result)), key="diagnostics", collapsed=True),
    ]


def header(result: ExplainResult) -> list[Text]:
    meta = result.meta
    ds, model = meta["dataset"], meta["model"]
    runs = len(result.runs)
    return [text("**{title}** · {model} ({parameters:,} parameters, {device}) · {sentences:,} test sentences "
                 "explained ({runs} run{s}).", title=ds["title"], model=model["description"],
                 parameters=model["n_parameters"], device=model["device"], sentences=result.instances.shape[0],
                 runs=runs, s="s" if runs > 1 else ""),
            text("{description}", description=ds["description"])]


def model_items(result: ExplainResult) -> tuple[Item, ...]:
    """The model's accuracy by group and how much it reacts to gender (mean over runs), then its readings."""
    items: list[Item] = []
    gi, gj = result.groups
    runs = [v["behaviour"] for _, v in sorted(result.meta.get("runs", {}).items())]
    if runs:
        over = f" (mean of {len(runs)} runs)" if len(runs) > 1 else ""
        cards = [Metric(text("Test accuracy{over}", over=over), fmt(_mean(b.get("accuracy") for b in runs)))]
        for g in (gi, gj):
            stats = [b["groups"].get(g, {}) for b in runs]
            cards.append(Metric(text("Accuracy, {group}", group=g), fmt(_mean(s.get("accuracy") for s in stats)),
                                help=f"TPR {fmt(_mean(s.get('tpr') for s in stats))}, TNR "
                                     f"{fmt(_mean(s.get('tnr') for s in stats))} over the task labels "
                                     f"(n = {stats[0].get('n')} per run)"))
        cards.append(Metric(text("APD (gender swapped)"), fmt(_mean(b.get("apd") for b in runs), 4),
                            help="Mean |p(x_male) − p(x_female)| over twins (or the same text with the gender word "
                                 "flipped): how much the model itself reacts to gender. Undefined without twins."))
        items.append(Metrics(tuple(cards)))
    for found in model_readings(result):
        items.append(found.text)
        if found.lines:
            items.append(Bullets(found.lines, found.level))
    return tuple(items)


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


TEST_COLUMNS = ("method", "metric", "n_i", "n_j", "median_i", "median_j", "p_value", "p_adjusted", "cohens_d", "ci",
                "significant", "considerable", "better", "runs_significant", "p_paired", "undefined")


def disparity_table(report: DisparityAudit) -> Table:
    """One row per method × metric: the JSON's ``tests`` cells (same numbers), named as people read them. p (BH)
    only when it decides significance; the paired Wilcoxon column only when the data are twins."""
    gi, gj = report.groups
    frame = pd.DataFrame([{
        "method": METHOD_NAMES[c.method], "metric": METRICS[c.metric].label, "n_i": c.n_i, "n_j": c.n_j,
        "median_i": c.median_i, "median_j": c.median_j, "p_value": c.p_value, "p_adjusted": c.p_adjusted,
        "cohens_d": c.cohens_d, "ci": fmt_interval(c.ci, 2), "significant": c.significant,
        "considerable": c.considerable, "better": c.better or "—",
        "runs_significant": f"{c.runs_significant}/{c.runs}",
        "p_paired": c.p_paired if c.p_paired is not None else np.nan,
        "undefined": c.undefined_i + c.undefined_j} for c in report.cells], columns=list(TEST_COLUMNS))
    if report.correction != "bh":
        frame = frame.drop(columns=["p_adjusted"])
    if frame["p_paired"].isna().all():
        frame = frame.drop(columns=["p_paired"])
    labels = {"n_i": f"n {gi}", "n_j": f"n {gj}", "median_i": f"median {gi}", "median_j": f"median {gj}",
              "p_value": "p (Mann–Whitney)", "p_adjusted": "p (BH)", "cohens_d": f"Cohen's d ({gi} − {gj})",
              "ci": "d 95% CI", "considerable": "|d| ≥ 0.2", "runs_significant": "runs significant",
              "p_paired": "p (paired Wilcoxon)"}
    formats = {"method": "text", "metric": "text", "n_i": "int", "n_j": "int", "median_i": "num", "median_j": "num",
               "p_value": "p", "p_adjusted": "p", "cohens_d": "num", "ci": "text", "significant": "bool",
               "considerable": "bool", "better": "text", "runs_significant": "text", "p_paired": "p",
               "undefined": "int"}
    return Table(frame, "explanation_tests", formats, labels)


def diagnostics(result: ExplainResult) -> list[Item]:
    """IG's convergence, the undefined values and their reasons, and the seconds per sentence."""
    items: list[Item] = []
    scores = result.scores
    ig = scores[scores["method"].isin(["ig", "igxi"]) & scores["ig_delta"].notna()]
    if len(ig):
        summary = (ig.assign(abs_delta=ig["ig_delta"].abs()).groupby(["method", "group"])["abs_delta"]
                   .agg(["median", "max"]).reset_index())
        summary["method"] = summary["method"].map(METHOD_NAMES)
        items += [text("**Integrated Gradients convergence** (|Σ IGxI − (F(x) − F(baseline))| in logits, per "
                       "sentence; {steps} Gauss–Legendre steps). Large values mean the path integral is not "
                       "converged: raise the IG steps in the advanced settings.",
                       steps=result.meta["settings"]["attribution"]["ig_steps"]),
                  Table(summary, "ig_convergence", {"method": "text", "group": "text", "median": "num4",
                                                    "max": "num4"})]
    reasons = scores.loc[scores["nan_reason"].fillna("") != "", ["method", "group", "nan_reason"]]
    if len(reasons):
        counted = reasons.value_counts().rename("sentences").reset_index()
        items += [text("**Undefined values** (left out of the tests and counted):"),
                  Table(counted, "undefined_values", {"method": "text", "group": "text", "nan_reason": "text",
                                                      "sentences": "int"})]
    timings = {r: v.get("timings", {}) for r, v in result.meta.get("runs", {}).items()}
    first = next(iter(timings.values()), {})
    if first:
        rows = pd.DataFrame([{"method": METHOD_NAMES.get(m, m), **{k.replace("_s_per_sentence", ""): v
                                                                   for k, v in t.items()}} for m, t in first.items()])
        items += [text("**Seconds per sentence** (this run, this machine):"),
                  Table(rows, "seconds_per_sentence", {"method": "text", "explain": "num4", "metrics": "num4",
                                                       "sensitivity": "num4"})]
    return items


# ----------------------------------------------------------------------------------------------- a twin pair

def twin_pair_display(result: ExplainResult, run: int, method: str, first: pd.Series, second: pd.Series,
                      metrics: list[str], key: str | None = None) -> list[Item]:
    """Two sentences (a twin pair, or one of each group) side by side: their token attributions, their scores,
    and a caveat when the model's own confidence already differs."""
    found = [result.attribution(run, int(r["instance_id"]), method) for r in (first, second)]
    if any(f is None for f in found):
        return [text("No {method} attributions stored for this pair (the method failed; see Diagnostics).", "finding",
                     method=METHOD_NAMES[method])]
    labels = result.meta["dataset"]["label_names"]
    titles = [f"{r['group']}: gold '{labels[int(r['label'])]}', p(gold) = {r['p_gold']:.3f}" for r in (first, second)]
    figure = Figure(lambda: figs.twin_tokens((titles[0], *found[0]), (titles[1], *found[1]), method),
                    None if key is None else ("explain", "twin", key, run, method, int(first["instance_id"]),
                                              int(second["instance_id"])))
    scores = result.scores
    rows = []
    for r in (first, second):
        hit = scores[(scores["run"] == run) & (scores["instance_id"] == r["instance_id"]) & (scores["method"] == method)]
        rows.append({"group": r["group"], "text": r["text"], "p_gold": r["p_gold"],
                     "p_gold_empty": r.get("p_gold_empty", np.nan), "p_gold_masked": r.get("p_gold_masked", np.nan),
                     **{m: hit[m].iloc[0] if len(hit) else np.nan for m in metrics}})
    table = Table(pd.DataFrame(rows), "twin_pair",
                  {"group": "text", "text": "text", **{c: "num" for c in ("p_gold", "p_gold_empty", "p_gold_masked",
                                                                         *metrics)}},
                  {"p_gold": "p(gold)", "p_gold_empty": "p(gold), all deleted", "p_gold_masked": "p(gold), all [MASK]",
                   **{m: METRICS[m].label for m in metrics}})
    items: list[Item] = [figure, table]
    if int(first["label"]) == int(second["label"]) and abs(float(first["p_gold"]) - float(second["p_gold"])) > 0.05:
        items.append(readings.twin_confidence(float(first["p_gold"]), float(second["p_gold"])))
    items.append(readings.twin_note())
    return items


def _run(pred: Predictions, options) -> ExplainSection | None:
    return None if options.explain is None else run_section(pred, options.attribute, options.explain, options.progress)


SECTION = Section("explanations", _run,
                  lambda pred, found, options: {} if found is None else section_dict(found),
                  None, title=TITLE, display=display)


CHECK = Check("explain", {BINARY.name: SECTION})
