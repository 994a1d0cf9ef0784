"""Explanation disparity ([4] Dhaini et al.): do post-hoc explanations serve both genders equally well?

Shipped results open instantly (no model library is imported); "Compute now" trains a model and explains it. The
page is its controls, one cached call (the tests and the section's display list, ``fairviz.explain.display``) and
what only a page has: the tabs, the twin-pair pickers and the downloads.
"""
from __future__ import annotations

import hashlib
import json

import streamlit as st

from fairviz.core.display import Bullets, Group, Text, group
from fairviz.core.serialize import clean
from fairviz.data import DataError, guess_positive_label, guess_text_roles, label_values
from fairviz.explain import (METHOD_NAMES, METHODS, METRICS, MODEL_KINDS, RANDOM, AttributionParams, ExplainParams,
                             ModelParams, SensitivityParams, compare, default_epochs, disparity_json,
                             explain_dataset, model_warnings, offered_model_dirs, prepare)
from fairviz.explain import data as xdata
from fairviz.explain import results as xresults
from fairviz.explain.display import disparity_display, twin_pair_display
from app_pages import _jobs, _render, _ui, _upload
from app_pages._ui import CACHE_TTL

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


@st.cache_resource(show_spinner=False, max_entries=32, ttl=CACHE_TTL)
def section(result_key: str, methods: tuple, metrics: tuple, alpha: float, correction: str, _result):
    """The tests of the chosen cells and the section's display list, once per result and choice, for every session
    (immutable: the display list's figures are built when a tab draws them)."""
    report = compare(_result, list(methods), list(metrics), alpha, correction)
    return report, disparity_display(_result, report, result_key)


# ----------------------------------------------------------------------------------------------- page

def page() -> None:
    ctx = _ui.context()
    st.title("Explanation disparity")
    _ui.own_data("text data sets and the models trained on them, chosen below",
                 unless="'Compute now' can read the loaded data's text column" if ctx.pred.mapping.text else "")
    st.caption("Six post-hoc explainers (Grad, Gradient×Input, Integrated Gradients, IG×Input, LIME, Partition SHAP) "
               "explain a text classifier's gold label for every test sentence; seven metrics score each explanation "
               "(faithfulness, complexity, robustness). The page asks whether those scores differ between two groups "
               "— by default the male and female versions of the same sentences (Dhaini et al., FAccT 2025).")
    r1, r2 = st.columns(2)                         # one row: the page's first chart stays on the first screen
    mode = r1.radio("Results", ["Shipped results (instant)", "Compute now"], horizontal=True, key="explain_mode",
                    help="Shipped results were computed by scripts/make_explain_demo.py with the tiny model; "
                         "'Compute now' trains a model here and explains it (minutes).")
    if mode.startswith("Shipped"):
        options = xresults.shipped()
        if not options:
            st.error("No shipped results found in assets/explain/: run scripts/make_explain_demo.py, or compute now.")
            return
        key = r2.selectbox("Data set and model", list(options), format_func=options.get, key="explain_shipped")
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
    metrics = c5.multiselect("Metrics", list(METRICS), default=list(METRICS), format_func=lambda m: METRICS[m].label,
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
        partial = _jobs.stopped_result(JOB, data=dataset.fingerprint)
        if partial is None:
            return None
        key = repr((dataset.fingerprint, "partial", partial.meta["settings"], partial.meta["partial"]))
        return partial, hashlib.blake2b(key.encode(), digest_size=12).hexdigest()
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
        return xdata.from_predictions(ctx.pred, ctx.attribute, key="loaded")
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
    f1, f2, f3, f4 = st.columns([3, 3, 1, 1])
    methods = f1.multiselect("Methods shown", result.methods, default=result.methods, format_func=METHOD_NAMES.get,
                             key=f"explain_show_methods_{result_key}")
    metrics = f2.multiselect("Metrics shown", result.metrics, default=result.metrics,
                             format_func=lambda m: METRICS[m].label, key=f"explain_show_metrics_{result_key}")
    alpha = f3.selectbox("α", [0.01, 0.05, 0.10], index=1, key="explain_alpha")
    bh = f4.toggle("BH correction", value=False, key="explain_bh",
                   help="Benjamini–Hochberg over the method × metric grid. Off by default, as in the paper.")
    if not methods or not metrics:
        st.info("Choose at least one method and one metric to show.")
        return
    report, items = section(result_key, tuple(methods), tuple(metrics), alpha, "bh" if bh else "none", result)
    payload = disparity_json(result, report, [text for _, text in model_warnings(result)])   # = the CLI's JSON
    if result.completion is not None:                 # a stopped run: the explainers that finished, marked so
        _render.render([result.completion.note()])
        payload = {**payload, "partial": result.completion.to_dict()}
    st.session_state.setdefault(_ui.PAGE_JSON, {})["explanations"] = payload
    tabs_of = {"boxplots": 0, "tests": 1, "heatmap": 2, "diagnostics": 4}
    for item in items:
        if isinstance(item, Group) and item.key == "model":
            _model(item)
        elif not (isinstance(item, Group) and item.key in tabs_of):
            _render.render([item], figure_cache=_ui.figure)
    tabs = st.tabs(["Boxplots", "Tests", "Heatmap", "Twin pair", "Diagnostics & downloads"])
    for key, index in tabs_of.items():
        _render.render(group(items, key).items, tabs[index], figure_cache=_ui.figure)
    with tabs[3]:
        _twin_pair(result, metrics, result_key)
    with tabs[4]:
        _downloads(result, payload, result_key)


_VERDICT = {"finding": "good", "caveat": "warn", "error": "bad"}


def _model(block: Group) -> None:
    """The model's card, then each reading in a box coloured by what it means for the explainers (good, warn,
    bad); a reading's bullet lines go in its box."""
    readings: list[list] = []
    for item in block.items:
        if isinstance(item, Text):
            readings.append([item])
        elif isinstance(item, Bullets) and readings:
            readings[-1].append(item)
        else:
            _render.render([item])
    for first, *rest in readings:
        body = "\n".join([_render.markdown(first)]
                          + [f"- {_render.markdown(t)}" for bullets in rest for t in bullets.items])
        if first.level == "caveat":
            _render.add_caveat(body)              # with the page's other caveats, after its first chart
        else:
            _ui.verdict_box(_VERDICT.get(first.level, "info"), body)


def _twin_pair(result: xresults.ExplainResult, metrics: list[str], result_key: str) -> None:
    """Pick two sentences (a twin pair, or one of each group) and a method; the figure and table come from
    ``fairviz.explain.display.twin_pair_display``."""
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
    _render.render(twin_pair_display(result, run, method, a, b, metrics, result_key), figure_cache=_ui.figure)


def _downloads(result: xresults.ExplainResult, payload: dict, result_key: str) -> None:
    d1, d2 = st.columns(2)
    d1.download_button("Per-sentence scores (CSV)", result.per_sentence_csv().encode(), "explanation_scores.csv",
                       "text/csv", key=f"dl_csv_{result_key}")
    d2.download_button("Tests (JSON)", json.dumps(payload, indent=1).encode(),
                       "explanation_disparity.json", "application/json", key=f"dl_json_{result_key}")
    st.caption("Settings: " + json.dumps(clean(result.meta.get("settings", {}))))


_ui.guarded(page)
