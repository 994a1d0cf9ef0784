"""Home: pick a sample or upload predictions, map the columns once, and see what the data holds."""
from __future__ import annotations

import numpy as np
import streamlit as st

from fairviz.calibration.figures import score_distribution_figure
from fairviz.core.display import Bullets
from fairviz.core.markup import md
from fairviz.data import ColumnMapping, DataError, build_predictions, guess_mapping, guess_positive_label, label_values
from fairviz.data.overview import display, overview, score_shares
from fairviz.data.samples import DEFAULT_SAMPLE, samples
from fairviz.findings import KIND_TITLES, finding_text
from app_pages import _render, _sources, _ui, _upload

ROW_ROLES_NOTE = ("Without text, id or feature columns the file is reduced once (DuckDB) to counts per group, label "
                  "and score, and every audit page reads that small table. Text, id and feature columns need the "
                  "rows themselves, so mapping one keeps every row in memory (slower for large files).")


def page() -> None:
    ctx = _ui.context()
    st.title("fairviz — visual fairness exploration")
    st.markdown("Upload a CSV of model predictions (a label, a score, one or more group columns) or start from a "
                "bundled sample, then walk through the audit pages on the left.")
    kinds = ["Bundled sample", "Upload a file"] + (["Listed source"] if _sources.offered() else [])
    source = st.radio("Data", kinds, horizontal=True, key="home_source",
                      help="Listed sources are tables and queries the server's operator named (FAIRVIZ_SOURCES); "
                           "they are reduced where they live, and a visitor only ever picks one by name.")
    if source == "Bundled sample":
        _sample_picker()
    elif source == "Listed source":
        _sources.source_picker()
    else:
        _upload_section()
    if "flash" in st.session_state:
        st.success(st.session_state.pop("flash"))
    _findings(ctx)
    _summary(ctx.pred)


def _sample_picker() -> None:
    options = samples()
    keys = list(options)
    current_key = st.session_state.get("sample_key") or DEFAULT_SAMPLE
    key = st.selectbox("Sample", keys, index=keys.index(current_key), format_func=lambda k: options[k].title,
                       key="sample_choice", on_change=_load_chosen_sample)
    sample = options[key]
    st.caption(f"{sample.description}  \n*Source:* {sample.provenance}")
    if st.session_state.get("sample_key") != key:
        st.button("Load this sample", on_click=_load_chosen_sample, type="primary")


def _load_chosen_sample() -> None:
    """Runs before the script (a widget callback), so the sidebar widgets can still be reset."""
    key = st.session_state["sample_choice"]
    st.session_state["sample_key"] = key
    _ui.use_predictions(_ui.bundled(key), samples()[key].threshold)


def _upload_section() -> None:
    st.caption("CSV (comma, semicolon or tab separated) or Parquet. One row per prediction: a binary label, "
               "a score in [0, 1] (probability of the positive class) and one or more group columns; optional "
               "text, id and feature columns.")
    upload = _upload.read_upload("Predictions file", key="upload", preview_only=True,
                                 empty="No file uploaded yet: the pages keep showing the current data.")
    if upload is None:
        if _upload.failed("upload"):
            st.caption("The previous data stays loaded.")
        return
    _mapping_form(upload)


def _mapping_form(upload: _upload.Uploaded) -> None:
    frame, name = upload.frame, upload.name          # the first rows: enough to guess and check the roles
    guess = guess_mapping(frame)
    columns = list(frame.columns)
    _upload.preview(frame, name, "Check the column roles:", rows=upload.rows)
    with st.form("mapping"):
        c1, c2, c3 = st.columns(3)
        label = _upload.pick(c1, "Label column (binary)", columns, guess.label)
        score = _upload.pick(c2, "Score column (probability in [0, 1])", columns, guess.score)
        groups = c3.multiselect("Group column(s)", columns, default=list(guess.groups))
        values = label_values(frame[label]) if label in frame else []
        c4, c5, c6 = st.columns(3)
        positive = c4.selectbox("Positive label value", values or ["—"],
                                index=values.index(guess_positive_label(values)) if len(values) == 2 else 0,
                                help="Which label value means Y = 1.")
        text = _upload.pick(c5, "Text column (optional)", columns, guess.text, optional=True)
        row_id = _upload.pick(c6, "Id column (optional)", columns, guess.row_id, optional=True)
        features = st.multiselect("Feature columns (optional, numeric)", columns, default=list(guess.features)[:10])
        intersect = st.checkbox("Also compare intersections of the first two group columns", value=False)
        submitted = st.form_submit_button("Use these columns", type="primary")
        st.caption(ROW_ROLES_NOTE)
    if not submitted:
        return
    mapping = ColumnMapping(label=label, score=score, groups=tuple(groups),
                            positive_label=positive if len(values) == 2 else None,
                            text=text, features=tuple(features), row_id=row_id, intersect=intersect)
    row_level = bool(mapping.text or mapping.row_id or mapping.features)
    try:
        if row_level:                                 # texts, ids and features need the rows themselves
            chosen = (mapping.label, mapping.score, *mapping.groups, *mapping.features,
                      *(c for c in (mapping.text, mapping.row_id) if c))
            full, digest = upload.columns(chosen)     # only the mapped columns are decoded
            pred = build_predictions(full, mapping, source=name, file_fingerprint=digest)
        else:                                         # the engine's reduction: counts per (group, label, score)
            pred = _upload.reduce_upload(upload.digest, name, repr(mapping), upload.raw, mapping).predictions()
            _upload.remember_reduced(upload, mapping, pred.fingerprint)   # D* can fetch the file's rows again
    except DataError as err:
        _ui.show_data_error(err)
        st.caption("Nothing was replaced: the pages keep showing the previous data until these are fixed.")
        return
    _ui.use_predictions(pred)
    st.session_state["sample_key"] = None
    how = ("row by row, because text, id or feature columns are mapped" if row_level else
           f"reduced to {pred.y.size:,} (group, label, score) cells that every audit page reads")
    st.session_state["flash"] = f"Loaded {pred.n:,} rows from '{name}' ({how}). Every page now uses this file."
    st.rerun()


def _findings(ctx) -> None:
    """The Summary: what is unfair, for whom, how sure — the audit's top findings, each with a link to the page that
    shows it, then the downloads."""
    st.subheader(f"Summary: {md(ctx.pred.source)} · {md(ctx.attribute)} at τ = {ctx.threshold:.2f}")
    result = _ui.audit(ctx)
    summary = result.findings
    top = summary.top if summary is not None else ()
    for item in result.summary_display():
        if top and isinstance(item, Bullets) and item.level == "finding":     # the top findings, each with its link
            box = st.container(border=True)                  # the neutral box the display list's findings get
            for finding in top:
                _render.render([Bullets((finding_text(finding, summary, "plain"),), "plain")], box)
                with box:
                    _finding_link(ctx, finding)
        else:
            _render.render([item])
    st.markdown("**Audit report** — the same numbers as the pages and `fairviz audit`.")
    _ui.report_downloads(ctx)


FINDING_PAGES = {"parity": ("app_pages/parity.py", "Group parity", ":material/balance:"),
                 "residuals": ("app_pages/residuals.py", "Residual distribution", ":material/stacked_line_chart:"),
                 "calibration": ("app_pages/calibration.py", "Calibration", ":material/target:")}


def _finding_link(ctx, finding) -> None:
    """A link that opens the finding's page on its view: the frame's choices, the compared group and the metric."""
    view = dict(finding.candidate.view)
    page, title, icon = FINDING_PAGES[view["page"]]
    params = _ui.view_params(ctx) | {k: view[k] for k in ("group", "metric") if view.get(k)}
    st.page_link(page, label=f"Open on {title}: {md(view['group'])} vs {md(view['reference'])}, "
                             f"{KIND_TITLES[view['kind']]}", icon=icon, query_params=params)


def _summary(pred) -> None:
    _render.render(display(_overview(pred.fingerprint, pred)))
    _score_distribution(pred)
    st.markdown("**Next:**")
    st.page_link("app_pages/residuals.py", label="Residual distribution fairness", icon=":material/stacked_line_chart:")
    st.page_link("app_pages/calibration.py", label="Calibration by group", icon=":material/target:")
    st.page_link("app_pages/parity.py", label="Group parity: OFI and Disparate Impact", icon=":material/balance:")
    st.page_link("app_pages/significance.py", label="Sample-size significance: MATCH and CPS", icon=":material/casino:")
    st.page_link("app_pages/explanations.py", label="Explanation disparity (text models)", icon=":material/manage_search:")
    st.page_link("app_pages/forecast_fairness.py", label="Forecast fairness (quantile forecasts by group)",
                 icon=":material/ssid_chart:")
    st.page_link("app_pages/synthetic_data.py", label="Synthetic data with diversity quotas (Conditional HydraGAN)",
                 icon=":material/dataset:")


SCORE_BINS = np.linspace(0.0, 1.0, 21)
SHOWN_GROUPS = 8


def _score_distribution(pred) -> None:
    """Where the model puts each group's scores (the first attribute's largest groups), in 20 bins. Drawn here, the
    chart also loads the browser's Plotly library while the visitor is on this page: without it, the first audit
    page opened pays that (≈ 1.5 s in Chromium) on top of its own drawing."""
    attribute = pred.attribute_names[0]

    def build():
        names, shares = score_shares(pred, attribute, SCORE_BINS, SHOWN_GROUPS)
        return score_distribution_figure(attribute, names, SCORE_BINS, shares)

    _ui.chart(_ui.figure(("home.scores", pred.fingerprint, attribute), build), width="stretch")


@st.cache_data(show_spinner=False, max_entries=8, ttl=_ui.CACHE_TTL)
def _overview(fingerprint: str, _pred):
    return overview(_pred)


_ui.guarded(page)
