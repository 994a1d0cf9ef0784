"""Forecast fairness: are your quantile forecasts equally sharp, accurate and honest for every group?

Controls (the forecasts, their columns, the sidebar) → one cached analysis → its display list
(``fairviz.forecast.display.display``), one tab per part; the fans (a series picker) and the JSON download are the
page's own."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from fairviz.core.display import Group, group
from fairviz.core.markup import md
from fairviz.core.serialize import clean
from fairviz.data import DataError
from fairviz.forecast import (EvalParams, ForecastAudit, ForecastMapping, QuantileForecasts, analyse, crps,
                              guess_mapping, parse_level, series_crps, series_in_group, stack_models)
from fairviz.forecast import build as build_models
from fairviz.forecast import figures as figs
from fairviz.forecast import readings
from fairviz.forecast import display as report
from app_pages import _ui, _upload
from app_pages._render import render

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "forecast" / "lorenz_forecasts.csv"
SAMPLE_NAME = "Lorenz forecasts with a rare regime (bundled)"
BAND_CHOICES = (0.5, 0.8, 0.9, 0.95, 0.99)
TABS = {"Groups": "groups", "Coverage gaps": "gaps", "Fans": None, "Model comparison": "comparison",
        "PIT by group": "pit", "JSON": None}


@st.cache_data(show_spinner="Checking the forecasts…", max_entries=2 * _upload.UPLOAD_ENTRIES, ttl=_upload.UPLOAD_TTL)
def build(digest: str, mapping: ForecastMapping, _frame: pd.DataFrame) -> dict:
    return build_models(_frame, mapping)


def analysis(digest: str, mapping: ForecastMapping, model: str, compare: str | None, attribute: str,
             params: EvalParams, models: dict) -> ForecastAudit:
    """Shared by sessions (results are immutable); a progress bar while it runs (see _ui.cached_with_progress)."""
    return _ui.cached_with_progress(
        "forecast_fairness", (digest, mapping, model, compare, attribute, params),
        lambda progress: analyse(models[model], attribute, params, models[compare] if compare else None,
                                 progress=progress),
        "Scoring the forecasts by group")


def page() -> None:
    st.title("Forecast fairness")
    _ui.own_data("quantile forecasts, uploaded here or the bundled Lorenz-63 ones")
    st.caption(readings.ABOUT)
    loaded = source()
    if loaded is None:
        return
    frame, digest, name = loaded
    mapping = mapping_form(frame, name)
    if mapping is None:
        return
    try:
        models = build(digest, mapping, frame)
    except DataError as err:
        _ui.show_data_error(err, f"'{name}' cannot be used as mapped")
        return
    names = list(models)
    first = models[names[0]]
    with st.sidebar:
        st.markdown("**Forecast fairness**")
        attribute = st.selectbox("Group attribute", first.attribute_names, key="ff_attribute")
        model = st.selectbox("Model (A)", names, key="ff_model")
        others = ["(none)"] + [m for m in names if m != model]
        default = 1 if len(others) > 1 else 0
        compare = st.selectbox("Compare with model (B)", others, index=default, key="ff_compare",
                               help="Skill of A over B per group: 1 − CRPS_A / CRPS_B on the rows both forecast.")
        bands = st.multiselect("Central bands", BAND_CHOICES, default=list(crps.BANDS), key="ff_bands",
                               format_func=readings.band_label)
        resamples = st.select_slider("Bootstrap resamples (series)", [200, 500, 1000, 2000], value=1000,
                                     key="ff_resamples")
        seed = st.number_input("Seed", 0, 10_000, 0, key="ff_seed")
    compare = None if compare == "(none)" else compare
    params = EvalParams(tuple(sorted(bands)) or crps.BANDS, int(resamples), 0.95, int(seed))
    result = analysis(digest, mapping, model, compare, attribute, params, models)
    items = report.display(result, key=(digest, mapping, model, compare, attribute, params))
    render([i for i in items if not isinstance(i, Group)], figure_cache=_ui.figure)
    for tab, (label, key) in zip(st.tabs(list(TABS)), TABS.items()):
        with tab:
            if label == "Fans":
                fans_tab(models[model], result)
            elif label == "JSON":
                json_tab(result)
            elif key == "comparison" and not result.skills:
                st.info("Pick a second model in the sidebar (a file with a model column, or a second upload) to "
                        "compare them group by group.")
            else:
                render(group(items, key).items, figure_cache=_ui.figure)


def json_tab(result: ForecastAudit) -> None:
    payload = json.dumps(clean(result.to_dict()), indent=2)
    st.download_button("Download the results as JSON", payload.encode(), "forecast_fairness.json", "application/json")
    st.code(payload[:6000] + ("\n…" if len(payload) > 6000 else ""), language="json")


def source():
    choice = st.radio("Forecasts", [SAMPLE_NAME, "Upload a file"], horizontal=True, key="ff_source")
    if choice == SAMPLE_NAME:
        raw = SAMPLE.read_bytes()
        frame, digest = _upload.read(f"sample:{SAMPLE.stat().st_mtime_ns}", SAMPLE.name, raw)
        st.caption("Lorenz-63 test windows forecast by two PTNs trained on systems of which only one in ten is in a "
                   "rare regime (ρ ≈ 35 instead of 28): one PTN sees the static context (σ, ρ, β), one does not. "
                   "Groups: `regime` (typical / rare) and `lobe` (the wing a window starts on: a null control, the "
                   "system is symmetric). Made by scripts/make_forecast_assets.py.")
        with st.expander("File format"):
            st.markdown(FORMAT_HELP)
            st.download_button("Download this sample", raw, SAMPLE.name, "text/csv")
        return frame, digest, SAMPLE.name
    st.markdown(FORMAT_HELP)
    first = _upload.read_upload("Quantile forecasts (CSV or Parquet)", key="ff_upload")
    extra = _upload.read_upload("Optional: a second model's forecasts, same layout, to compare", key="ff_upload_b")
    if first is None:
        if not _upload.failed("ff_upload"):
            st.info("No file uploaded yet. The bundled sample shows what the page does.")
        return None
    if _upload.failed("ff_upload_b"):
        return None
    frame, digest = first.frame, first.digest
    if extra is not None:
        try:
            frame, digest = stack_models(frame, extra.frame, first.name, extra.name), digest + extra.digest
        except DataError as err:
            _ui.show_data_error(err, "The two files cannot be compared")
            return None
    return frame, digest, first.name


FORMAT_HELP = (
    "One row per series, step (lead time) and model, with the observed **truth** and the **quantiles**: either one "
    "column per level (`q0.05`, `q_0.5`, `quantile_0.95`, `0.9`, or percent `q05`/`p95`) or, in long format, a "
    "level column (values in (0, 1)) with a value column. Add one or more **group** columns, optionally a `model` "
    "column (several models in one file) and a point forecast. Crossing quantiles are sorted, and bands the "
    "levels do not reach (e.g. 99% without levels 0.005 and 0.995) are reported as undefined.")


def mapping_form(frame: pd.DataFrame, name: str) -> ForecastMapping | None:
    guess = guess_mapping(frame)
    columns = list(map(str, frame.columns))
    if name == SAMPLE.name:
        return guess
    _upload.preview(frame, name)
    with st.form("ff_mapping"):
        c1, c2, c3 = st.columns(3)
        series = _upload.pick(c1, "Series id", columns, guess.series)
        step = _upload.pick(c2, "Step (lead time)", columns, guess.step)
        truth = _upload.pick(c3, "Truth (observed value)", columns, guess.truth)
        groups = st.multiselect("Group column(s)", columns, default=[g for g in guess.groups if g in columns])
        c4, c5 = st.columns(2)
        model = _upload.pick(c4, "Model column (optional)", columns, guess.model, optional=True)
        point = _upload.pick(c5, "Point forecast (optional)", columns, guess.point, optional=True)
        long = st.checkbox("Long format (a level column and a value column)", value=guess.long)
        c6, c7 = st.columns(2)
        level = _upload.pick(c6, "Level column (long format)", columns, guess.level, optional=True)
        value = _upload.pick(c7, "Value column (long format)", columns, guess.value, optional=True)
        wide = [c for c in columns if parse_level(c) is not None]
        st.caption(f"Quantile columns found (wide format): {md(', '.join(wide)) if wide else 'none'}.")
        st.form_submit_button("Use these columns", type="primary")
    return ForecastMapping(series, step, truth, tuple(groups), model, point, level if long else None,
                              value if long else None)


def fans_tab(fc: QuantileForecasts, result: ForecastAudit) -> None:
    """One series' fan, picked by group and series (the page's own view: it reads the rows, not the result)."""
    view = fc.attributes[result.attribute]
    c1, c2 = st.columns([1, 3])
    name = c1.selectbox("Group", view.names, key="ff_fan_group")
    ids = series_in_group(fc, result.attribute, name)
    series_id = c2.selectbox(f"Series ({ids.size:,} in this group)", ids, key="ff_fan_series")
    _ui.chart(figs.series_fan_figure(fc, series_id, result.attribute, name, result.bands), width="stretch")
    render([readings.series_crps(series_crps(fc, series_id), result.group(name).crps)])


_ui.guarded(page)
