"""Retraining simulator: train debiasing methods under changed training distributions and compare them on a
fixed test set (Han, Shen, Cohn, Baldwin and Frermann, *Systematic Evaluation of Predictive Fairness*, AACL 2022)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from fairviz.conditions import (DEFAULT_ALPHAS, DEFAULT_METHODS, METHOD_NAMES, METHODS, DebiasTrainParams, RetrainingAudit,
                                RetrainingParams, simulate)
from fairviz.conditions import data as cdata
from fairviz.core.markup import csv_bytes
from fairviz.core.serialize import clean
from fairviz.data import DataError, guess_training_roles
from fairviz.conditions import display as report
from app_pages import _jobs, _ui, _upload
from app_pages._render import render

JOB = "conditions_sim"
SECTION = "conditions"
GRID_VALUES = tuple(np.round(np.arange(0.1, 0.91, 0.1), 2).tolist())
SOURCES = {**cdata.BUILTIN, "upload": "Upload a file (features or a text column)"}


@st.cache_resource(show_spinner="Preparing the data…", max_entries=4, ttl=_ui.CACHE_TTL)
def builtin(name: str) -> cdata.Dataset:
    return cdata.builtin(name)


@st.cache_resource(show_spinner="Preparing the data (text is embedded with MiniLM-L6; a minute per few thousand "
                                "rows on CPU)…", max_entries=_upload.UPLOAD_ENTRIES, ttl=_upload.UPLOAD_TTL)
def uploaded(digest: str, name: str, label: str, group: str, features: tuple, text: str | None, split: str | None,
             _frame: pd.DataFrame) -> cdata.Dataset:
    embed = cdata.minilm_embedder() if text else None
    return cdata.from_frame(_frame, label, group, features=list(features) or None, text=text, split=split,
                            name=name, embed=embed)


def page() -> None:
    st.title("Retraining simulator")
    _ui.own_data("the training set chosen below (bundled, or a file uploaded here)")
    st.caption("How would a model's accuracy and fairness change if its **training data** were less stereotyped, "
               "or its classes balanced? For each condition the training split is redrawn (m rows whose (class, "
               "group) cells follow the target distribution), every method is retrained, the epoch with the "
               "smallest dev DTO is kept, and the fixed test split is scored — the framework of Han, Shen, Cohn, "
               "Baldwin and Frermann, *Systematic Evaluation of Predictive Fairness* (AACL 2022, §3–6). "
               "Fairness = 1 − GAP(TPR) (equal opportunity, §4.2); DTO = distance to the utopia (1, 1) (§4.4).")
    dataset = source()
    if dataset is None:
        return
    settings = controls(dataset)
    if settings is None:
        return
    min_fairness = selection_rule()
    run_settings = _jobs.controls(JOB, settings, idle="Choose the data and the settings, then press **Run**.",
                                  data=dataset.fingerprint)
    if run_settings is None:
        sim = _jobs.stopped_result(JOB, data=dataset.fingerprint)
        if sim is not None:
            show(sim if min_fairness is None else simulate.reselect(sim, min_fairness),
                 (dataset.fingerprint, "partial", sim.completion, min_fairness))
        return
    sim = _jobs.run(JOB, key=(dataset.fingerprint, run_settings), label="Retraining under each condition",
                    compute=lambda progress: simulate.run(dataset, run_settings, progress=progress))
    if min_fairness is not None:
        sim = simulate.reselect(sim, min_fairness)
    show(sim, (dataset.fingerprint, run_settings, min_fairness))


def source() -> cdata.Dataset | None:
    choice = st.radio("Data", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="sim_source")
    if choice != "upload":
        dataset = builtin(choice)
        st.caption(" ".join(dataset.notes) + f" {dataset.train.n:,} train / {dataset.dev.n:,} dev / "
                   f"{dataset.test.n:,} test rows, {dataset.train.X.shape[1]} features.")
        return dataset
    st.markdown("One row per example: a **label** (classes), a **group** column, and either feature columns "
                "(numeric, or categories that are one-hot encoded) or a **text** column (embedded with the "
                "MiniLM-L6 sentence encoder). An optional **split** column holds train / dev / test; otherwise a "
                "seeded 70 / 15 / 15 split is drawn within each (class, group) cell.")
    upload = _upload.read_upload("Data file (CSV or Parquet)", key="sim_upload", empty="No file uploaded yet.")
    if upload is None:
        return None
    frame, digest = upload.frame, upload.digest
    columns = list(map(str, frame.columns))
    _upload.preview(frame, upload.name)
    none = "(none)"
    guess = guess_training_roles(columns)
    with st.form("sim_mapping"):
        c1, c2, c3 = st.columns(3)
        label = c1.selectbox("Label column", columns, index=_position(columns, guess["label"]))
        group = c2.selectbox("Group column", columns, index=_position(columns, guess["group"]))
        split = c3.selectbox("Split column (optional)", [none] + columns,
                             index=1 + columns.index(guess["split"]) if guess["split"] else 0)
        text = st.selectbox("Text column (optional: embed it instead of using features)", [none] + columns, index=0)
        others = [c for c in columns if c not in (label, group, split)]
        features = st.multiselect("Feature columns (empty: every other column)", others, default=[])
        submitted = st.form_submit_button("Use these columns", type="primary")
    if submitted:
        st.session_state["sim_columns"] = (digest, label, group, tuple(features), None if text == none else text,
                                           None if split == none else split)
    mapping = st.session_state.get("sim_columns")
    if mapping is None or mapping[0] != digest:
        st.info("Check the column roles and press **Use these columns**.")
        return None
    try:
        return uploaded(digest, upload.name, *mapping[1:], frame)
    except DataError as err:
        _ui.show_data_error(err, f"'{upload.name}' cannot be used as mapped")
        return None


def _position(columns: list[str], column: str | None) -> int:
    """The guessed column's place in the choices (the first column when nothing was guessed)."""
    return columns.index(column) if column else 0


def controls(dataset: cdata.Dataset) -> RetrainingParams | None:
    binary = (dataset.n_classes, dataset.n_groups) == (2, 2)
    c1, c2 = st.columns([1, 2])
    kinds = ["cb", "jb"] + (["grid"] if binary else [])
    kind = c1.radio("Condition", kinds, key="sim_kind", format_func={
        "cb": "CB: conditional balance over α", "jb": "JB: joint balance over α",
        "grid": "Grid: class ratio p_y × stereotyping s"}.get,
        help="CB moves the groups within each class toward balance (α = 1) and beyond (α = 2 mirrors them); JB "
             "moves every (class, group) cell toward 1/(classes × groups). α > 1 inverts the bias; cells that go "
             "negative are clipped to 0 and the table renormalised (the paper's Appendix B).")
    if kind == "grid":
        grid = tuple(sorted(c2.multiselect("p_y and s values", GRID_VALUES, default=[0.1, 0.3, 0.5, 0.7, 0.9],
                                           key="sim_grid")))
        alphas = DEFAULT_ALPHAS
        if not grid:
            st.warning("Choose at least one grid value.")
            return None
    else:
        alphas = tuple(sorted(c2.multiselect("α values", DEFAULT_ALPHAS, default=list(DEFAULT_ALPHAS),
                                             key="sim_alphas")))
        grid = RetrainingParams().grid
        if not alphas:
            st.warning("Choose at least one α.")
            return None
    c3, c4, c5 = st.columns(3)
    methods = tuple(c3.multiselect("Methods", METHODS, default=list(DEFAULT_METHODS), format_func=METHOD_NAMES.get,
                                   key="sim_methods"))
    seeds = c4.slider("Seeds", 1, 5, 3, key="sim_seeds", help="The paper uses 5.")
    m = c5.number_input("m: training rows drawn per condition", 10, 200_000, int(min(dataset.m_default, 30_000)),
                        step=500, key=f"sim_m_{dataset.name}_{dataset.fingerprint}",
                        help="Rows drawn from the training split for each condition (the paper: 30,000 for Bios). "
                             "Default: the training split's size (Bios-like: 30,000 scaled like its data).")
    with st.expander("Base learner and hyperparameters"):
        b1, b2, b3, b4 = st.columns(4)
        layers = b1.radio("tanh layers", [2, 1], key="sim_layers", horizontal=True)
        hidden = b2.select_slider("width", [8, 16, 32, 64, 128, 300], value=64, key="sim_hidden",
                                  help="The paper uses 300 over frozen DeepMoji / BERT features.")
        epochs = b3.slider("max epochs", 1, 50, 20, key="sim_epochs", help="Early stopping on dev DTO, patience 3.")
        size = b4.radio("grid", ["small", "wide"], key="sim_size", horizontal=True)
        leak = st.checkbox("Also measure leakage: a linear probe predicting the group from each model's last hidden "
                           "layer (fit on dev, balanced accuracy on test)", value=False, key="sim_leakage")
        if methods:
            render([report.method_settings(methods, size)])
        st.caption("Backbone: fixed features → tanh layers → class logits, Adam (lr 3e-3), batch 1,024 (the paper's; smaller on small sets so that an epoch has at least 16 steps). The paper "
                   "tunes each method over 40–60 settings (Appendices C–D); here the grids are scaled down for a "
                   "shared CPU and the table says exactly what is tried. Vanilla, DS and RW have no "
                   "hyperparameters.")
    if not methods:
        st.warning("Choose at least one method.")
        return None
    settings = RetrainingParams(condition=kind, alphas=alphas, grid=grid, methods=methods, seeds=int(seeds),
                                    m=int(m), grid_size=size, leakage=bool(leak),
                                    train=DebiasTrainParams(hidden=int(hidden), layers=int(layers), epochs=int(epochs)))
    st.caption(f"{settings.n_conditions} condition(s) × {seeds} seed(s) × {len(methods)} method(s) = "
               f"{settings.n_models} models of up to {epochs} epochs on {int(m):,} rows each.")
    return settings


def selection_rule() -> float | None:
    rule = st.radio("Model selection on dev", ["dto", "constraint"], horizontal=True, key="sim_rule",
                    format_func={"dto": "smallest DTO (the paper's §4.4)",
                                 "constraint": "best accuracy with Fairness ≥ τ"}.get)
    if rule == "dto":
        return None
    return float(st.slider("τ: minimum dev Fairness", 0.5, 1.0, 0.9, 0.01, key="sim_tau"))


def show(sim: RetrainingAudit, key: tuple) -> None:
    render(report.simulation_head(sim))
    grid = sim.settings.condition == "grid"
    names = ["Accuracy, Fairness, DTO", "Training cells", *(["Grid"] if grid else []), "Results table"]
    tabs = st.tabs(names)
    with tabs[0]:
        p_y = None
        if grid:
            values = sorted({s.aggregate.p_y for s in sim.selected})
            p_y = st.select_slider("p_y (class ratio) for the lines", values, value=values[len(values) // 2],
                                   key="sim_line_py")
        render(report.sweep(sim, p_y, key), figure_cache=_ui.figure)
    with tabs[1]:
        labels = [c.condition.label for c in sim.train_cells]
        chosen = st.select_slider("Condition", labels, value=labels[-1], key="sim_cells_at")
        render(report.cells(sim, labels.index(chosen), key), figure_cache=_ui.figure)
    if grid:
        with tabs[2]:
            metric = st.radio("Metric", ["dto", "fairness", "performance"], horizontal=True, key="sim_grid_metric",
                              format_func={"dto": "DTO", "fairness": "Fairness", "performance": "Accuracy"}.get)
            render(report.grid(sim, metric, key), figure_cache=_ui.figure)
    with tabs[-1]:
        render(report.selected(sim))
        if sim.selected:
            c1, c2 = st.columns(2)
            c1.download_button("Download this table (CSV)", csv_bytes(simulate.selected_frame(sim)),
                               "conditions_selected.csv", "text/csv", key="sim_csv_selected")
            c2.download_button("Download every run (CSV)", csv_bytes(simulate.runs_frame(sim)),
                               "conditions_runs.csv", "text/csv", key="sim_csv_runs",
                               help="The same file as `fairviz conditions run --csv`.")
    data = clean(sim.to_dict())
    st.session_state.setdefault(_ui.PAGE_JSON, {})[SECTION] = data
    st.download_button("This page's numbers (JSON)", json.dumps(data, indent=2).encode(), "conditions.json",
                       "application/json", key="sim_json",
                       help="The same keys and values as `fairviz conditions run --json` with these settings.")


_ui.guarded(page)
