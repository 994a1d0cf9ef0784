"""Knee probing & augmentation (Residual Distribution Fairness §7–8, App. D, E, O): what the knees are for.

Shipped results open at once (no model library is imported); "Compute now" trains a text model and probes it or
runs Algorithm 1, with progress and Stop, cached per data, model and settings for the whole server.
"""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from fairviz.data import DataError
from fairviz.core.serialize import clean
from fairviz.core.wording import fmt, fmt_p
from fairviz.explain import data as xdata
from fairviz.explain.models import MODEL_KINDS
from fairviz.probing import AUGMENT_STRATEGIES, PROBES, STRATEGY_NAMES
from fairviz.probing import figures as figs
from fairviz.probing.augment import SEEDS, SIGN_CONVENTION, AugmentParams
from fairviz.probing.probe import ProbeParams
from fairviz.probing.shipped import load_shipped
from fairviz.probing.textmodel import DATA_SETS, DEFAULT_GENERATE, load_dataset, model_spec
from app_pages import _jobs, _ui, _upload

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

def _data_and_model():
    c1, c2, c3 = st.columns(3)
    kind = c1.selectbox("Model", list(MODEL_KINDS), format_func=MODEL_KINDS.get, key="probing_model")
    path = None
    if kind == "local":
        path = c1.text_input("Model directory on this machine", key="probing_model_path",
                             help="A Hugging Face directory (config.json, weights, tokenizer); no hub access here.")
        if not path:
            st.info("Give the model directory to continue.")
            return None, None
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
    from fairviz.probing.run import RunProtocol
    c1, c2, c3, c4 = st.columns(4)
    n = c1.number_input("Examples per region", 10, 500, 150, key="probing_n",
                        help="Matched knee and non-knee samples (App. O: 150 each; the case study used 200).")
    n_strategy = c2.number_input("Examples per strategy", 10, 500, 100, key="probing_n_strategy")
    eps = c3.select_slider("Knee region ε", [0.02, 0.05, 0.1], 0.05, key="probing_eps")
    region = c4.radio("Region measured in", ["percentile", "residual"], key="probing_region")
    settings = ProbeParams(n=int(n), n_strategy=int(n_strategy), region_eps=float(eps), region_mode=region,
                             seed=spec.seed)
    return _job("probing", "Run probing", "Training and probing", "run_probe", dataset, spec, settings,
                RunProtocol(split_seed=spec.seed), "Choose data, model and sample sizes, then press **Run probing**.")


def _compute_augment(dataset, spec) -> dict | None:
    from fairviz.probing.run import RunProtocol
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
    return _job("augment", "Run augmentation", "Algorithm 1: select, fine-tune, measure", "run_augment", dataset,
                spec, settings, RunProtocol(split_seed=spec.seed),
                "Choose k, seeds and strategies, then press **Run augmentation** (the tiny model: about ten seconds "
                "per fine-tuning; 3 strategies × 2 k × 3 seeds + 3 controls = 21).")


def _job(job: str, run_label: str, label: str, runner: str, dataset, spec, settings, protocol, idle: str):
    """Run/Stop buttons and one server-wide cached run per (data, model, settings, protocol); the result is the
    same JSON dict the CLI writes."""
    request = _jobs.controls(job, (spec, settings, protocol), idle=idle, run_label=run_label,
                             data=dataset.fingerprint)
    if request is None:
        return None
    spec, settings, protocol = request

    def compute(progress):
        from fairviz.probing import run
        return clean(getattr(run, runner)(dataset, spec, settings, protocol, progress).to_dict())
    return _jobs.run(job, (dataset.fingerprint, *request), label, compute)


# ----------------------------------------------------------------------------------------------- probing results

def _interval(ci) -> str:
    return "undefined" if not ci or ci[0] is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def show_probe(data: dict) -> None:
    _page_json("probe", data)
    meta = data.get("meta", {})
    pool = data["pool"]
    st.markdown(f"**{meta.get('data', {}).get('title', '')}** · {meta.get('model', {}).get('description', '')} · "
                f"probed pool {pool['n']:,} held-out rows, {pool['knee_share']:.1%} in knee regions "
                f"(ε = {pool['region']['eps']}, {pool['region']['mode']} mode) · ECE {fmt(pool['ece'])} "
                f"({pool['regime']})")
    for w in data["warnings"]:
        st.warning(w)
    cols = st.columns(len(PROBES) + 1)
    for col, (key, name) in zip(cols, PROBES.items()):
        row = data["probes"][key]
        ratio = "undefined" if row["ratio"] is None else f"{row['ratio']:.2f}×"
        col.metric(f"{name}: knee / non-knee", ratio,
                   help=f"knee mean |Δd| {fmt(row['knee_mean'], 4)}, non-knee {fmt(row['nonknee_mean'], 4)}; "
                        f"95% CI {_interval(row['ci'])}; Mann–Whitney p {fmt_p(row['p_value'])}")
    avg = data["ratio_average"]
    cols[-1].metric("Average over probes (Table 11)", "undefined" if avg is None else f"{avg:.2f}×")
    table = pd.DataFrame([{"probe": PROBES[k], "knee mean |Δd|": r["knee_mean"], "non-knee mean |Δd|": r["nonknee_mean"],
                           "ratio": r["ratio"], "95% CI (bootstrap)": _interval(r["ci"]),
                           "p (Mann–Whitney, two-sided)": fmt_p(r["p_value"]), "n knee": r["n_knee"],
                           "n non-knee": r["n_nonknee"], "edited (knee)": r["changed_share_knee"],
                           "edited (non-knee)": r["changed_share_nonknee"]} for k, r in data["probes"].items()])
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in ("knee mean |Δd|", "non-knee mean |Δd|", "ratio")})
    for key, row in data["probes"].items():
        if row["note"]:
            st.info(f"{PROBES[key]}: {row['note']}")
    _ui.chart(figs.region_figure(data), width="stretch")
    st.caption(f"Matched samples (App. O): {data['settings']['n']} knee-region rows drawn uniformly and as many "
               "non-knee rows with the same group × label counts. Δd = |f(x′) − f(x)| (the label is unchanged); rows "
               "the edit does not change count as 0. Ratio interval: percentile bootstrap "
               f"({data['settings']['resamples']} resamples of each sample). Under poor calibration (ECE ≥ 0.15) the "
               "paper reads knees as where behaviour changes rather than where errors concentrate (§8.2).")

    st.subheader("Selection strategies (App. D.2)")
    st.dataframe(pd.DataFrame([{"strategy": STRATEGY_NAMES[k], "n": s["n"],
                                "demographic sensitivity": s["demographic_sensitivity"],
                                "identity dependence": s["identity_dependence"],
                                "clear pattern": s["clear_pattern_share"], "mean |residual|": s["mean_abs_residual"]}
                               for k, s in data["strategies"].items()]),
                 hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f") for c in
                                ("demographic sensitivity", "identity dependence", "clear pattern", "mean |residual|")})
    _ui.chart(figs.strategy_figure(data), width="stretch")
    st.caption(f"{data['settings']['n_strategy']} examples per strategy: knee regions (uniform), highest entropy, "
               "highest confidence (lowest entropy), random. The paper does not define its three measures; here "
               "demographic sensitivity = mean Δd of the swap, identity dependence = mean Δd of the removal, clear "
               f"pattern = share with max Δd ≥ {data['settings']['clear_threshold']}.")

    st.subheader("Error vs. sensitivity (§8.2)")
    c = data["error_vs_sensitivity"]
    _ui.chart(figs.scatter_figure(data), width="stretch")
    st.caption("Spearman ρ = " + ("undefined" if c["spearman"] is None else
                                 f"{c['spearman']:.3f} (p {fmt_p(c['spearman_p'])}), Pearson r = {c['pearson']:.3f} "
                                 f"(p {fmt_p(c['pearson_p'])})") + f" over {c['n']} probed examples. {c['note']}")

    st.subheader("The examples and their counterfactuals")
    st.caption("A swap can change what a sentence means (App. M): read the pairs before trusting a number. Sorted by "
               "Δd of the swap, largest first.")
    examples = pd.DataFrame(data["examples"])
    region = st.radio("Region", ["knee", "non-knee"], horizontal=True, key="probing_examples_region")
    shown = examples[examples["region"] == region].sort_values("delta_swap", ascending=False)
    st.dataframe(shown[["text", "swapped", "score", "score_swapped", "delta_swap", "removed", "score_removed",
                        "delta_removal", "group", "label", "residual"]],
                 hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f") for c in
                                ("score", "score_swapped", "delta_swap", "score_removed", "delta_removal", "residual")})


# ----------------------------------------------------------------------------------------------- augmentation results

def _pm(summary: dict, digits: int = 4) -> str:
    if summary["mean"] is None:
        return "undefined"
    return f"{summary['mean']:+.{digits}f}" + ("" if summary["std"] is None else f" ± {summary['std']:.{digits}f}")


def show_augment(data: dict) -> None:
    _page_json("augment", data)
    before = data["before"]
    meta = data.get("meta", {})
    st.markdown(f"**{meta.get('data', {}).get('title', '')}** · {meta.get('model', {}).get('description', '')} · "
                f"sizes {meta.get('sizes', {})} · D* = {data['dstar_size']} of {data['pool_n']} validation rows "
                f"({data['settings']['region_mode']} mode, ε = {data['settings']['region_eps']})")
    m = st.columns(3)
    m[0].metric("F_pattern before", fmt(before["f_pattern"]))
    m[1].metric("F_v before", fmt(before["f_v"]))
    m[2].metric("F_dist before", fmt(before["f_dist"]))
    st.info("**Sign convention.** " + SIGN_CONVENTION)
    for w in data["warnings"]:
        st.warning(w)
    rows = []
    for r in data["records"] + ([data["control"]] if data["control"] else []):
        t = (r["t_test_vs_random"] or {}).get("f_pattern") or {}
        rows.append({"strategy": AUGMENT_STRATEGIES.get(r["strategy"], "control: fine-tune on T only"), "k": r["k"],
                     "ΔF_pattern": _pm(r["delta"]["f_pattern"]), "gap (paper scale)": _pm(r["delta"]["gap"]),
                     "ΔF_v": _pm(r["delta"]["f_v"]), "ΔF_dist": _pm(r["delta"]["f_dist"]),
                     "efficiency ΔF_pattern/k": "—" if r["efficiency"]["f_pattern"] is None
                     else f"{r['efficiency']['f_pattern']:+.2e}",
                     "Welch p vs random (F_pattern)": fmt_p(t.get("p_value")) if r["strategy"] not in ("random", "none")
                     else "—"})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    metric = st.radio("Metric", ["f_pattern", "f_v", "f_dist"], horizontal=True, key="augment_metric",
                      format_func=lambda m: m.replace("f_", "F_"))
    _ui.chart(figs.augmentation_figure(data, metric), width="stretch")
    calibration = data["calibration"]
    _ui.verdict_box("info", f"**Calibration-conditioned reading (App. E).** {calibration['reading']}")
    st.caption(f"Algorithm 1: select k validation examples (random; highest entropy; uniform from D*), add a "
               f"demographic-swap copy of each with its label to the training set, fine-tune the model for "
               f"{meta.get('protocol', {}).get('fine_tune_epochs', 1)} epoch, and measure the RDF metrics on the "
               f"held-out test set; seeds {', '.join(map(str, data['settings']['seeds']))}; std with ddof = 1; "
               "two-sided Welch t-test against random. The control fine-tunes on the training set alone with the same "
               "seed, so the effect of the extra epoch is visible apart from the augmentation. The paper reports "
               "p > 0.1 for every RDF vs random comparison.")


def _page_json(kind: str, data: dict) -> None:
    st.session_state.setdefault(_ui.PAGE_JSON, {})[kind] = data
    st.download_button("This tab's numbers (JSON)", json.dumps(data, indent=1).encode(), f"{kind}.json",
                       "application/json", key=f"probing_json_{kind}",
                       help=f"The same JSON as `fairviz {kind} --json` for these settings.")


_ui.guarded(page)
