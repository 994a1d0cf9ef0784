"""Lorenz & PTN ([3] ch. 5): chaos, a deterministic forecaster, and the probabilistic fan around it.

Controls → cached simulations and the shipped (or a session's) PTN → readings and display lists from
``fairviz.forecast.readings`` and ``fairviz.forecast.display``; training and the genetic search run as jobs."""
from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import streamlit as st

from fairviz.forecast import figures as figs
from fairviz.forecast import genetic, lorenz, ptn, readings
from fairviz.forecast import pipeline as demo
from fairviz.forecast import display as report
from app_pages import _jobs, _ui
from app_pages._render import render
from app_pages._ui import CACHE_TTL

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
        outside = lorenz.outside_training_ranges(sigma, rho, beta)
        if outside:
            st.caption(f"{', '.join(outside)} outside the thesis's training ranges: the pretrained PTN has not "
                       "seen such systems.")
    return (float(sigma), float(rho), float(beta)), (float(x0), float(y0), float(z0))


# ----------------------------------------------------------------------------------------------- page

def page() -> None:
    st.title("Lorenz & PTN: probabilistic forecasts of chaos")
    _ui.own_data("the Lorenz-63 system, simulated here")
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
        st.metric("Divergence time", readings.divergence_time(div),
                  help="First grid time at which the two trajectories are at least the threshold apart.")
        render(([readings.float_resolution(delta, initial[0])] if div.delta == 0 else [])
               + [readings.butterfly(div, delta)])
    _ui.chart(figs.butterfly_figure(div), width="stretch")
    st.caption(readings.RK4_NOTE)


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
    crps_m, crps_b, modes = fans.crps(), fans.crps_baseline(), fans.modes()

    def describe(i: int) -> str:
        return (f"window {i + 1}: σ {fans.params[i, 0]:.2f}, ρ {fans.params[i, 1]:.2f} · CRPS {crps_m[i]:.2f} vs "
                f"baseline {crps_b[i]:.2f} · up to {modes[i]} modes")

    c1, c2, c3 = st.columns([4, 1, 1])
    if c2.button("Most multimodal", help="The window whose density has the most separate modes ([3] Fig. 5.6)"):
        st.session_state["lz_window"] = fans.most_multimodal()
    if c3.button("Most confident", help="The narrowest fan ([3] Fig. 5.5)"):
        st.session_state["lz_window"] = fans.most_confident()
    st.session_state.setdefault("lz_window", fans.most_multimodal())
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
    fan, density = figs.window_figures(fans, i, title)
    c1, c2 = st.columns(2)
    _ui.chart_at(c1, fan, width="stretch")
    _ui.chart_at(c2, density, width="stretch")
    render([readings.fan(fans.score(i))])


def evaluation_tab(bundle: demo.Bundle, label: str) -> None:
    items = report.evaluation(bundle.evaluation, label, bundle.meta, key=(label,) if label == SHIPPED else None)
    table, verdict, note, crps_figure, coverage_figure, pit_figure, bands, honesty, training = items
    render([table, verdict, note], figure_cache=_ui.figure)
    c1, c2 = st.columns(2)
    render([crps_figure], c1, _ui.figure)
    render([coverage_figure], c2, _ui.figure)
    c3, c4 = st.columns(2)
    render([pit_figure], c3, _ui.figure)
    render([bands, honesty], c4, _ui.figure)
    render([training])


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
        render([readings.trained_skill(bundle.evaluation.skill), readings.trained_run(bundle.trained)])
    else:
        shipped = shipped_bundle()
        st.caption("The pretrained model's training, for reference:")
        c1, c2 = st.columns(2)
        _ui.chart_at(c1, figs.loss_figure(shipped.trained.history), width="stretch")
        _ui.chart_at(c2, figs.darts_figure(shipped.trained.arch_weights, shipped.trained.fusion), width="stretch")


def _train(config: demo.PipelineParams) -> None:
    label = config.label()
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


def _stop_button(job: str, help: str = "Interrupts the run within a second or two; nothing half-done is kept.") -> None:
    """Any click reruns the page, which interrupts the run at its next progress report (app_pages/_jobs.py)."""
    st.button("Stop", key=f"_job_stop_{job}", help=help)


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
        _stop_button("ptn_search", "Interrupts the search within a second or two; the candidates trained before "
                                   "it are shown, marked partial.")
        request = (int(population), int(generations), int(epochs), int(seed))
        result = _jobs.run("ptn_search", key=request, label="Genetic search",
                           compute=lambda progress: genetic.ptn_search(data, *request[:3], seed=request[3],
                                                                       progress=progress))
        st.session_state[SEARCH] = result
    elif (partial := _jobs.stopped_result("ptn_search")) is not None:      # the candidates trained before a Stop
        st.session_state[SEARCH] = partial
    result = st.session_state.get(SEARCH)
    if result is None:
        return
    render([*([result.completion.note()] if result.completion else []), report.search_table(result),
            readings.search_best(result)])


_ui.guarded(page)
