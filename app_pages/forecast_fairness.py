"""Forecast fairness: are your quantile forecasts equally sharp, accurate and honest for every group?"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from fairviz.core.markup import md

from fairviz.core.serialize import clean
from fairviz.data import DataError
from fairviz.forecast import figures as figs
from fairviz.core.wording import fmt, fmt_interval
from fairviz.forecast import crps as scores
from fairviz.forecast import fairness as ev
from app_pages import _ui, _upload
from app_pages._ui import CACHE_TTL

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "forecast" / "lorenz_forecasts.csv"
SAMPLE_NAME = "Lorenz forecasts with a rare regime (bundled)"
BAND_CHOICES = (0.5, 0.8, 0.9, 0.95, 0.99)


@st.cache_data(show_spinner="Checking the forecasts…", max_entries=8, ttl=CACHE_TTL)
def build(digest: str, mapping: ev.ForecastMapping, _frame: pd.DataFrame) -> dict:
    return ev.build(_frame, mapping)


def analysis(digest: str, mapping: ev.ForecastMapping, model: str, compare: str | None, attribute: str,
             params: ev.EvalParams, models: dict) -> ev.ForecastFairness:
    """Shared by sessions (results are immutable); a progress bar while it runs (see _ui.cached_with_progress)."""
    return _ui.cached_with_progress(
        "forecast_fairness", (digest, mapping, model, compare, attribute, params),
        lambda progress: ev.analyse(models[model], attribute, params, models[compare] if compare else None,
                                    progress=progress),
        "Scoring the forecasts by group")


def page() -> None:
    st.title("Forecast fairness")
    st.caption("Quantile forecasts for several groups: is the forecast as accurate (CRPS, pinball loss), as sharp "
               "(band width) and as honest (coverage of its bands) for every group? Intervals resample whole series "
               "within each group (a cluster bootstrap), because the steps of one series are not independent.")
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
        bands = st.multiselect("Central bands", BAND_CHOICES, default=list(scores.BANDS), key="ff_bands",
                               format_func=lambda b: f"{100 * b:g}%")
        resamples = st.select_slider("Bootstrap resamples (series)", [200, 500, 1000, 2000], value=1000,
                                     key="ff_resamples")
        seed = st.number_input("Seed", 0, 10_000, 0, key="ff_seed")
    compare = None if compare == "(none)" else compare
    params = ev.EvalParams(tuple(sorted(bands)) or scores.BANDS, int(resamples), 0.95, int(seed))
    result = analysis(digest, mapping, model, compare, attribute, params, models)
    for note in result.warnings:
        st.warning(note)
    summary(result, models[model])
    tabs = st.tabs(["Groups", "Coverage gaps", "Fans", "Model comparison", "PIT by group", "JSON"])
    with tabs[0]:
        groups_tab(result)
    with tabs[1]:
        gaps_tab(result)
    with tabs[2]:
        fans_tab(models[model], result)
    with tabs[3]:
        compare_tab(result)
    with tabs[4]:
        _ui.chart(figs.pit_figure({g.name: g.pit_hist for g in result.groups}), width="stretch")
        st.caption("PIT = the forecast's CDF at the truth. Flat: calibrated. U-shaped: bands too narrow for that "
                   "group (truths fall in the tails). Hump: too wide. Sloped: biased up or down.")
    with tabs[5]:
        payload = json.dumps(clean(result.to_dict()), indent=2)
        st.download_button("Download the results as JSON", payload.encode(), "forecast_fairness.json",
                           "application/json")
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
            frame, digest = _stack(frame, extra.frame, first.name, extra.name), digest + extra.digest
        except DataError as err:
            _ui.show_data_error(err, "The two files cannot be compared")
            return None
    return frame, digest, first.name


def _stack(a: pd.DataFrame, b: pd.DataFrame, name_a: str, name_b: str) -> pd.DataFrame:
    """Two single-model files → one file with a model column (named after the files)."""
    if set(a.columns) != set(b.columns):
        missing = sorted(set(a.columns) ^ set(b.columns))[:6]
        raise DataError(f"The two files need the same columns; these are in only one of them: {', '.join(map(str, missing))}.")
    if "model" in a.columns:
        raise DataError("The first file already has a 'model' column: put both models in it instead of a second file.")
    label_a, label_b = Path(name_a).stem, Path(name_b).stem
    if label_a == label_b:
        label_a, label_b = f"{label_a} (A)", f"{label_b} (B)"
    return pd.concat([a.assign(model=label_a), b[a.columns].assign(model=label_b)], ignore_index=True)


FORMAT_HELP = (
    "One row per series, step (lead time) and model, with the observed **truth** and the **quantiles**: either one "
    "column per level (`q0.05`, `q_0.5`, `quantile_0.95`, `0.9`, or percent `q05`/`p95`) or, in long format, a "
    "level column (values in (0, 1)) with a value column. Add one or more **group** columns, optionally a `model` "
    "column (several models in one file) and a point forecast. Crossing quantiles are sorted, and bands the "
    "levels do not reach (e.g. 99% without levels 0.005 and 0.995) are reported as undefined.")


def mapping_form(frame: pd.DataFrame, name: str) -> ev.ForecastMapping | None:
    guess = ev.guess_mapping(frame)
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
        wide = [c for c in columns if ev.parse_level(c) is not None]
        st.caption(f"Quantile columns found (wide format): {md(', '.join(wide)) if wide else 'none'}.")
        st.form_submit_button("Use these columns", type="primary")
    return ev.ForecastMapping(series, step, truth, tuple(groups), model, point, level if long else None,
                              value if long else None)


def summary(result: ev.ForecastFairness, fc: ev.QuantileForecasts) -> None:
    o = result.overall
    cols = st.columns(4)
    cols[0].metric("Series × steps", f"{o.n_series:,} × {o.n_rows // max(o.n_series, 1)}")
    cols[1].metric("CRPS (all)", fmt(o.crps), help=f"95% CI {fmt_interval(o.ci.get('crps'))}")
    cols[2].metric("Pinball loss (all)", fmt(o.pinball), help=f"mean over {fc.levels.size} levels")
    band = 0.9 if 0.9 in result.bands else (result.bands[-1] if result.bands else None)
    if band is not None:
        cols[3].metric(f"{100 * band:g}% band coverage", fmt(o.coverage[band]),
                       help=f"95% CI {fmt_interval(o.ci.get(f'coverage_{band:g}'))}")
    worst = max(result.groups, key=lambda g: g.crps)
    best = min(result.groups, key=lambda g: g.crps)
    text = (f"**Reading.** The forecasts of *{worst.name}* are the least accurate (CRPS {fmt(worst.crps)}, CI "
            f"{fmt_interval(worst.ci.get('crps'))}) and those of *{best.name}* the most (CRPS {fmt(best.crps)}, CI "
            f"{fmt_interval(best.ci.get('crps'))}).")
    gap = result.largest_gap(band) if band is not None else None
    kind = "info"
    if gap is not None:
        excludes = np.isfinite(gap.ci.low) and (gap.ci.low > 0 or gap.ci.high < 0)
        text += (f" The {100 * band:g}% band covers {fmt(result.group(gap.group_i).coverage[band])} of *{gap.group_i}*'s "
                 f"truths ({_honesty(result.group(gap.group_i), band)}) and "
                 f"{fmt(result.group(gap.group_j).coverage[band])} of *{gap.group_j}*'s "
                 f"({_honesty(result.group(gap.group_j), band)}): a gap of {gap.gap:+.3f} (95% CI {fmt_interval(gap.ci)}), "
                 + ("so the forecast states its uncertainty differently well for the two groups." if excludes
                    else "not distinguishable from resampling noise."))
        kind = "bad" if excludes and abs(gap.gap) >= 0.05 else ("warn" if excludes else "good")
    if result.skills:
        lo = min(result.skills, key=lambda s: s.skill if np.isfinite(s.skill) else np.inf)
        hi = max(result.skills, key=lambda s: s.skill if np.isfinite(s.skill) else -np.inf)
        text += (f" Against '{md(result.compare_model)}', '{md(result.model)}' has skill {fmt(hi.skill)} on *{md(hi.name)}* and "
                 f"{fmt(lo.skill)} on *{md(lo.name)}* (1 − CRPS ratio; > 0 means A is better).")
    _ui.verdict_box(kind, text)


def _honesty(g: ev.GroupScores, band: float) -> str:
    """Whether a group's band is too wide, too narrow or about right (its CI excludes the nominal level or not)."""
    ci = g.ci.get(f"coverage_{band:g}")
    if ci is None or not np.isfinite(ci.low):
        return "too few series to tell"
    if ci.low > band:
        return "too wide"
    if ci.high < band:
        return "too narrow"
    return "about right"


def groups_tab(result: ev.ForecastFairness) -> None:
    rows = []
    for g in [*result.groups, result.overall]:
        row = {"group": g.name, "series": g.n_series, "rows": g.n_rows, "CRPS": g.crps,
               "CRPS CI": fmt_interval(g.ci.get("crps")), "pinball": g.pinball,
               "pinball CI": fmt_interval(g.ci.get("pinball"))}
        for b in result.bands:
            row[f"coverage {100 * b:g}%"] = g.coverage[b]
            row[f"CI {100 * b:g}%"] = fmt_interval(g.ci.get(f"coverage_{b:g}"))
            row[f"width {100 * b:g}%"] = g.width[b]
        rows.append(row)
    numeric = [c for c in rows[0] if c.startswith(("CRPS", "pinball", "coverage", "width")) and "CI" not in c]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in numeric})
    c1, c2 = st.columns(2)
    _ui.chart_at(c1, figs.group_metric_figure(result, "crps", "CRPS by group (lower is better)"), width="stretch")
    _ui.chart_at(c2, figs.group_metric_figure(result, "pinball", "Mean pinball loss by group"), width="stretch")
    if result.bands:
        band = 0.9 if 0.9 in result.bands else result.bands[-1]
        _ui.chart(figs.group_metric_figure(result, f"width_{band:g}",
                                                 f"Mean width of the {100 * band:g}% band (sharpness)"),
                        width="stretch")
    st.caption("CRPS is computed from the given quantile levels (2 × the level-weighted pinball loss; exact for "
               "levels (j − ½)/c, an approximation for sparse levels). A narrower band is only better if its "
               "coverage holds: read width next to coverage.")


def gaps_tab(result: ev.ForecastFairness) -> None:
    if not result.bands:
        st.info("None of the chosen bands is described by the file's quantile levels.")
        return
    _ui.chart(figs.coverage_gap_figure(result), width="stretch")
    rows = [{"band": f"{100 * g.band:g}%", "pair (i − j)": f"{g.group_i} − {g.group_j}", "coverage gap": g.gap,
             "95% CI": fmt_interval(g.ci),
             "reading": ("differs" if np.isfinite(g.ci.low) and (g.ci.low > 0 or g.ci.high < 0) else "no clear gap")}
            for g in result.gaps]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"coverage gap": st.column_config.NumberColumn(format="%+.3f")})
    st.caption("Coverage gap = coverage of group i minus group j for the same band (the equalized-coverage view of "
               "fair prediction intervals). Intervals: percentile bootstrap over series, resampled within each group.")


def fans_tab(fc: ev.QuantileForecasts, result: ev.ForecastFairness) -> None:
    view = fc.attributes[result.attribute]
    c1, c2 = st.columns([1, 3])
    group = c1.selectbox("Group", view.names, key="ff_fan_group")
    codes = view.codes == view.names.index(group)
    ids = np.unique(fc.series[codes])
    series_id = c2.selectbox(f"Series ({ids.size:,} in this group)", ids, key="ff_fan_series")
    one = fc.one_series(series_id)
    fig = figs.fan_figure(one.step, one.q, one.levels, one.truth, one.point, bands=result.bands,
                          title=f"{fc.model}: series {series_id} ({result.attribute} = {group})",
                          point_name="point forecast", y_title="value")
    _ui.chart(fig, width="stretch")
    crps_one = scores.crps_quantiles(one.q, one.truth, one.levels).mean()
    st.caption(f"Mean CRPS of this series: {crps_one:.3f} (group mean {fmt(result.group(group).crps)}).")


def compare_tab(result: ev.ForecastFairness) -> None:
    if not result.skills:
        st.info("Pick a second model in the sidebar (a file with a model column, or a second upload) to compare "
                "them group by group.")
        return
    _ui.chart(figs.skill_figure(result), width="stretch")
    rows = [{"group": s.name, "series": s.n_series, f"CRPS {result.model}": s.crps_a,
             f"CRPS {result.compare_model}": s.crps_b, "skill (1 − A/B)": s.skill, "95% CI": fmt_interval(s.ci),
             "share of series where A is better": s.share_series_better}
            for s in [*result.skills, result.skill_overall]]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in rows[0]
                                if c not in ("group", "series", "95% CI")})
    st.caption("The thesis argues that static context lets a forecaster adapt to under-represented subsets "
               "(microclimates). Read it here as: is the skill of the model with context larger on the rare group "
               "than on the common one? Intervals: paired bootstrap over series (both models resampled together).")


_ui.guarded(page)
