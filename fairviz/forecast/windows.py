"""PTN inputs cut from Lorenz trajectories ([3] §5.3.2): one window per forecast origin t.

- static: (σ, ρ, β) scaled to [0, 1] by fixed bounds (the thesis's sampling ranges unless told otherwise);
- history: (x, y, z) at t−15 … t, normalised by the NVAR's per-channel bounds;
- forecasts: the 10 most recent NVAR forecasts, issued at t−9 … t, each over its own next 16 steps: (10, 16, 3);
- target: x at t+1 … t+16, in original units (the loss works on the normalised scale).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairviz.forecast import nvar as nv
from fairviz.forecast.lorenz import PARAM_RANGES, LorenzSet

HISTORY = 16
N_FORECASTS = 10
HORIZON = nv.HORIZON
STRIDE = 12


@dataclass(frozen=True)
class Windows:
    static: np.ndarray          # (N, 3) in [0, 1] for the thesis's ranges
    history: np.ndarray         # (N, HISTORY, 3) normalised
    forecasts: np.ndarray       # (N, N_FORECASTS, HORIZON, 3) normalised
    target: np.ndarray          # (N, HORIZON) x in original units
    latest_forecast: np.ndarray  # (N, HORIZON) the NVAR's x forecast issued at t, original units
    trajectory: np.ndarray      # (N,) index of the trajectory in its LorenzSet
    origin: np.ndarray          # (N,) time index t of the last observed state

    @property
    def n(self) -> int:
        return int(self.target.shape[0])

    def take(self, index) -> "Windows":
        index = np.asarray(index)
        return Windows(*(getattr(self, f)[index] for f in self.__dataclass_fields__))


def first_origin(delays: int = nv.DELAYS) -> int:
    return max(HISTORY - 1, delays - 1 + N_FORECASTS - 1)


def scale_static(params: np.ndarray, bounds: np.ndarray = PARAM_RANGES) -> np.ndarray:
    bounds = np.asarray(bounds, dtype=float)
    return (np.asarray(params, dtype=float) - bounds[:, 0]) / (bounds[:, 1] - bounds[:, 0])


def from_trajectory(model: nv.NVAR, states: np.ndarray, params, origins: np.ndarray,
                    static_bounds: np.ndarray = PARAM_RANGES, trajectory_index: int = 0) -> Windows:
    """Windows of one (T, 3) trajectory at the given origins (each needs 15 past and 16 future steps)."""
    origins = np.asarray(origins, dtype=int)
    lo, hi = first_origin(model.delays), states.shape[0] - 1 - HORIZON
    if origins.size and (origins.min() < lo or origins.max() > hi):
        raise ValueError(f"forecast origins must lie in [{lo}, {hi}] for a {states.shape[0]}-step trajectory")
    issued = nv.forecast_all(model, states)                              # (T, H, 3), original units
    u = model.normalise(states)
    fu = model.normalise(issued)
    back = np.arange(-HISTORY + 1, 1)
    stack = np.arange(-N_FORECASTS + 1, 1)
    ahead = np.arange(1, HORIZON + 1)
    n = origins.size
    static = np.repeat(scale_static(np.atleast_2d(params), static_bounds), n, axis=0)
    return Windows(
        static=static,
        history=u[origins[:, None] + back[None, :]],
        forecasts=fu[origins[:, None] + stack[None, :]],
        target=states[origins[:, None] + ahead[None, :], 0],
        latest_forecast=issued[origins, :, 0],
        trajectory=np.full(n, trajectory_index),
        origin=origins,
    )


def from_set(model: nv.NVAR, data: LorenzSet, stride: int = STRIDE,
             static_bounds: np.ndarray = PARAM_RANGES, offset: int = 0) -> Windows:
    """Every ``stride``-th origin of every trajectory in ``data`` (``offset`` shifts the first origin)."""
    origins = np.arange(first_origin(model.delays) + offset, data.states.shape[1] - HORIZON, stride)
    params = data.trajectory_params
    parts = [from_trajectory(model, data.states[i], params[i], origins, static_bounds, i)
             for i in range(data.states.shape[0])]
    return concat(parts)


def concat(parts: list[Windows]) -> Windows:
    return Windows(*(np.concatenate([getattr(p, f) for p in parts]) for f in Windows.__dataclass_fields__))


def baseline_sd(model: nv.NVAR, windows: Windows) -> np.ndarray:
    """[3] ch. 5: the Gaussian baseline's sd per lead = the NVAR's x MAE per lead on these (validation) windows."""
    return np.abs(windows.latest_forecast - windows.target).mean(axis=0)
