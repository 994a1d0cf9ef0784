"""Synthetic predictions with known group shift, base rates and miscalibration (for tests and demos).

Construction, per row ``i`` in group ``g``:

1. **Group.** Group sizes are the shares times ``n``, rounded by largest remainder so they add up to ``n``
   exactly; the group labels are then put in random order.
2. **True logit.** ``z_i ~ N(0, 1)`` and ``true_logit_i = a_g + separation * z_i``. The intercept ``a_g`` is
   chosen so that the group's *population* base rate ``E[sigmoid(a_g + separation * Z)]`` equals the requested
   ``base_rates[g]``. The expectation is computed with 96-point Gauss–Hermite quadrature and the equation is
   solved by bisection (deterministic, accurate to ~1e-12). The sample base rate then differs from the
   requested one by sampling noise only (standard error ``sqrt(p(1-p)/n_g)``).
3. **Label.** ``true_prob_i = sigmoid(true_logit_i)`` and ``y_i ~ Bernoulli(true_prob_i)``. So ``true_prob`` is
   calibrated within every group by construction.
4. **Score.** ``score_i = sigmoid(true_logit_i / T_g + shift_g)``, clipped to ``[1e-6, 1 - 1e-6]``.
   - With ``T_g = 1`` and ``shift_g = 0`` the score equals ``true_prob``: calibrated within the group.
   - ``T_g < 1`` makes the group's scores over-confident (pushed towards 0 and 1); ``T_g > 1`` makes them
     under-confident (pulled towards 0.5, so a group whose base rate is not 0.5 also gets its mean score
     moved a little towards 0.5). The logistic calibration curve of the group, i.e. the fit
     ``logit P(Y=1 | score) = α + β·logit(score)``, has slope ``β = T_g`` and intercept ``α = -T_g·shift_g``.
   - ``shift_g > 0`` over-predicts the risk of group ``g`` (mean score above the observed rate);
     ``shift_g < 0`` under-predicts it.
5. **Features.** ``x1 = 0.8 z + 0.6 e1`` and ``x2 = -0.5 z + 0.866 e2`` with independent ``e1, e2 ~ N(0, 1)``.
   Both have unit variance; their correlations with ``z`` (hence with the true logit within a group) are
   +0.8 and -0.5. They carry no group information beyond what ``z`` has (``z`` has the same law in every group).

``separation`` controls how informative the true logit is: the larger it is, the higher the AUROC of
``true_prob`` (with base rate 0.3: 0.5 at 0, about 0.74 at 1, 0.87 at 2, 0.92 at 3).

All randomness comes from one ``numpy.random.default_rng(seed)``, drawn in a fixed order, so the same
arguments always give the same frame.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SCORE_EPS = 1e-6
_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(96)   # ∫ f(z) φ(z) dz ≈ Σ w f(x) / √(2π)
_GH_WEIGHTS = _GH_WEIGHTS / np.sqrt(2 * np.pi)

# The bundled assets/synthetic.csv.
SAMPLE_KWARGS: dict = {
    "n": 6000,
    "groups": {"A": 0.5, "B": 0.3, "C": 0.2},
    "base_rates": {"A": 0.3, "B": 0.3, "C": 0.45},
    "shift": {"B": 0.4},
    "temperature": {"C": 1.6},
    "separation": 2.0,
    "seed": 0,
}


def sigmoid(x: np.ndarray | float) -> np.ndarray | float:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))


def expected_rate(intercept: float, separation: float) -> float:
    """``E[sigmoid(intercept + separation * Z)]`` for ``Z ~ N(0, 1)`` (Gauss–Hermite quadrature)."""
    return float(np.sum(_GH_WEIGHTS * sigmoid(intercept + separation * _GH_NODES)))


def intercept_for_rate(base_rate: float, separation: float) -> float:
    """The intercept ``a`` with ``E[sigmoid(a + separation * Z)] = base_rate`` (bisection; monotone in ``a``)."""
    if not 0.0 < base_rate < 1.0:
        raise ValueError(f"base rate must be strictly between 0 and 1, got {base_rate}")
    lo, hi = -50.0, 50.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if expected_rate(mid, separation) < base_rate:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return 0.5 * (lo + hi)


def make_predictions(n: int = 5000, groups: dict[str, float] | None = None,
                     base_rates: dict[str, float] | None = None,
                     shift: dict[str, float] | None = None,
                     temperature: dict[str, float] | float = 1.0,
                     separation: float = 2.0,
                     seed: int = 0) -> pd.DataFrame:
    """Synthetic predictions; see the module docstring for the construction.

    groups: group name → share (normalised to sum 1); default ``{"A": .5, "B": .5}``.
    base_rates: P(Y=1 | group); groups not named get 0.3.
    shift: additive shift on the logit of the score per group; groups not named get 0.
    temperature: one value for all groups, or per group (groups not named get 1).
    separation: standard deviation of the true logit within a group (0 → uninformative scores).

    Returns columns ``id, y, score, group, x1, x2, true_prob`` (``id`` = 1..n).
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    groups = {"A": 0.5, "B": 0.5} if groups is None else dict(groups)
    if not groups:
        raise ValueError("groups must name at least one group")
    if any(not np.isfinite(s) or s <= 0 for s in groups.values()):
        raise ValueError(f"group shares must be positive, got {groups}")
    if separation < 0 or not np.isfinite(separation):
        raise ValueError(f"separation must be a finite number >= 0, got {separation}")
    names = list(groups)
    rates = _per_group("base_rates", base_rates, names, 0.3)
    shifts = _per_group("shift", shift, names, 0.0)
    temps = _per_group("temperature", temperature if isinstance(temperature, dict) else None, names,
                       1.0 if isinstance(temperature, dict) else float(temperature))
    if any(not np.isfinite(t) or t <= 0 for t in temps.values()):
        raise ValueError(f"temperature must be positive, got {temps}")

    sizes = _allocate(n, np.array([groups[g] for g in names], dtype=float))
    rng = np.random.default_rng(seed)
    codes = rng.permutation(np.repeat(np.arange(len(names)), sizes))
    z = rng.standard_normal(n)
    e = rng.standard_normal((2, n))
    u = rng.random(n)

    intercepts = np.array([intercept_for_rate(rates[g], separation) for g in names])
    true_logit = intercepts[codes] + separation * z
    true_prob = sigmoid(true_logit)
    y = (u < true_prob).astype(np.int64)
    temp = np.array([temps[g] for g in names])[codes]
    offset = np.array([shifts[g] for g in names])[codes]
    score = np.clip(sigmoid(true_logit / temp + offset), SCORE_EPS, 1.0 - SCORE_EPS)

    return pd.DataFrame({
        "id": np.arange(1, n + 1),
        "y": y,
        "score": score,
        "group": np.array(names, dtype=object)[codes],
        "x1": 0.8 * z + 0.6 * e[0],
        "x2": -0.5 * z + np.sqrt(0.75) * e[1],
        "true_prob": true_prob,
    })


def write_sample(path: str | Path = "assets/synthetic.csv", **kwargs) -> pd.DataFrame:
    """Write the bundled synthetic sample (``SAMPLE_KWARGS``, overridable by ``kwargs``) as CSV.

    Floats are rounded to 6 decimals and written by ``write_csv``, so the file is byte-identical on every run.
    Returns the frame as written.
    """
    frame = make_predictions(**{**SAMPLE_KWARGS, **kwargs})
    floats = ["score", "x1", "x2", "true_prob"]
    frame[floats] = frame[floats].round(6)
    write_csv(frame, path)
    return frame


def write_csv(frame: pd.DataFrame, path: str | Path, decimals: int = 6) -> None:
    """Write ``frame`` as plain, reproducible CSV (used for every file in assets/).

    Floats get fixed-point notation with at most ``decimals`` decimals and no trailing zeros
    (``0.35``, ``0.00008``; never ``8e-05``), lines end in ``\\n``, and there is no index column.
    """
    def fmt(value: float) -> str:
        text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
        return "0" if text in ("", "-0") else text

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, lineterminator="\n", float_format=fmt)


def _per_group(name: str, values: dict[str, float] | None, groups: list[str], default: float) -> dict[str, float]:
    values = dict(values or {})
    unknown = sorted(set(values) - set(groups), key=str)
    if unknown:
        raise ValueError(f"{name} names groups that are not in groups: {unknown} (groups: {groups})")
    return {g: float(values.get(g, default)) for g in groups}


def _allocate(n: int, shares: np.ndarray) -> np.ndarray:
    """Integer sizes proportional to ``shares`` summing to ``n`` (largest remainder; ties → earlier group)."""
    exact = shares / shares.sum() * n
    sizes = np.floor(exact).astype(np.int64)
    order = np.argsort(-(exact - sizes), kind="stable")
    sizes[order[: n - sizes.sum()]] += 1
    return sizes
