"""Synthetic data (HydraGAN): a Conditional HydraGAN with diversity quotas, judged as the thesis judges it.

Controls (the table, the quotas, the run settings) → one run (a job: Run/Stop, shared by identical requests) → its
display list (``fairviz.synth.display.display``), one tab per group; the downloads are the page's own."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from fairviz.core.display import Group, group
from fairviz.core.markup import csv_bytes
from fairviz.data import DataError, label_values
from fairviz.synth import display as report
from fairviz.synth import PRESETS, SynthParams, SynthAudit, SynthTable, load, prepare, quotas, run
from app_pages import _jobs, _ui, _upload
from app_pages._render import render

JOB = "synth"
UPLOAD = "synth_upload"          # session state: (file name, digest) of the uploaded table; its bytes: _upload.KEPT
SECTION = "synth"
CITATION = ("J. Briscoe, *The Art of Fairness: Building AI Accountability Through Objective Bias Analyses* "
            "(PhD proposal, Washington State University, 2024), §3.5 “Conditional HydraGAN”, Tables 3.4–3.5 and "
            "Fig. 3.4; HydraGAN itself: C. DeSmet and D. Cook, ACM TIST 2024.")
SOURCES = {"adult": "UCI Adult", "compas": "ProPublica COMPAS", "upload": "Upload a file"}


# ----------------------------------------------------------------------------------------------- cached work

@st.cache_resource(show_spinner="Loading the sample…", max_entries=8, ttl=_ui.CACHE_TTL)
def preset_table(key: str, groups: tuple[str, ...]) -> SynthTable:
    return load(key, groups=list(groups) or None)


@st.cache_resource(show_spinner=False, max_entries=_upload.UPLOAD_ENTRIES, ttl=_upload.UPLOAD_TTL)
def upload_table(digest: str, name: str, label: str, groups: tuple[str, ...], positive: str,
                 _frame: pd.DataFrame) -> SynthTable:
    return prepare(_frame, label, groups, positive, source=name, file_fingerprint=digest)


# ----------------------------------------------------------------------------------------------- data choice

def choose_table() -> SynthTable | None:
    source = st.radio("Data", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="synth_source")
    if source != "upload":
        preset = PRESETS[source]
        columns = ["race", "sex"] if source == "compas" else ["sex", "race"]
        groups = st.multiselect("Group column(s) for the condition (two: their intersection)", columns,
                                default=list(preset.groups), max_selections=2, key=f"synth_groups_{source}")
        st.caption(preset.about)
        if not groups:
            st.info("Choose at least one group column.")
            return None
        return preset_table(source, tuple(groups))
    upload = _upload.read_upload("Mixed tabular CSV or Parquet (a binary label, one or two group columns, features)",
                                 key="synth_file")
    if upload is not None:                                      # kept when the visitor leaves the page and returns
        _upload.keep_for_visitor(UPLOAD, upload.name, upload.raw, upload.digest)
    elif _upload.failed("synth_file"):
        return None
    kept = _upload.kept_for_visitor(UPLOAD)
    if kept is None:
        if UPLOAD in st.session_state:
            st.info(_upload.gone("use it here"))
        st.info("Upload a table: one row per record, a binary label, one or two group columns and feature columns "
                "(numbers or categories). Rows with missing values are dropped.")
        return None
    name, digest, raw = kept
    try:
        frame, digest = (upload.frame, upload.digest) if upload is not None else \
            _upload.read(f"kept:{digest}", name, raw)
    except DataError as err:
        _ui.show_data_error(err, f"'{name}' could not be read")
        return None
    columns = list(frame.columns)
    _upload.preview(frame, name)
    c1, c2, c3 = st.columns(3)
    label = c1.selectbox("Label column (binary)", columns, index=len(columns) - 1, key="synth_label")
    groups = c2.multiselect("Group column(s)", [c for c in columns if c != label], max_selections=2,
                            key="synth_groups_upload")
    values = [str(v) for v in label_values(frame[label])]
    positive = c3.selectbox("Benefit (positive) label value", values or ["—"], index=max(0, len(values) - 1),
                            key="synth_positive")
    if not groups:
        st.info("Choose one group column (or two, for their intersection).")
        return None
    return upload_table(digest, name, label, tuple(groups), positive, frame)


def quota_input(what: str, levels: list, real: pd.Series, key: str) -> str:
    mode = st.radio(f"{what.capitalize()} target", ["Uniform", "As in the real data", "Custom"], horizontal=True,
                    key=f"{key}_mode", help="Uniform is the thesis's target (Table 3.5).")
    if mode == "Uniform":
        return "uniform"
    current = quotas.shares_text(levels, real)
    if mode == "As in the real data":
        return current
    return st.text_input(f"{what.capitalize()} shares (NAME=SHARE, …; normalised to 1)", value=current,
                         key=f"{key}_custom")


def settings_form(table: SynthTable) -> SynthParams:
    conditions = sorted(set(table.condition), key=str)
    labels = sorted(table.features[table.label].unique().tolist(), key=str)
    c1, c2 = st.columns(2)
    with c1:
        group_target = quota_input("group", conditions, pd.Series(table.condition), "synth_gq")
        st.caption("A hard quota: the generator is queried with each group's condition for exactly its share of "
                   "rows.")
    with c2:
        label_target = quota_input("label", labels, table.features[table.label], "synth_lq")
        st.caption("A soft quota: the diversity head pulls each generated batch's label shares towards it.")
    c1, c2, c3, c4 = st.columns(4)
    rows = c1.number_input("Synthetic rows (0: as many as the real training rows)", 0, 200_000, 0, step=500,
                           key="synth_rows")
    epochs = c2.number_input("Epochs", 1, 500, 30, key="synth_epochs")
    trials = c3.number_input("Trials (boxplots)", 1, 20, 5, key="synth_trials")
    seed = c4.number_input("Seed", 0, 10_000, 0, key="synth_seed")
    return SynthParams(group_target=group_target, label_target=label_target, rows=int(rows) or None,
                         epochs=int(epochs), trials=int(trials), seed=int(seed))


# ----------------------------------------------------------------------------------------------- results

TABS = {"Distributions (Table 3.5)": "distributions", "Fairness (Table 3.4)": "fairness",
        "Boxplots (Fig. 3.4)": "boxplots", "Realism & privacy": "realism", "Training": "training",
        "The thesis's results": "thesis"}


def show_result(result: SynthAudit, key: tuple) -> None:
    data = result.to_dict()
    st.session_state.setdefault(_ui.PAGE_JSON, {})[SECTION] = data
    items = report.display(result, key)
    if result.completion is not None:
        render([result.completion.note()])
    render([i for i in items if not isinstance(i, Group)], figure_cache=_ui.figure)
    stem = result.source.rsplit(".", 1)[0]
    c1, c2 = st.columns(2)
    c1.download_button("Download the synthetic CSV",
                       csv_bytes(result.synthetic, lineterminator="\n", float_format="%.6f"), f"{stem}_synthetic.csv",
                       "text/csv", key="synth_csv",
                       help="Text cells starting with = + - @ get a leading apostrophe so spreadsheets do not run them.")
    c2.download_button("This page's numbers (JSON)", json.dumps(data, indent=2).encode(), f"{stem}_synth.json",
                       "application/json", key="synth_json", help="The same keys and values as `fairviz synth train "
                                                                   "--json` with these settings.")
    for tab, name in zip(st.tabs(list(TABS)), TABS.values()):
        with tab:
            render(group(items, name).items, figure_cache=_ui.figure)


def page() -> None:
    st.title("Synthetic data (HydraGAN)")
    _ui.own_data("a training table you upload here or a bundled one")
    st.caption("Train a Conditional HydraGAN on a table, generate synthetic training data with the group and label "
               "shares you ask for, and check whether a classifier trained on it is fairer on real data. "
               f"After {CITATION}")
    table = choose_table()
    if table is None:
        return
    for note in table.notes:
        st.caption(note)
    settings = settings_form(table)
    chosen = _jobs.controls(JOB, settings, idle="Set the quotas, then press Run to train (about 1 s per epoch on "
                                                "Adult on a laptop core).", data=table.fingerprint)
    if chosen is None:
        partial = _jobs.stopped_result(JOB, data=table.fingerprint)      # the trials a stopped run finished
        if partial is not None:
            show_result(partial, (table.fingerprint, "partial", partial.completion))
        return
    result = _jobs.run(JOB, key=(table.fingerprint, chosen), label="Training the Conditional HydraGAN",
                       compute=lambda progress: run(table, chosen, progress))
    show_result(result, (table.fingerprint, chosen))


_ui.guarded(page)
