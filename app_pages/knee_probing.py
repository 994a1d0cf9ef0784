"""Knee probing & augmentation ([1] Residual Distribution Fairness §7–8, App. D, E, O): what the knees are for.

Shipped results open at once (no model library is imported); "Compute now" trains a text model and probes it or
runs Algorithm 1, with progress and Stop, cached per data, model and settings for the whole server. Each tab is its
controls, one cached run and the display list of ``fairviz.probing.readings``, plus the pickers and the download.
"""
from __future__ import annotations

import hashlib
import json

import streamlit as st

from fairviz.core.display import Figure, Table, group
from fairviz.core.progress import Completion, Stopped
from fairviz.core.serialize import clean
from fairviz.data import DataError
from fairviz.explain import MODEL_KINDS, offered_model_dirs
from fairviz.explain import data as xdata
from fairviz.probing import (AUGMENT_STRATEGIES, DATA_SETS, DEFAULT_GENERATE, SEEDS, AugmentParams, ProbeParams,
                             RunProtocol, augment_display, examples_table, load_dataset, load_shipped, model_spec,
                             probe_display, run_augment, run_probe)
from app_pages import _jobs, _render, _ui, _upload

PAPER = ("*Fairness Beyond Metrics: A Residual Distribution Framework for Text Classification* (anonymous ACL "
         "submission)")


@st.cache_data(show_spinner="Loading the shipped results…", max_entries=4, ttl=_ui.CACHE_TTL)
def shipped(kind: str) -> dict:
    return load_shipped(kind)


@st.cache_data(show_spinner="Preparing the data set…", max_entries=8, ttl=_ui.CACHE_TTL)
def builtin_dataset(key: str, generate: int, seed: int) -> xdata.TextDataset:
    return load_dataset(key, generate, seed)


def page() -> None:
    st.title("Knee probing & augmentation")
    _ui.own_data("text data sets and models chosen below")
    st.caption(f"The Residual page finds the knees of each group's sorted residual curve and the diagnostic set D*. "
               f"{PAPER} goes on: knee examples are where the model reacts most to demographic edits (§7, App. O), "
               "and fine-tuning on their counterfactual copies is its mitigation (§8.3, Algorithm 1). This page runs "
               "both on the text models of the Explanation page (tiny BERT trained here, MiniLM-L6, a local folder).")
    mode = st.radio("Results", ["Shipped results (instant)", "Compute now"], horizontal=True, key="probing_mode",
                    help="Shipped results were computed by scripts/make_probing_demo.py with the tiny model and the "
                         "CLI's defaults; 'Compute now' trains a model here (about a minute with the tiny model).")
    probe_tab, augment_tab = st.tabs(["Counterfactual probing", "RDF-guided augmentation"])
    if mode.startswith("Shipped"):
        probe_data, augment_data = shipped("probe"), shipped("augment")
        with probe_tab:
            show_probe(probe_data)
        with augment_tab:
            show_augment(augment_data)
        return
    dataset, spec = _data_and_model()
    if dataset is None:
        return
    with probe_tab:
        data = _compute_probe(dataset, spec)
        if data is not None:
            show_probe(data)
    with augment_tab:
        data = _compute_augment(dataset, spec)
        if data is not None:
            show_augment(data)


# ----------------------------------------------------------------------------------------------- compute

NOT_OFFERED = "This server does not offer that model folder: choose one of the folders listed (FAIRVIZ_MODEL_DIRS)."


def offered_model_path(name: str) -> str:
    """The folder of a model the server offers (the Explanation page's allow-list), by its listed name. Anything else
    — a typed path, an existing folder that is not listed, a folder that does not exist — is refused with the same
    message, so the page never tells whether a path exists on the server."""
    offered = offered_model_dirs()
    if name not in offered:
        raise DataError(NOT_OFFERED)
    return str(offered[name])

def _data_and_model():
    c1, c2, c3 = st.columns(3)
    kind = c1.selectbox("Model", list(MODEL_KINDS), format_func=MODEL_KINDS.get, key="probing_model")
    path = None
    if kind == "local":
        offered = offered_model_dirs()
        if not offered:
            c1.info("This server offers no local model folders: whoever runs it lists them in FAIRVIZ_MODEL_DIRS. "
                    "Choose the tiny BERT or MiniLM.")
            return None, None
        chosen = c1.selectbox("Model folder offered by this server", list(offered), key="probing_model_dir",
                              help="Hugging Face folders (config.json, weights, tokenizer) that whoever runs this "
                                   "server listed in FAIRVIZ_MODEL_DIRS; no hub access here.")
        path = offered_model_path(chosen)
    sources = {**DATA_SETS, "upload": "Upload a CSV (text, label, group)"}
    source = c2.selectbox("Data", list(sources), format_func=sources.get, key="probing_source")
    generate = c3.number_input("Pairs generated (synthetic sets)", 100, 3000, DEFAULT_GENERATE, step=100,
                               key="probing_generate")
    seed = c3.number_input("Seed", 0, 10_000, 0, key="probing_seed")
    if source == "upload":
        dataset = _uploaded_dataset()
        if dataset is None:
            return None, None
    else:
        dataset = builtin_dataset(source, int(generate), int(seed))
    st.caption(dataset.description)
    epochs = c1.number_input("Training epochs", 1, 60, model_spec(kind, dataset.key).epochs,
                             key=f"probing_epochs_{kind}_{source}")
    return dataset, model_spec(kind if kind != "local" else path, dataset.key, int(epochs), int(seed))


def _uploaded_dataset():
    upload = _upload.read_upload("CSV with a text column, a binary label and a group column", key="probing_upload",
                                 empty="Upload a file to continue.")
    if upload is None:
        return None
    frame, columns = upload.frame, list(upload.frame.columns)
    u1, u2, u3 = st.columns(3)
    text = _upload.pick(u1, "Text column", columns, key="probing_text_col")
    label = _upload.pick(u2, "Label column", columns, columns[min(1, len(columns) - 1)], key="probing_label_col")
    group = _upload.pick(u3, "Group column", columns, columns[min(2, len(columns) - 1)], key="probing_group_col")
    try:
        return xdata.from_frame(frame, text, label, group, title=upload.name)
    except DataError as err:
        _ui.show_data_error(err, f"'{upload.name}' cannot be probed")
        return None


def _compute_probe(dataset, spec) -> dict | None:
    c1, c2, c3, c4 = st.columns(4)
    n = c1.number_input("Examples per region", 10, 500, 150, key="probing_n",
                        help="Matched knee and non-knee samples (App. O: 150 each; the case study used 200).")
    n_strategy = c2.number_input("Examples per strategy", 10, 500, 100, key="probing_n_strategy")
    eps = c3.select_slider("Knee region ε", [0.02, 0.05, 0.1], 0.05, key="probing_eps")
    region = c4.radio("Region measured in", ["percentile", "residual"], key="probing_region")
    settings = ProbeParams(n=int(n), n_strategy=int(n_strategy), region_eps=float(eps), region_mode=region,
                             seed=spec.seed)
    return _job("probing", "Run probing", "Training and probing", run_probe, dataset, spec, settings,
                RunProtocol(split_seed=spec.seed), "Choose data, model and sample sizes, then press **Run probing**.")


def _compute_augment(dataset, spec) -> dict | None:
    c1, c2, c3, c4 = st.columns(4)
    ks = c1.multiselect("k (examples added)", [50, 100, 200, 500], [100, 500], key="augment_ks")
    n_seeds = c2.number_input("Seeds", 1, 3, 3, key="augment_seeds", help="42, 123 and 456, as in the paper.")
    strategies = c3.multiselect("Strategies", list(AUGMENT_STRATEGIES), list(AUGMENT_STRATEGIES),
                                format_func=AUGMENT_STRATEGIES.get, key="augment_strategies")
    region = c4.radio("D* measured in", ["residual", "percentile"], key="augment_region",
                      help="Residual: |D − r| < ε (Algorithm 1). Percentile: the Residual page's default.")
    if not ks or not strategies:
        st.info("Choose at least one k and one strategy.")
        return None
    settings = AugmentParams(strategies=tuple(s for s in AUGMENT_STRATEGIES if s in strategies),
                               ks=tuple(sorted(ks)), seeds=SEEDS[:int(n_seeds)], region_mode=region)
    return _job("augment", "Run augmentation", "Algorithm 1: select, fine-tune, measure", run_augment, dataset,
                spec, settings, RunProtocol(split_seed=spec.seed),
                "Choose k, seeds and strategies, then press **Run augmentation** (the tiny model: about ten seconds "
                "per fine-tuning; 3 strategies × 2 k × 3 seeds + 3 controls = 21).")


def _job(job: str, run_label: str, label: str, runner, dataset, spec, settings, protocol, idle: str):
    """Run/Stop buttons and one server-wide cached run per (data, model, settings, protocol); the result is the
    same JSON dict the CLI writes."""
    request = _jobs.controls(job, (spec, settings, protocol), idle=idle, run_label=run_label,
                             data=dataset.fingerprint)
    if request is None:
        return _jobs.stopped_result(job, data=dataset.fingerprint)     # what a stopped run finished, if any
    spec, settings, protocol = request

    def compute(progress):
        try:
            return clean(runner(dataset, spec, settings, protocol, progress).to_dict())
        except Stopped as stop:                      # the seeds that finished, as the same JSON marked partial
            raise stop.keeping(None if stop.partial is None else clean(stop.partial.to_dict()))
    return _jobs.run(job, (dataset.fingerprint, *request), label, compute)


# ----------------------------------------------------------------------------------------------- results

def show_probe(data: dict) -> None:
    _render.render(_chart_first(probe_display(data, _digest(data))), figure_cache=_ui.figure)
    region = st.radio("Region", ["knee", "non-knee"], horizontal=True, key="probing_examples_region")
    _render.render([examples_table(data, region)])
    _page_json("probe", data)                      # the download last: the tab opens on its result


def show_augment(data: dict) -> None:
    if data.get("partial"):
        _render.render([Completion(**{k: data["partial"][k] for k in ("done", "total", "unit")}).note()])
    metric = st.session_state.get("augment_metric", "f_pattern")
    items = augment_display(data, metric, _digest(data))
    _render.render(group(items, "summary").items)
    st.radio("Metric", ["f_pattern", "f_v", "f_dist"], horizontal=True, key="augment_metric",
             format_func=lambda m: m.replace("f_", "F_"))
    _render.render(group(items, "figure").items, figure_cache=_ui.figure)
    _render.render(group(items, "reading").items)
    _page_json("augment", data)


def _chart_first(items: list) -> list:
    """The first chart before the tables above it (the tables hold its numbers): the tab opens on the chart."""
    first = next((i for i, item in enumerate(items) if isinstance(item, Figure)), None)
    if first is None:
        return items
    tables = [item for item in items[:first] if isinstance(item, Table)]
    return [item for item in items[:first] if not isinstance(item, Table)] + [items[first], *tables, *items[first + 1:]]


def _digest(data: dict) -> str:
    """What the figures of a result are kept by: its JSON's digest (shipped or computed alike)."""
    return hashlib.blake2b(json.dumps(data, sort_keys=True).encode(), digest_size=12).hexdigest()


def _page_json(kind: str, data: dict) -> None:
    st.session_state.setdefault(_ui.PAGE_JSON, {})[kind] = data
    st.download_button("This tab's numbers (JSON)", json.dumps(data, indent=1).encode(), f"{kind}.json",
                       "application/json", key=f"probing_json_{kind}",
                       help=f"The same JSON as `fairviz {kind} --json` for these settings.")


_ui.guarded(page)
