"""Explanation disparity (seed 003): do post-hoc explanations serve both genders equally well?

Shipped results open instantly (no model library is imported); "Compute now" trains a model and explains it.
"""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import streamlit as st

from fairviz.core.markup import md

from fairviz.data import DataError, guess_positive_label, guess_text_roles, label_values
from fairviz.explain import METHOD_NAMES, METHODS, METRICS, RANDOM
from fairviz.explain import data as xdata
from fairviz.explain import results as xresults
from fairviz.core.serialize import clean
from fairviz.explain.disparity import compare, disparity_json, model_warnings
from fairviz.explain.models import MODEL_KINDS, ModelParams, default_epochs, offered_model_dirs
from fairviz.explain import figures as figs
from fairviz.core.wording import fmt, fmt_interval, fmt_p
from app_pages import _jobs, _ui, _upload
from app_pages._ui import CACHE_TTL
from fairviz.explain.run import prepare
from fairviz.explain.run import explain_dataset
from fairviz.explain.attribute import AttributionParams
from fairviz.explain.metrics import SensitivityParams
from fairviz.explain.run import ExplainParams

ALL_METHODS = list(METHODS) + [RANDOM]
JOB = "explain"                # the Run/Stop job of this page (app_pages/_jobs.py)


# ----------------------------------------------------------------------------------------------- cached steps

@st.cache_data(show_spinner="Loading the shipped results…", max_entries=8, ttl=CACHE_TTL)
def shipped_result(key: str) -> xresults.ExplainResult:
    return xresults.load_shipped(key)


@st.cache_data(show_spinner="Preparing the data set…", max_entries=8, ttl=CACHE_TTL)
def builtin_dataset(key: str, n_pairs: int, seed: int) -> xdata.TextDataset:
    return xdata.load_builtin(key, n_pairs, seed)


@st.cache_resource(show_spinner=False, max_entries=4, ttl=CACHE_TTL)
def trained_model(fingerprint: str, spec: ModelParams, _dataset, _progress=None):
    """One trained model per (data, model settings), shared by every session of this process."""
    return prepare(_dataset, spec, progress=_progress)


@st.cache_data(show_spinner=False, max_entries=32, ttl=CACHE_TTL)
def disparity(result_key: str, methods: tuple, metrics: tuple, alpha: float, correction: str, _result):
    return compare(_result, list(methods), list(metrics), alpha, correction)


# ----------------------------------------------------------------------------------------------- page

def page() -> None:
    ctx = _ui.context()
    st.title("Explanation disparity")
    st.caption("Six post-hoc explainers (Grad, Gradient×Input, Integrated Gradients, IG×Input, LIME, Partition SHAP) "
               "explain a text classifier's gold label for every test sentence; seven metrics score each explanation "
               "(faithfulness, complexity, robustness). The page asks whether those scores differ between two groups "
               "— by default the male and female versions of the same sentences (Dhaini et al., FAccT 2025).")
    mode = st.radio("Results", ["Shipped results (instant)", "Compute now"], horizontal=True, key="explain_mode",
                    help="Shipped results were computed by scripts/make_explain_demo.py with the tiny model; "
                         "'Compute now' trains a model here and explains it (minutes).")
    if mode.startswith("Shipped"):
        options = xresults.shipped()
        if not options:
            st.error("No shipped results found in assets/explain/: run scripts/make_explain_demo.py, or compute now.")
            return
        key = st.selectbox("Data set and model", list(options), format_func=options.get, key="explain_shipped")
        result, result_key = shipped_result(key), f"shipped:{key}"
    else:
        found = _compute(ctx)
        if found is None:
            return
        result, result_key = found
    show(result, result_key)


# ----------------------------------------------------------------------------------------------- compute

def _compute(ctx: _ui.Context):
    c1, c2, c3 = st.columns(3)
    kind = c1.selectbox("Model", list(MODEL_KINDS), format_func=MODEL_KINDS.get, key="explain_model")
    path = None
    if kind == "local":
        offered = offered_model_dirs()
        if not offered:
            c1.info("This server offers no local model folders: whoever runs it lists them in FAIRVIZ_MODEL_DIRS. "
                    "Choose the tiny BERT or MiniLM.")
            return None
        chosen = c1.selectbox("Model folder offered by this server", list(offered), key="explain_model_dir",
                              help="Hugging Face folders (config.json, weights, tokenizer) that whoever runs this "
                                   "server listed in FAIRVIZ_MODEL_DIRS; no hub access here.")
        path = str(offered[chosen])
    sources = dict((k, v[0]) for k, v in xdata.BUILT_IN.items())
    sources["upload"] = "Upload a CSV (text, label, group)"
    if ctx.pred.mapping.text:
        sources["loaded"] = f"Loaded data's text column ('{ctx.pred.mapping.text}', groups by {ctx.attribute})"
    source = c2.selectbox("Data", list(sources), format_func=sources.get, key="explain_source")
    n_pairs = c3.slider("Test pairs explained (sample size)", 4, 100, 20, key="explain_pairs",
                        help="Whole twin pairs from the test split (unpaired data: sentences). All six methods with "
                             "all seven metrics take about 0.2–0.5 s per sentence with the tiny model on one CPU "
                             "core (benchmarks/bench_explain.py).")
    epochs = c3.number_input("Training epochs", 0, 100, default_epochs(kind, source),
                             key=f"explain_epochs_{kind}_{source}")
    if kind != "tiny" and n_pairs > 10:
        c3.caption("⚠ A pre-trained model on this CPU takes tens of seconds per sentence: keep to ≤ 10 pairs.")
    c4, c5 = st.columns(2)
    methods = c4.multiselect("Methods", ALL_METHODS, default=ALL_METHODS, format_func=METHOD_NAMES.get,
                             key="explain_methods_run")
    metrics = c5.multiselect("Metrics", list(METRICS), default=list(METRICS), format_func=METRICS.get,
                             key="explain_metrics_run")
    with st.expander("Advanced settings (the paper's defaults)"):
        a1, a2, a3, a4 = st.columns(4)
        seed = a1.number_input("Seed", 0, 10_000, 0, key="explain_seed")
        generated = a1.number_input("Pairs generated (synthetic data)", 100, 3000, 400, step=100, key="explain_gen")
        shap_evals = a2.select_slider("SHAP evaluations", [64, 128, 250, 500, 1000], 500, key="explain_shap")
        ig_steps = a2.select_slider("IG steps", [20, 50, 100, 300, 1000], 50, key="explain_ig")
        lime_cap = a3.select_slider("LIME samples cap (n² below it)", [500, 1000, 5000], 5000, key="explain_lime")
        draws = a3.select_slider("Soft-metric draws", [1, 3, 10], 1, key="explain_draws")
        eps = a4.select_slider("Sensitivity radius ε (share of ‖E‖)", [0.01, 0.02, 0.05, 0.1], 0.05, key="explain_eps")
        pgd = a4.select_slider("PGD steps", [5, 10, 20], 10, key="explain_pgd")
    dataset = _dataset(ctx, source, int(generated), int(seed))
    if dataset is None:
        return None
    if not methods or not metrics:
        st.info("Choose at least one method and one metric.")
        return None
    spec = ModelParams(kind=kind, path=path or None, epochs=int(epochs), seed=int(seed))
    settings = ExplainParams(methods=tuple(m for m in ALL_METHODS if m in methods),
                               metrics=tuple(m for m in METRICS if m in metrics), n_pairs=int(n_pairs), seed=int(seed),
                               soft_draws=int(draws),
                               attribution=AttributionParams(ig_steps=int(ig_steps), lime_max_samples=int(lime_cap),
                                                               shap_max_evals=int(shap_evals)),
                               sensitivity=SensitivityParams(eps=float(eps), steps=int(pgd)))
    request = _jobs.controls(
        JOB, (spec, settings), data=dataset.fingerprint,
        idle="Choose a model, data and sample size, then press **Run**. Training the tiny model takes seconds; "
             "explaining takes about 0.2–0.5 s per sentence for all methods and metrics (20 pairs: ~15 s).")
    if request is None:
        return None
    spec, settings = request

    def compute(progress):
        model = MODEL_KINDS[spec.kind].split(" (")[0]
        trained = trained_model(dataset.fingerprint, spec, dataset,
                                lambda f, m="": progress(0.3 * f, f"training the {model}: {m}" if m else model))
        return explain_dataset(trained, settings, progress=lambda f, m="": progress(0.3 + 0.7 * f, m))

    result = _jobs.run(JOB, key=(dataset.fingerprint, *request), label="Training and explaining", compute=compute)
    key = hashlib.blake2b(repr((dataset.fingerprint, spec, settings)).encode(), digest_size=12).hexdigest()
    return result, key


def _dataset(ctx: _ui.Context, source: str, generated: int, seed: int):
    if source in xdata.BUILT_IN:
        return builtin_dataset(source, generated, seed)
    if source == "loaded":
        pred = ctx.pred
        view = pred.groups(ctx.attribute)
        frame = pd.DataFrame({"text": pred.texts(), "label": pred.y.astype(int),
                              "group": np.asarray(view.names, dtype=object)[view.codes]})
        return xdata.from_frame(frame, "text", "label", "group", positive_label=1, title=pred.source, key="loaded")
    upload = _upload.read_upload("CSV with a text column, a binary label and a group column (optional: a pair id)",
                                 key="explain_upload", empty="Upload a file to continue.")
    if upload is None:
        return None
    frame, name = upload.frame, upload.name
    columns = list(frame.columns)
    guess = guess_text_roles(frame)
    u1, u2, u3, u4 = st.columns(4)
    text = _upload.pick(u1, "Text column", columns, guess["text"])
    label = _upload.pick(u2, "Label column", columns, guess["label"])
    group = _upload.pick(u3, "Group column", columns, guess["group"])
    pair = _upload.pick(u4, "Pair id (optional)", columns, guess["pair"], optional=True)
    values = label_values(frame[label])
    positive = u2.selectbox("Positive label value", values or ["—"],
                            index=values.index(guess_positive_label(values)) if len(values) == 2 else 0)
    st.caption("Texts longer than 64 tokens are truncated. Two groups are compared: the two largest of the group "
               "column. Rows with an empty text, label or group are dropped and counted.")
    try:
        return xdata.from_frame(frame, text, label, group, pair=pair,
                                positive_label=positive if len(values) == 2 else None, title=name)
    except DataError as err:
        _ui.show_data_error(err)
        return None


# ----------------------------------------------------------------------------------------------- results

def show(result: xresults.ExplainResult, result_key: str) -> None:
    meta = result.meta
    gi, gj = result.groups
    ds, model = meta["dataset"], meta["model"]
    st.markdown(f"**{md(ds['title'])}** · {md(model['description'])} ({model['n_parameters']:,} parameters, "
                f"{model['device']}) · {result.instances.shape[0]:,} test sentences explained "
                f"({len(result.runs)} run{'s' if len(result.runs) > 1 else ''}).  \n{ds['description']}")
    f1, f2, f3, f4 = st.columns([3, 3, 1, 1])
    methods = f1.multiselect("Methods shown", result.methods, default=result.methods, format_func=METHOD_NAMES.get,
                             key=f"explain_show_methods_{result_key}")
    metrics = f2.multiselect("Metrics shown", result.metrics, default=result.metrics, format_func=METRICS.get,
                             key=f"explain_show_metrics_{result_key}")
    alpha = f3.selectbox("α", [0.01, 0.05, 0.10], index=1, key="explain_alpha")
    bh = f4.toggle("BH correction", value=False, key="explain_bh",
                   help="Benjamini–Hochberg over the method × metric grid. Off by default, as in the paper.")
    if not methods or not metrics:
        st.info("Choose at least one method and one metric to show.")
        return
    report = disparity(result_key, tuple(methods), tuple(metrics), alpha, "bh" if bh else "none", result)

    _model_card(result)
    _undefined_methods(result, methods)
    tabs = st.tabs(["Boxplots", "Tests", "Heatmap", "Twin pair", "Diagnostics & downloads"])
    with tabs[0]:
        _ui.chart(figs.metric_boxplots(result, report, metrics, methods), width="stretch",
                        key=f"box_{result_key}")
        st.markdown(_reading(report))
    with tabs[1]:
        _tests_table(report)
    with tabs[2]:
        _ui.chart(figs.disparity_heatmap(report), width="stretch", key=f"heat_{result_key}")
        st.caption(figs.colour_note(report) + " ★ = |d| ≥ 0.2 (considerable). n.s. = not significant."
                   + (" Colour and d come from the runs pooled; 'k/R runs' counts the runs whose own test is "
                      "significant (the paper's tables). The two can disagree when runs point in opposite "
                      "directions." if len(result.runs) > 1 else ""))
        st.markdown(_random_reading(report))
    with tabs[3]:
        _twin_pair(result, metrics, result_key)
    with tabs[4]:
        _diagnostics(result, report, result_key)


def _model_card(result: xresults.ExplainResult) -> None:
    gi, gj = result.groups
    runs = [v["behaviour"] for _, v in sorted(result.meta.get("runs", {}).items())]
    if runs:
        def mean(values):
            values = [v for v in values if v is not None]
            return float(np.mean(values)) if values else None

        over = f" (mean of {len(runs)} runs)" if len(runs) > 1 else ""
        cols = st.columns(4)
        cols[0].metric("Test accuracy" + over, fmt(mean(b.get("accuracy") for b in runs)))
        for col, g in zip(cols[1:3], (gi, gj)):
            stats = [b["groups"].get(g, {}) for b in runs]
            col.metric(f"Accuracy, {g}", fmt(mean(s.get("accuracy") for s in stats)),
                       help=f"TPR {fmt(mean(s.get('tpr') for s in stats))}, TNR {fmt(mean(s.get('tnr') for s in stats))} "
                            f"over the task labels (n = {stats[0].get('n')} per run)")
        cols[3].metric("APD (gender swapped)", fmt(mean(b.get("apd") for b in runs), 4),
                       help="Mean |p(x_male) − p(x_female)| over twins (or the same text with the gender word "
                            "flipped): how much the model itself reacts to gender. Undefined without twins.")
    for kind, text in model_warnings(result):
        _ui.verdict_box(kind, md(text))


def _undefined_methods(result: xresults.ExplainResult, methods: list[str]) -> None:
    """Say why a method has no scores at all (e.g. IG without ×input on a BERT-style model) instead of an empty box."""
    scores = result.scores
    for method in methods:
        block = scores[scores["method"] == method]
        if len(block) and block[list(METRICS)].isna().all().all():
            reason = block["nan_reason"].replace("", np.nan).dropna()
            reason = reason.mode().iloc[0] if len(reason) else "no metric could be computed"
            _ui.verdict_box("info", f"**{METHOD_NAMES[method]} has no defined scores here**: {reason}. For IG this is "
                                    "expected on BERT-style models: the gradient w.r.t. the word embeddings sums to "
                                    "zero over the hidden dimension (they enter a LayerNorm), so IG without ×input "
                                    "is rounding noise; IG×Input is the usable variant.")


def _reading(report) -> str:
    cells = report.cells
    sig = [c for c in cells if c.significant]
    big = [c for c in sig if c.considerable]
    if not cells:
        return ""
    worst = max(cells, key=lambda c: abs(c.cohens_d) if np.isfinite(c.cohens_d) else -1)
    test = "BH-adjusted p" if report.correction == "bh" else "p"
    text = (f"**Reading.** {len(sig)} of {len(cells)} method × metric cells differ between {report.groups[0]} and "
            f"{report.groups[1]} ({test} ≤ {report.alpha}); {len(big)} of them with a considerable effect "
            f"(|d| ≥ 0.2, ★ above the boxes). ")
    if np.isfinite(worst.cohens_d):
        text += (f"The largest effect is {METHOD_NAMES[worst.method]} on {METRICS[worst.metric].lower()}: "
                 f"d = {fmt(worst.cohens_d, 2)} ({'better for ' + worst.better if worst.better else 'no direction'}).")
    return text


def _random_reading(report) -> str:
    random_sig = [c for c in report.cells if c.method == RANDOM and c.significant]
    if not any(c.method == RANDOM for c in report.cells):
        return "Add the Random method to see which disparities the model and the data produce on their own."
    if not random_sig:
        return ("**Random baseline:** no metric separates the groups for random explanations, so the significant "
                "cells above are explainer behaviour, not a by-product of the model or the sentence lengths.")
    names = ", ".join(METRICS[c.metric].lower() for c in random_sig)
    return (f"**Random baseline:** even random explanations differ between the groups on {names}. A random "
            "explanation has no explainer behaviour, so on these metrics the model and the data alone create a "
            "gap; a real method's disparity there is explainer disparity only beyond the Random row.")


def _tests_table(report) -> None:
    table = report.table()
    table["d 95% CI"] = [fmt_interval(ci, 2) for ci in table["d 95% CI"]]
    for col in ("p (Mann–Whitney)", "p (BH)", "p (paired Wilcoxon)"):
        table[col] = [fmt_p(p) if np.isfinite(p) else "—" for p in table[col]]
    if report.correction != "bh":
        table = table.drop(columns=["p (BH)"])
    if table["p (paired Wilcoxon)"].eq("—").all():
        table = table.drop(columns=["p (paired Wilcoxon)"])
    number = st.column_config.NumberColumn(format="%.3f")
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={c: number for c in table.columns if c.startswith(("median", "Cohen"))})
    gi, gj = report.groups
    st.caption(f"Two-sided Mann–Whitney U on the per-sentence scores of {md(gi)} vs {md(gj)} (unpaired, as in the paper); "
               f"Cohen's d = (mean {gi} − mean {gj}) / √((s²_{gi} + s²_{gj})/2) with a 1,000-resample bootstrap CI. "
               "'better' uses each metric's direction (↑: AOPC comprehensiveness, both soft metrics, Gini; ↓: AOPC "
               "sufficiency, sparsity, sensitivity — soft sufficiency follows its formula, eq. 2, not the paper's ↓). "
               "The paired Wilcoxon column (twins only) is an extension: it uses the pairing the paper ignores.")


def _twin_pair(result: xresults.ExplainResult, metrics: list[str], result_key: str) -> None:
    gi, gj = result.groups
    inst = result.instances
    run = result.runs[0]
    if len(result.runs) > 1:
        run = st.selectbox("Run", result.runs, key=f"explain_twin_run_{result_key}")
    inst = inst[inst["run"] == run]
    c1, c2 = st.columns([3, 1])
    method = c2.selectbox("Method", result.methods, index=result.methods.index("igxi") if "igxi" in result.methods else 0,
                          format_func=METHOD_NAMES.get, key=f"explain_twin_method_{result_key}")
    first_rows = inst[inst["group"] == gi]
    second_rows = inst[inst["group"] == gj]
    if first_rows.empty or second_rows.empty:
        st.info("Both groups are needed for a side-by-side view.")
        return
    if result.meta["dataset"]["paired"]:
        pairs = sorted(set(first_rows["pair_id"]) & set(second_rows["pair_id"]))
        first_texts = {p: first_rows.loc[first_rows["pair_id"] == p, "text"].iloc[0] for p in pairs}
        pair = c1.selectbox("Twin pair", pairs, format_func=lambda p: f"pair {p}: {first_texts[p]}",
                            key=f"explain_twin_pair_{result_key}")
        a = first_rows[first_rows["pair_id"] == pair].iloc[0]
        b = second_rows[second_rows["pair_id"] == pair].iloc[0]
    else:
        a_id = c1.selectbox(f"A {gi} sentence", first_rows["instance_id"].tolist(),
                            format_func=lambda i: inst.loc[inst["instance_id"] == i, "text"].iloc[0],
                            key=f"explain_twin_a_{result_key}")
        b_id = c1.selectbox(f"A {gj} sentence", second_rows["instance_id"].tolist(),
                            format_func=lambda i: inst.loc[inst["instance_id"] == i, "text"].iloc[0],
                            key=f"explain_twin_b_{result_key}")
        a = first_rows[first_rows["instance_id"] == a_id].iloc[0]
        b = second_rows[second_rows["instance_id"] == b_id].iloc[0]
    found = [result.attribution(run, int(r["instance_id"]), method) for r in (a, b)]
    if any(f is None for f in found):
        st.info(f"No {METHOD_NAMES[method]} attributions stored for this pair (the method failed; see Diagnostics).")
        return
    labels = result.meta["dataset"]["label_names"]
    titles = [f"{r['group']}: gold '{labels[int(r['label'])]}', p(gold) = {r['p_gold']:.3f}" for r in (a, b)]
    _ui.chart(figs.twin_tokens((titles[0], *found[0]), (titles[1], *found[1]), method), width="stretch",
                    key=f"twin_{result_key}")
    scores = result.scores
    rows = []
    for r in (a, b):
        hit = scores[(scores["run"] == run) & (scores["instance_id"] == r["instance_id"]) & (scores["method"] == method)]
        rows.append({"group": r["group"], "text": r["text"], "p(gold)": r["p_gold"],
                     "p(gold), all deleted": r.get("p_gold_empty", np.nan),
                     "p(gold), all [MASK]": r.get("p_gold_masked", np.nan),
                     **{METRICS[m]: hit[m].iloc[0] if len(hit) else np.nan for m in metrics}})
    numbers = [METRICS[m] for m in metrics] + ["p(gold)", "p(gold), all deleted", "p(gold), all [MASK]"]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in numbers})
    same_label = int(a["label"]) == int(b["label"])
    gap = abs(float(a["p_gold"]) - float(b["p_gold"]))
    if same_label and gap > 0.05:
        _ui.verdict_box("warn", f"The model's own confidence differs between these two sentences (p(gold) "
                                f"{a['p_gold']:.3f} vs {b['p_gold']:.3f}): different explanations are expected here.")
    st.caption("Scores are L1-normalised over the tokens shown ([CLS]/[SEP] are left out, as in every metric). "
               "Purple pushes towards the gold label, brown against it (Grad is a magnitude, never negative).")


def _diagnostics(result: xresults.ExplainResult, report, result_key: str) -> None:
    scores = result.scores
    ig = scores[scores["method"].isin(["ig", "igxi"]) & scores["ig_delta"].notna()]
    if len(ig):
        summary = (ig.assign(abs_delta=ig["ig_delta"].abs()).groupby(["method", "group"])["abs_delta"]
                   .agg(["median", "max"]).reset_index())
        summary["method"] = summary["method"].map(METHOD_NAMES)
        st.markdown("**Integrated Gradients convergence** (|Σ IGxI − (F(x) − F(baseline))| in logits, per sentence; "
                    f"{result.meta['settings']['attribution']['ig_steps']} Gauss–Legendre steps). Large values mean "
                    "the path integral is not converged: raise the IG steps in the advanced settings.")
        st.dataframe(summary, hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4f") for c in ("median", "max")})
    reasons = scores.loc[scores["nan_reason"].fillna("") != "", ["method", "group", "nan_reason"]]
    if len(reasons):
        st.markdown("**Undefined values** (left out of the tests and counted):")
        st.dataframe(reasons.value_counts().rename("sentences").reset_index(), hide_index=True, width="stretch")
    timings = {r: v.get("timings", {}) for r, v in result.meta.get("runs", {}).items()}
    first = next(iter(timings.values()), {})
    if first:
        st.markdown("**Seconds per sentence** (this run, this machine):")
        st.dataframe(pd.DataFrame([{"method": METHOD_NAMES.get(m, m), **{k.replace("_s_per_sentence", ""): v
                                                                          for k, v in t.items()}}
                                   for m, t in first.items()]), hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4f")
                                    for c in ("explain", "metrics", "sensitivity")})
    d1, d2 = st.columns(2)
    d1.download_button("Per-sentence scores (CSV)", result.per_sentence_csv().encode(), "explanation_scores.csv",
                       "text/csv", key=f"dl_csv_{result_key}")
    payload = disparity_json(result, report, [text for _, text in model_warnings(result)])   # = the CLI's JSON
    d2.download_button("Tests (JSON)", json.dumps(payload, indent=1).encode(),
                       "explanation_disparity.json", "application/json", key=f"dl_json_{result_key}")
    st.caption("Settings: " + json.dumps(clean(result.meta.get("settings", {}))))


_ui.guarded(page)
