"""The Lorenz-63 system ([3] §5.3.2): vectorised RK4 on the thesis's grid and its sampling ranges.

dx/dt = σ(y − x), dy/dt = x(ρ − z) − y, dz/dt = xy − βz. The thesis evaluates every trajectory at 1,000 evenly
spaced times on [0, 100] (Δt = 100/999); RK4 integrates between grid points with ``substeps`` internal steps.
With the default h = Δt/10 a trajectory stays within about 1e-4 … 5e-3 of scipy's DOP853 (rtol 1e-12) up to t = 1,
depending on the start; 100 substeps bring that to 1e-8 … 1e-6 (tested), and the method is fourth-order
convergent. Chaos amplifies any error (about e^0.9t), so beyond t ≈ 25 every integrator gives "a" trajectory on
the attractor rather than "the" one; the forecasting task does not depend on which (scipy's default RK45 with
rtol 1e-3, which the thesis's "solution of the initial value problem evaluated at 1000 times" suggests, is
coarser still).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

T_END = 100.0
N_POINTS = 1000
TIME_GRID = np.linspace(0.0, T_END, N_POINTS)
SUBSTEPS = 10

# Sampling ranges of the thesis (Eq. 5.4 and the bullet list after it).
SIGMA_RANGE = (8.0, 12.0)
RHO_RANGE = (27.9, 28.1)
BETA_RANGE = (7.9 / 3, 8.1 / 3)
X0_RANGE = (-20.0, 20.0)
Y0_RANGE = (-20.0, 20.0)
Z0_RANGE = (0.0, 40.0)
CLASSIC = (10.0, 28.0, 8.0 / 3)
PARAM_RANGES = np.array([SIGMA_RANGE, RHO_RANGE, BETA_RANGE])
INITIAL_RANGES = np.array([X0_RANGE, Y0_RANGE, Z0_RANGE])


@dataclass(frozen=True)
class LorenzSet:
    """Trajectories of ``n_systems`` parameter draws × ``n_initial`` initial conditions each."""
    params: np.ndarray          # (S, 3): σ, ρ, β of each system
    initial: np.ndarray         # (S·I, 3)
    system: np.ndarray          # (S·I,): index of each trajectory's system
    states: np.ndarray          # (S·I, T, 3)
    time: np.ndarray            # (T,)

    @property
    def trajectory_params(self) -> np.ndarray:
        return self.params[self.system]


def derivative(state: np.ndarray, sigma, rho, beta) -> np.ndarray:
    """d(x, y, z)/dt for states of shape (..., 3); parameters broadcast over the leading axes."""
    x, y, z = state[..., 0], state[..., 1], state[..., 2]
    return np.stack([sigma * (y - x), x * (rho - z) - y, x * y - beta * z], axis=-1)


def simulate(initial: np.ndarray, sigma=CLASSIC[0], rho=CLASSIC[1], beta=CLASSIC[2],
             time: np.ndarray = TIME_GRID, substeps: int = SUBSTEPS) -> np.ndarray:
    """Classic RK4 for many trajectories at once: (N, 3) initial states → (N, len(time), 3).

    ``time`` must be evenly spaced; parameters are scalars or arrays of shape (N,).
    """
    state = np.array(initial, dtype=float, copy=True)
    single = state.ndim == 1
    state = np.atleast_2d(state)
    sigma, rho, beta = (np.asarray(p, dtype=float) for p in (sigma, rho, beta))
    if time.size < 2:
        raise ValueError("time needs at least two points")
    steps = np.diff(time)
    if not np.allclose(steps, steps[0], rtol=1e-9, atol=1e-12):
        raise ValueError("time must be evenly spaced")
    h = steps[0] / substeps
    out = np.empty((state.shape[0], time.size, 3))
    out[:, 0] = state
    for k in range(1, time.size):
        for _ in range(substeps):
            k1 = derivative(state, sigma, rho, beta)
            k2 = derivative(state + 0.5 * h * k1, sigma, rho, beta)
            k3 = derivative(state + 0.5 * h * k2, sigma, rho, beta)
            k4 = derivative(state + h * k3, sigma, rho, beta)
            state = state + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
        out[:, k] = state
    return out[0] if single else out


def sample_params(n: int, rng: np.random.Generator, ranges: np.ndarray = PARAM_RANGES) -> np.ndarray:
    """(n, 3) draws of (σ, ρ, β), each uniform on its range (the thesis's ranges by default)."""
    return rng.uniform(ranges[:, 0], ranges[:, 1], size=(n, 3))


def sample_initial(n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, 3) initial conditions: x₀, y₀ ~ U(−20, 20), z₀ ~ U(0, 40) (Eq. 5.4)."""
    return rng.uniform(INITIAL_RANGES[:, 0], INITIAL_RANGES[:, 1], size=(n, 3))


def generate(n_systems: int, n_initial: int, seed: int = 0, time: np.ndarray = TIME_GRID,
             substeps: int = SUBSTEPS, param_ranges: np.ndarray = PARAM_RANGES) -> LorenzSet:
    """The thesis's data partition: ``n_systems`` parameter draws × ``n_initial`` random initial conditions."""
    rng = np.random.default_rng(seed)
    params = sample_params(n_systems, rng, np.asarray(param_ranges, dtype=float))
    initial = sample_initial(n_systems * n_initial, rng)
    system = np.repeat(np.arange(n_systems), n_initial)
    p = params[system]
    states = simulate(initial, p[:, 0], p[:, 1], p[:, 2], time, substeps)
    return LorenzSet(params, initial, system, states, time)


@dataclass(frozen=True)
class Divergence:
    """The butterfly effect: two trajectories whose starts differ by ``delta`` in x."""
    time: np.ndarray
    first: np.ndarray           # (T, 3)
    second: np.ndarray          # (T, 3)
    distance: np.ndarray        # (T,) Euclidean distance between the two states
    delta: float                # the perturbation actually applied (float64 rounds tiny ones at large x₀)
    threshold: float
    divergence_time: float      # first grid time with distance ≥ threshold; NaN if never within the horizon

    def growth_rate(self) -> float:
        """Slope of log distance over the stretch where it grows from 1e3·δ to 1e-2 (the Lyapunov-like regime);
        NaN when fewer than five grid points lie there."""
        grow = (self.distance > self.delta * 1e3) & (self.distance < 1e-2)
        if grow.sum() < 5:
            return float("nan")
        return float(np.polyfit(self.time[grow], np.log(self.distance[grow]), 1)[0])


def butterfly(initial=(10.0, 10.0, 10.0), delta: float = 1e-12, sigma=CLASSIC[0], rho=CLASSIC[1],
              beta=CLASSIC[2], threshold: float = 1.0, time: np.ndarray = TIME_GRID,
              substeps: int = SUBSTEPS) -> Divergence:
    """The thesis's example: (10, 10, 10) vs (10 + 1e-12, 10, 10). Diverged = 1 unit apart (the attractor
    spans about 40 units, so by then the two forecasts disagree visibly)."""
    start = np.asarray(initial, dtype=float)
    pair = np.stack([start, start + np.array([delta, 0.0, 0.0])])
    states = simulate(pair, sigma, rho, beta, time, substeps)
    distance = np.linalg.norm(states[0] - states[1], axis=-1)
    over = np.flatnonzero(distance >= threshold)
    when = float(time[over[0]]) if over.size else float("nan")
    applied = float(pair[1, 0] - pair[0, 0])
    return Divergence(time, states[0], states[1], distance, applied, float(threshold), when)


def combine(sets: list[LorenzSet]) -> LorenzSet:
    """One set from several (e.g. typical and rare-regime systems); system indices are renumbered."""
    offsets = np.cumsum([0] + [s.params.shape[0] for s in sets[:-1]])
    return LorenzSet(np.concatenate([s.params for s in sets]), np.concatenate([s.initial for s in sets]),
                     np.concatenate([s.system + o for s, o in zip(sets, offsets)]),
                     np.concatenate([s.states for s in sets]), sets[0].time)


def outside_training_ranges(sigma: float, rho: float, beta: float) -> list[str]:
    """The parameters (by symbol) outside the ranges the thesis samples its training systems from."""
    return [name for name, v, (lo, hi) in (("σ", sigma, SIGMA_RANGE), ("ρ", rho, RHO_RANGE), ("β", beta, BETA_RANGE))
            if not lo - 1e-9 <= v <= hi + 1e-9]
