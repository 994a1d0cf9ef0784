"""The deterministic forecaster: a direct multi-step NVAR (next-generation reservoir computer) fitted by ridge.

Features at time t are a constant, the last ``delays`` (x, y, z) states (normalised to [0, 1]) and every unique
quadratic monomial of those linear terms: 1 + 12 + 78 = 91 features for 4 delays (Gauthier et al. 2021; the
thesis's forecaster is "an MLP based on NVAR", after Shahi et al. 2022). One ridge regression maps them to the
next ``horizon`` states at once (direct, not autoregressive: a one-step NVAR iterated at the thesis's Δt ≈ 0.1
diverges). Targets are offsets from the last observed state, which keeps the regression well conditioned.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DELAYS = 4
HORIZON = 16
RIDGE = 1e-6


@dataclass(frozen=True)
class NVAR:
    weights: np.ndarray          # (n_features, horizon·3)
    low: np.ndarray              # (3,) per-channel normalisation: u = (s − low) / (high − low)
    high: np.ndarray
    delays: int = DELAYS
    horizon: int = HORIZON
    ridge: float = RIDGE

    def normalise(self, states: np.ndarray) -> np.ndarray:
        return (states - self.low) / (self.high - self.low)

    def denormalise(self, values: np.ndarray) -> np.ndarray:
        return values * (self.high - self.low) + self.low

    def to_arrays(self) -> dict:
        return {"nvar_weights": self.weights, "nvar_low": self.low, "nvar_high": self.high,
                "nvar_meta": np.array([self.delays, self.horizon, self.ridge])}

    @staticmethod
    def from_arrays(arrays) -> "NVAR":
        delays, horizon, ridge = arrays["nvar_meta"]
        return NVAR(np.asarray(arrays["nvar_weights"]), np.asarray(arrays["nvar_low"]),
                    np.asarray(arrays["nvar_high"]), int(delays), int(horizon), float(ridge))


def n_features(delays: int = DELAYS) -> int:
    linear = 3 * delays
    return 1 + linear + linear * (linear + 1) // 2


def features(lagged: np.ndarray) -> np.ndarray:
    """(N, delays, 3) normalised states, oldest first → (N, n_features): constant, linear, quadratic."""
    n = lagged.shape[0]
    linear = lagged.reshape(n, -1)
    rows, cols = np.triu_indices(linear.shape[1])
    quadratic = linear[:, rows] * linear[:, cols]
    return np.concatenate([np.ones((n, 1)), linear, quadratic], axis=1)


def _lagged(u: np.ndarray, origins: np.ndarray, delays: int) -> np.ndarray:
    """States at origins−delays+1 … origin for one normalised trajectory (T, 3) → (len(origins), delays, 3)."""
    offsets = np.arange(-delays + 1, 1)
    return u[origins[:, None] + offsets[None, :]]


def fit(trajectories: np.ndarray, delays: int = DELAYS, horizon: int = HORIZON, ridge: float = RIDGE,
        stride: int = 1, low: np.ndarray | None = None, high: np.ndarray | None = None) -> NVAR:
    """Ridge fit on every origin (every ``stride``-th) of (N, T, 3) trajectories, by normal equations
    accumulated one trajectory at a time (memory stays O(T · features))."""
    trajectories = np.asarray(trajectories, dtype=float)
    low = trajectories.min(axis=(0, 1)) if low is None else np.asarray(low, float)
    high = trajectories.max(axis=(0, 1)) if high is None else np.asarray(high, float)
    model = NVAR(np.zeros((n_features(delays), horizon * 3)), low, high, delays, horizon, ridge)
    p = n_features(delays)
    gram = np.zeros((p, p))
    cross = np.zeros((p, horizon * 3))
    steps = np.arange(1, horizon + 1)
    for trajectory in trajectories:
        u = model.normalise(trajectory)
        origins = np.arange(delays - 1, u.shape[0] - horizon, stride)
        x = features(_lagged(u, origins, delays))
        target = (u[origins[:, None] + steps[None, :]] - u[origins][:, None, :]).reshape(origins.size, -1)
        gram += x.T @ x
        cross += x.T @ target
    weights = np.linalg.solve(gram + ridge * np.eye(p), cross)
    return NVAR(weights, low, high, delays, horizon, ridge)


def forecast(model: NVAR, trajectory: np.ndarray, origins: np.ndarray) -> np.ndarray:
    """Forecasts issued at ``origins`` of one (T, 3) trajectory → (len(origins), horizon, 3) in original units.
    An origin needs ``delays`` observed states, so origins < delays − 1 are invalid."""
    origins = np.asarray(origins, dtype=int)
    if origins.size and (origins.min() < model.delays - 1 or origins.max() >= trajectory.shape[0]):
        raise ValueError(f"origins must lie in [{model.delays - 1}, {trajectory.shape[0] - 1}]")
    u = model.normalise(np.asarray(trajectory, dtype=float))
    x = features(_lagged(u, origins, model.delays))
    offsets = (x @ model.weights).reshape(origins.size, model.horizon, 3)
    return model.denormalise(u[origins][:, None, :] + offsets)


def forecast_all(model: NVAR, trajectory: np.ndarray) -> np.ndarray:
    """(T, horizon, 3): the forecast issued at every time step; NaN where fewer than ``delays`` states exist."""
    out = np.full((trajectory.shape[0], model.horizon, 3), np.nan)
    origins = np.arange(model.delays - 1, trajectory.shape[0])
    out[origins] = forecast(model, trajectory, origins)
    return out


def lead_mae(model: NVAR, trajectories: np.ndarray, channel: int = 0, stride: int = 1) -> np.ndarray:
    """Mean absolute error of ``channel`` at each lead 1…horizon over every complete origin: (horizon,)."""
    total = np.zeros(model.horizon)
    count = 0
    steps = np.arange(1, model.horizon + 1)
    for trajectory in trajectories:
        origins = np.arange(model.delays - 1, trajectory.shape[0] - model.horizon, stride)
        pred = forecast(model, trajectory, origins)[..., channel]
        truth = trajectory[origins[:, None] + steps[None, :], channel]
        total += np.abs(pred - truth).sum(axis=0)
        count += origins.size
    return total / max(count, 1)
