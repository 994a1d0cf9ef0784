"""Lorenz & PTN (seed 002, chapter 5): chaos, a deterministic forecaster, and the probabilistic fan around it."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

import numpy as np
import pandas as pd
import streamlit as st

from fairviz.forecast import figures as figs
from fairviz.core.wording import fmt
from fairviz.forecast import crps as scores
from fairviz.forecast import pipeline as demo, lorenz
from fairviz.forecast.density import mode_count
from app_pages import _jobs, _ui
from app_pages._ui import CACHE_TTL
from fairviz.forecast import ptn
from fairviz.forecast import genetic

TRAINED = "ptn_trained"          # session state: label → demo.Bundle trained in this session
SEARCH = "ptn_search"
SHIPPED = "Shipped model (pretrained)"


# ----------------------------------------------------------------------------------------------- cached work

@st.cache_resource(show_spinner="Loading the pretrained PTN…", max_entries=8, ttl=CACHE_TTL)
def shipped_bundle() -> demo.Bundle:
    return demo.load_bundle()


@st.cache_data(show_spinner=False, max_entries=32, ttl=CACHE_TTL)
def trajectory(params: tuple, initial: tuple) -> np.ndarray:
    return lorenz.simulate(np.array(initial), *params)


SMOOTH_GRID = np.linspace(0.0, 40.0, 2001)


@st.cache_data(show_spinner=False, max_entries=32, ttl=CACHE_TTL)
def smooth_trajectory(params: tuple, initial: tuple) -> np.ndarray:
    return lorenz.simulate(np.array(initial), *params, time=SMOOTH_GRID, substeps=2)


@st.cache_data(show_spinner=False, max_entries=32, ttl=CACHE_TTL)
def butterfly(params: tuple, initial: tuple, delta: float, threshold: float):
    return lorenz.butterfly(initial, delta, *params, threshold=threshold)


@st.cache_resource(show_spinner="Simulating the training systems…", max_entries=4, ttl=CACHE_TTL)
def training_data(config: demo.ForecastDataParams) -> demo.DemoData:
    return demo.prepare(config)


@st.cache_resource(show_spinner="Simulating the test systems…", max_entries=4, ttl=CACHE_TTL)
def test_set(config: demo.ForecastDataParams):
    return demo.test_set(config)


@st.cache_resource(show_spinner="Loading the network…", max_entries=4, ttl=CACHE_TTL)
def network(label: str, _bundle: demo.Bundle):
    return ptn.load_module(_bundle.trained)


# ----------------------------------------------------------------------------------------------- sidebar

def _sample_params() -> None:
    rng = np.random.default_rng(int(st.session_state.get("lz_seed", 0)))
    sigma, rho, beta = lorenz.sample_params(1, rng)[0]
    x0, y0, z0 = lorenz.sample_initial(1, rng)[0]
    values = dict(lz_sigma=round(float(sigma), 3), lz_rho=round(float(rho), 3), lz_beta=round(float(beta), 4),
                  lz_x0=round(float(x0), 2), lz_y0=round(float(y0), 2), lz_z0=round(float(z0), 2))
    st.session_state.update(values)                    # a button's callback: runs before the sliders are drawn
    st.session_state["lz_seed"] = int(st.session_state.get("lz_seed", 0)) + 1


def sidebar() -> tuple[tuple, tuple]:
    defaults = dict(lz_sigma=10.0, lz_rho=28.0, lz_beta=8 / 3, lz_x0=10.0, lz_y0=10.0, lz_z0=10.0)
    with st.sidebar:
        st.markdown("**Lorenz-63 system**")
        st.button("Sample from the thesis's ranges", on_click=_sample_params,
                  help="σ ~ U(8, 12), ρ ~ U(27.9, 28.1), β ~ U(7.9/3, 8.1/3); x₀, y₀ ~ U(−20, 20), z₀ ~ U(0, 40).")
        for key, value in defaults.items():
            st.session_state.setdefault(key, value)
        kept = dict(persist_state="session")          # the values come back when the visitor returns to this page
        sigma = st.slider("σ (Prandtl number)", 4.0, 16.0, step=0.01, key="lz_sigma", **kept)
        rho = st.slider("ρ (Rayleigh number)", 20.0, 40.0, step=0.01, key="lz_rho", **kept)
        beta = st.slider("β (geometry)", 2.0, 3.5, step=0.0001, key="lz_beta", format="%.4f", **kept)
        c1, c2, c3 = st.columns(3)
        x0 = c1.number_input("x₀", -20.0, 20.0, key="lz_x0", **kept)
        y0 = c2.number_input("y₀", -20.0, 20.0, key="lz_y0", **kept)
        z0 = c3.number_input("z₀", 0.0, 40.0, key="lz_z0", **kept)
        outside = [name for name, v, (lo, hi) in (("σ", sigma, lorenz.SIGMA_RANGE), ("ρ", rho, lorenz.RHO_RANGE),
                                                  ("β", beta, lorenz.BETA_RANGE)) if not lo - 1e-9 <= v <= hi + 1e-9]
        if outside:
            st.caption(f"{', '.join(outside)} outside the thesis's training ranges: the pretrained PTN has not "
                       "seen such systems.")
    return (float(sigma), float(rho), float(beta)), (float(x0), float(y0), float(z0))


# ----------------------------------------------------------------------------------------------- page

def page() -> None:
    st.title("Lorenz & PTN: probabilistic forecasts of chaos")
    st.caption("Briscoe, *The Art of Fairness* (PhD thesis, 2024), chapter 5. The Lorenz-63 system is deterministic yet unpredictable beyond a short horizon. "
               "An NVAR model gives one forecast; the Probabilistic Parallel Time Network (PTN) turns it, the recent "
               "history and the system's parameters into 111 quantiles per step: a fan that says how sure it is.")
    params, initial = sidebar()
    if "lz_flash" in st.session_state:
        st.success(st.session_state.pop("lz_flash"))
    tabs = st.tabs(["Attractor & butterfly effect", "PTN quantile fans", "Evaluation (Table 5.2)", "Train a PTN",
                    "Genetic search"])
    with tabs[0]:
        attractor_tab(params, initial)
    bundle, label = model_choice()
    with tabs[1]:
        fans_tab(bundle, label, params, initial)
    with tabs[2]:
        evaluation_tab(bundle, label)
    with tabs[3]:
        train_tab()
    with tabs[4]:
        search_tab()


def attractor_tab(params, initial) -> None:
    smooth = smooth_trajectory(params, initial)
    c1, c2 = st.columns([3, 2])
    _ui.chart_at(c1, figs.attractor_figure(smooth, SMOOTH_GRID,
                                          title=f"σ = {params[0]:.3f}, ρ = {params[1]:.3f}, β = {params[2]:.4f}"),
                    width="stretch")
    c1.caption("Drawn over t ∈ [0, 40] every 0.02 time units for a smooth curve; the forecasting data use the "
               "thesis's grid (1,000 points on [0, 100]).")
    with c2:
        delta = float(st.select_slider("Perturbation of x₀", ["1e-15", "1e-12", "1e-9", "1e-6", "1e-3"],
                                       value="1e-12", key="lz_delta"))
        threshold = st.select_slider("Diverged when the states are this far apart", [0.1, 1.0, 5.0], value=1.0)
        div = butterfly(params, initial, delta, threshold)
        st.metric("Divergence time", "not within t ≤ 100" if not np.isfinite(div.divergence_time)
                  else f"t = {div.divergence_time:.1f}",
                  help="First grid time at which the two trajectories are at least the threshold apart.")
        growth = _growth_rate(div)
        if div.delta == 0:
            st.warning(f"A change of {delta:.0e} is below float64 resolution at x₀ = {initial[0]:g}: both starts are "
                       "the same number, so they never separate. Pick a larger perturbation.")
        st.markdown(
            f"**Reading.** Two starts {delta:.0e} apart in x stay together for a while, then the gap grows about "
            f"as e^({fmt(growth, 2)}·t) until the trajectories are unrelated"
            f"{'' if not np.isfinite(div.divergence_time) else f' (by t ≈ {div.divergence_time:.0f})'}. "
            "This is why one deterministic forecast of a chaotic system is trustworthy only at short leads, and why "
            "the PTN forecasts a distribution.")
    _ui.chart(figs.butterfly_figure(div), width="stretch")
    st.caption("Vectorised RK4 on the thesis's grid (1,000 points on [0, 100], 10 internal steps between points); "
               "it agrees with scipy's DOP853 to 1e-6 over short horizons at 100 internal steps (tested).")


def _growth_rate(div) -> float:
    """Slope of log distance over the stretch where it grows from 1e3·δ to 1e-2 (the Lyapunov-like regime)."""
    d = div.distance
    grow = (d > div.delta * 1e3) & (d < 1e-2)
    if grow.sum() < 5:
        return float("nan")
    return float(np.polyfit(div.time[grow], np.log(d[grow]), 1)[0])


def model_choice() -> tuple[demo.Bundle, str]:
    trained = st.session_state.get(TRAINED, {})
    options = [SHIPPED] + list(trained)
    pending = st.session_state.pop("lz_model_next", None)
    if pending in options:
        st.session_state["lz_model"] = pending
    if st.session_state.get("lz_model") not in options:
        st.session_state["lz_model"] = SHIPPED
    with st.sidebar:
        st.markdown("**PTN model**")
        label = st.radio("Fans and evaluation from", options, key="lz_model", persist_state="session",
                         help="Train your own on the 'Train a PTN' tab; it is kept for this browser session.")
    return (shipped_bundle() if label == SHIPPED else trained[label]), label


def fans_tab(bundle: demo.Bundle, label: str, params, initial) -> None:
    fans = bundle.fans
    crps_m, crps_b = fans.crps(), fans.crps_baseline()
    modes = np.array([mode_count(fans.quantiles[i]).max() for i in range(fans.n)])
    spread = (fans.quantiles[..., -6] - fans.quantiles[..., 5]).mean(-1)

    def describe(i: int) -> str:
        return (f"window {i + 1}: σ {fans.params[i, 0]:.2f}, ρ {fans.params[i, 1]:.2f} · CRPS {crps_m[i]:.2f} vs "
                f"baseline {crps_b[i]:.2f} · up to {modes[i]} modes")

    c1, c2, c3 = st.columns([4, 1, 1])
    if c2.button("Most multimodal", help="The window whose density has the most separate modes (thesis Fig 5.6)"):
        st.session_state["lz_window"] = int(np.argmax(modes + 1e-3 * spread))
    if c3.button("Most confident", help="The narrowest fan (thesis Fig 5.5)"):
        st.session_state["lz_window"] = int(np.argmin(spread))
    st.session_state.setdefault("lz_window", int(np.argmax(modes + 1e-3 * spread)))
    st.session_state["lz_window"] = min(st.session_state["lz_window"], fans.n - 1)
    i = c1.selectbox("Test window (systems and starts never seen in training)", range(fans.n), key="lz_window",
                     format_func=describe)
    _draw_fan(fans, i, f"{label}: test window {i + 1}")
    st.divider()
    st.markdown("**Any other forecast** (runs the network, so the first one loads torch: a few seconds)")
    source = st.radio("Forecast", ["None", "Any test window", "The sidebar's trajectory"], horizontal=True,
                      key="lz_other", label_visibility="collapsed")
    if source == "None":
        return
    c1, c2, c3 = st.columns(3)
    origin = c3.slider("Forecast from time step", 15, lorenz.N_POINTS - 17, 300, key="lz_origin",
                       help=f"The last observed step; time t = step × {lorenz.TIME_GRID[1]:.4f}")
    if source == "Any test window":
        cfg = bundle.data_config
        test = test_set(cfg)
        system = c1.number_input(f"Test system (1–{cfg.test_systems})", 1, cfg.test_systems, 1, key="lz_system")
        start = c2.number_input(f"Initial condition (1–{cfg.test_initial})", 1, cfg.test_initial, 1, key="lz_start")
        k = (int(system) - 1) * cfg.test_initial + int(start) - 1
        p = tuple(test.params[int(system) - 1])
        fan = demo.forecast_trajectory(bundle, test.states[k], p, origin, module=network(label, bundle))
        _draw_fan(fan, 0, f"Test system {system} (σ {p[0]:.2f}, ρ {p[1]:.2f}, β {p[2]:.3f}), start {start}, "
                          f"from t = {lorenz.TIME_GRID[origin]:.2f}")
    else:
        states = trajectory(params, initial)
        mine = demo.forecast_trajectory(bundle, states, params, origin, module=network(label, bundle))
        _draw_fan(mine, 0, f"Your trajectory from t = {lorenz.TIME_GRID[origin]:.2f}")


def _draw_fan(fans: demo.Fans, i: int, title: str) -> None:
    tau = scores.levels(fans.quantiles.shape[-1])
    steps = np.arange(1, fans.truth.shape[1] + 1)
    hist_steps = np.arange(-fans.history_x.shape[1] + 1, 1)
    q = fans.quantiles[i]
    c1, c2 = st.columns(2)
    _ui.chart_at(c1, figs.fan_figure(steps, q, tau, fans.truth[i], fans.nvar[i], (hist_steps, fans.history_x[i]),
                                    title=title, point_name="NVAR forecast", x_title=f"step (Δt = {fans.dt:.3f})"),
                    width="stretch")
    _ui.chart_at(c2, figs.density_figure(steps, q, fans.truth[i], fans.nvar[i]), width="stretch")
    crps_m = float(scores.crps_forecast(q[None], fans.truth[i][None])[0])
    crps_b = float(scores.crps_forecast(fans.baseline[i][None], fans.truth[i][None])[0])
    inside = {b: float(np.mean(scores.inside(q, fans.truth[i], tau, b))) for b in scores.BANDS}
    modes = mode_count(q)
    multi = steps[modes >= 2]
    st.markdown(
        f"**Reading.** CRPS of this forecast: {crps_m:.3f} (PTN) vs {crps_b:.3f} (Gaussian around the NVAR forecast, "
        f"sd = its mean absolute error per lead); {'the PTN is better' if crps_m < crps_b else 'the baseline is better'} "
        f"here. The truth is inside the 50% band at {100 * inside[0.5]:.0f}% of the 16 steps and inside the 90% band "
        f"at {100 * inside[0.9]:.0f}%. "
        + (f"The density has {modes.max()} separate modes at step(s) {', '.join(map(str, multi))}: the PTN sees "
           "several possible routes; the median can sit between them, where the system may never go (thesis Fig 5.6)."
           if multi.size else "The density has one mode at every step."))


def evaluation_tab(bundle: demo.Bundle, label: str) -> None:
    ev = bundle.evaluation
    s = ev.skill
    table = pd.DataFrame({
        "": ["First quartile", "Second quartile", "Third quartile", "Percent of forecasts outperformed by PTN"],
        f"{label} vs Gaussian-NVAR (this data)": [*[fmt(v, 2) for v in s.quartiles], f"{100 * s.outperformed:.1f}%"],
        **{f"Thesis: {c}": [*(f"{scores.TABLE_5_2[r][k]:.2f}" for r in ("First quartile", "Second quartile",
                                                                          "Third quartile")),
                            f"{scores.TABLE_5_2['Percent of forecasts outperformed by PTN'][k]:.1f}%"]
           for k, c in enumerate(scores.TABLE_5_2["columns"])}})
    st.dataframe(table, hide_index=True, width="stretch")
    kind = "good" if s.quartiles[1] > 0 else "bad"
    _ui.verdict_box(kind, f"**Skill at the median CRPS: {fmt(s.quartiles[1], 2)}** (1 − CRPS_PTN/CRPS_baseline at "
                          f"the second quartile of {s.n:,} test forecasts); the PTN's forecast beats the baseline's in "
                          f"{100 * s.outperformed:.1f}% of them. Thesis (chaos, vs deterministic): 0.57 and 94.3%.")
    st.caption("Skill score SS = 1 − CRPS_model/CRPS_baseline at the quartiles of each model's per-forecast CRPS "
               "(Eq. 5.10; the thesis reports quartiles because per-forecast skill is heavily left-skewed). The "
               "baseline is the thesis's: a normal distribution around the NVAR forecast with sd = the NVAR's mean "
               "absolute error at that lead (on the validation split), scored with the same 111 levels. Our PTN is "
               "CPU-sized, trained for minutes on a fraction of the thesis's data, so compare the form, not the numbers.")
    c1, c2 = st.columns(2)
    _ui.chart_at(c1, figs.crps_distribution_figure(ev.crps_model, ev.crps_baseline), width="stretch")
    _ui.chart_at(c2, figs.coverage_figure(list(scores.BANDS), {"PTN": ev.coverage, "Gaussian-NVAR": ev.coverage_baseline}),
                    width="stretch")
    c3, c4 = st.columns(2)
    _ui.chart_at(c3, figs.pit_figure({"PTN": ev.pit_hist, "Gaussian-NVAR": ev.pit_hist_baseline}), width="stretch")
    with c4:
        st.markdown("**Band coverage and width (x units)**")
        st.dataframe(pd.DataFrame({"band": [f"{100 * b:g}%" for b in scores.BANDS],
                                   "PTN coverage": [ev.coverage[b] for b in scores.BANDS],
                                   "baseline coverage": [ev.coverage_baseline[b] for b in scores.BANDS],
                                   "PTN mean width": [ev.width[b] for b in scores.BANDS]}),
                     hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.3f") for c in
                                    ("PTN coverage", "baseline coverage", "PTN mean width")})
        over = ev.coverage[0.5] - 0.5
        st.markdown(f"**Reading.** A band is honest when its coverage matches its name. The PTN's 50% band holds "
                    f"the truth {100 * ev.coverage[0.5]:.0f}% of the time ({'too wide' if over > 0.03 else 'too narrow' if over < -0.03 else 'about right'}); "
                    f"the Gaussian baseline's 90% band only {100 * ev.coverage_baseline[0.9]:.0f}%: around a wrong "
                    "deterministic forecast a single bell curve is both too narrow and centred in the wrong place.")
    meta = bundle.meta
    st.caption(f"Test windows: {s.n:,}. Training: {meta.get('train_seconds', float('nan')):.0f} s on "
               f"{meta.get('device', 'cpu')} ({meta.get('seconds_per_epoch', float('nan')):.2f} s per epoch). Raw "
               f"(unsorted) ordering penalty {fmt(meta.get('raw_order_penalty'), 4)}: outputs are sorted before use.")


# ----------------------------------------------------------------------------------------------- training

def train_tab() -> None:
    st.markdown("Train a PTN here (first-order DARTS; loss = CRPS + 0.0075 · ordering penalty). It uses the GPU when "
                "one is present, else the CPU; about half a minute at the defaults. The model is kept for this "
                "session and can be picked in the sidebar.")
    with st.form("ptn_train"):
        c1, c2, c3, c4 = st.columns(4)
        d = c1.selectbox("Hidden size d", [24, 32, 48, 72], index=1)
        epochs = c2.slider("Epochs", 2, 60, 20)
        weight_steps = c3.slider("Weight steps per epoch", 5, 40, 20, help="Thesis: 10")
        arch_steps = c4.slider("Architecture steps per epoch", 1, 10, 5, help="Thesis: 5")
        c5, c6, c7, c8 = st.columns(4)
        lr = c5.select_slider("Learning rate", [1e-3, 2e-3, 5e-3, 1e-2], value=5e-3)
        size = c6.radio("Training data", ["small", "medium"], horizontal=True,
                        help="small: 8 systems × 20 starts; medium: 10 × 25 (sized to train on a CPU in minutes, far smaller than the thesis's chapter 5 runs)")
        use_static = c7.toggle("Use static context (σ, ρ, β)", value=True)
        seed = c8.number_input("Seed", 0, 10_000, 0)
        submitted = st.form_submit_button("Train", type="primary")
    if submitted:
        data_config = demo.ForecastDataParams() if size == "small" else demo.ForecastDataParams(
            fit_systems=20, fit_initial=25, train_systems=10, train_initial=25, arch_systems=4, arch_initial=25,
            test_systems=6, test_initial=25)
        config = demo.PipelineParams(data_config, {"d": d, "lr": lr, "use_static": use_static},
                                     {"epochs": epochs, "weight_steps": weight_steps, "arch_steps": arch_steps,
                                      "seed": int(seed)})
        _train(config)
    trained = st.session_state.get(TRAINED, {})
    if trained:
        label = list(trained)[-1]
        bundle = trained[label]
        st.markdown(f"**Last trained: {label}**")
        c1, c2 = st.columns(2)
        _ui.chart_at(c1, figs.loss_figure(bundle.trained.history), width="stretch")
        _ui.chart_at(c2, figs.darts_figure(bundle.trained.arch_weights, bundle.trained.fusion), width="stretch")
        s = bundle.evaluation.skill
        st.markdown(f"Skill vs the Gaussian-NVAR baseline at the CRPS quartiles: {', '.join(fmt(v, 2) for v in s.quartiles)}; "
                    f"{100 * s.outperformed:.1f}% of {s.n:,} test forecasts outperformed. "
                    f"{bundle.trained.seconds:.0f} s on {bundle.trained.device}. The DARTS weights show which operation "
                    "each cell leans on (the thesis prunes the ones near zero after the search).")
    else:
        shipped = shipped_bundle()
        st.caption("The pretrained model's training, for reference:")
        c1, c2 = st.columns(2)
        _ui.chart_at(c1, figs.loss_figure(shipped.trained.history), width="stretch")
        _ui.chart_at(c2, figs.darts_figure(shipped.trained.arch_weights, shipped.trained.fusion), width="stretch")


def _train(config: demo.PipelineParams) -> None:
    key = hashlib.blake2b(json.dumps(asdict(config), sort_keys=True, default=str).encode(), digest_size=4).hexdigest()
    label = (f"d={config.ptn['d']}, {config.train['epochs']} epochs, lr {config.ptn['lr']:g}"
             f"{'' if config.ptn['use_static'] else ', no static'}, seed {config.train['seed']} [{key}]")
    trained = st.session_state.setdefault(TRAINED, {})
    if label in trained:
        st.info("This configuration is already trained in this session (shown below).")
        return
    data = training_data(config.data)
    _stop_button("ptn_train")
    chart = st.empty()

    def on_epoch(history):
        _ui.chart_at(chart, figs.loss_figure(history), width="stretch")

    # one training per configuration for the whole server, in a heavy-run slot (app_pages/_jobs.py)
    bundle = _jobs.run("ptn_train", key=json.dumps(asdict(config), sort_keys=True, default=str), label="Training the PTN",
                       compute=lambda progress: demo.run_pipeline(config, progress=progress, on_epoch=on_epoch,
                                                                  data=data))
    chart.empty()
    trained[label] = bundle
    st.session_state["lz_model_next"] = label
    st.session_state["lz_flash"] = (f"Trained in {bundle.trained.seconds:.0f} s on {bundle.trained.device}. The "
                                    "fans and evaluation tabs now show this model (switch in the sidebar).")
    st.rerun()


def _stop_button(job: str) -> None:
    """Any click reruns the page, which interrupts the run at its next progress report (app_pages/_jobs.py)."""
    st.button("Stop", key=f"_job_stop_{job}", help="Interrupts the run within a second or two; nothing half-done "
                                                   "is kept.")


def search_tab() -> None:
    st.markdown("Algorithm 2 of the thesis at demo size: a genetic search over Table 5.1's hyperparameters "
                "(the thesis's ranges, learning rates 1e-5 to 1e-3 included; only the hidden size d is cut to 24–72 "
                "for the CPU), each candidate trained with DARTS and scored by CRPS on two held-out splits (f, f_v); final "
                "ranking by f² + f_v². Each candidate costs a few seconds per epoch on the CPU.")
    with st.form("ptn_search_form"):
        c1, c2, c3, c4 = st.columns(4)
        population = c1.number_input("Population", 2, 12, 4)
        generations = c2.number_input("Generations", 1, 6, 2)
        epochs = c3.number_input("Epochs per candidate", 1, 30, 4)
        seed = c4.number_input("Seed ", 0, 10_000, 0)
        st.caption(f"Up to {int(population) * int(generations)} candidates × {int(epochs)} epochs.")
        go_search = st.form_submit_button("Run the search", type="primary")
    if go_search:
        data = training_data(demo.ForecastDataParams())
        _stop_button("ptn_search")
        request = (int(population), int(generations), int(epochs), int(seed))
        result = _jobs.run("ptn_search", key=request, label="Genetic search",
                           compute=lambda progress: genetic.ptn_search(data, *request[:3], seed=request[3],
                                                                       progress=progress))
        st.session_state[SEARCH] = result
    result = st.session_state.get(SEARCH)
    if result is None:
        return
    rows = result.table()
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f") for c in
                                ("f (CRPS)", "f_v (CRPS)", "f² + f_v²", "mutation p", "dropout", "first_dropout",
                                 "slope", "noise_std", "arch_lr", "lr", "beta1", "beta2", "arch_beta1", "arch_beta2")})
    best = result.ranking[0]
    st.markdown(f"**Best candidate: agent {best.id}** (generation {best.generation}): f = {best.fitness:.4f}, "
                f"f_v = {best.val_fitness:.4f}. {result.generations_run} generation(s) run"
                f"{', stopped early (no improvement of the best f_v)' if result.stopped_early else ''}. Best f_v after "
                f"each generation: {', '.join(f'{v:.4f}' for v in result.best_by_generation)}.")


_ui.guarded(page)
