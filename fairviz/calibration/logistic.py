"""The lecture's calibration tests (§4.3–4.4): binomial GLMs of y on logit p̂ fitted on aggregated counts (exact),
likelihood-ratio tests, restricted cubic splines for the non-linear test and the smooth curve, and the test of
whether calibration differs by group."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special
from scipy import stats as sps

from fairviz.calibration.reliability import logit, rcs_basis, rcs_knots
from fairviz.calibration.results import (
    CURVE_POINTS,
    MAX_ITER,
    Coefficient,
    GroupDifferenceTest,
    LinearBiasTest,
    LRTest,
    SmoothCurve,
    SplineBiasTest,
)


@dataclass(frozen=True)
class LogisticFit:
    coef: np.ndarray
    cov: np.ndarray
    loglik: float
    converged: bool
    iterations: int

    @property
    def deviance(self) -> float:
        """−2 log L (binary data: the saturated model has log L = 0)."""
        return -2.0 * self.loglik


def binomial_loglik(eta: np.ndarray, n: np.ndarray, s: np.ndarray) -> float:
    """Σ s·η − n·log(1 + e^η): the log-likelihood of the rows behind (n, s) at linear predictor η."""
    return float(np.sum(s * eta) - np.sum(n * np.logaddexp(0.0, eta)))


def fit_logistic(X: np.ndarray, n: np.ndarray, s: np.ndarray, offset: np.ndarray | None = None,
                 max_iter: int = MAX_ITER, tol: float = 1e-10) -> LogisticFit:
    """Binomial GLM (logit link) on aggregated rows: n trials and s successes per row of X, by Newton's method
    with step halving. Equivalent to the row-level fit (same likelihood up to a constant)."""
    X = np.asarray(X, dtype=float)
    n = np.asarray(n, dtype=float)
    s = np.asarray(s, dtype=float)
    off = np.zeros(n.size) if offset is None else np.asarray(offset, dtype=float)
    beta = np.zeros(X.shape[1])
    eta = X @ beta + off
    ll = binomial_loglik(eta, n, s)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        mu = special.expit(eta)
        w = n * mu * (1 - mu)
        grad = X.T @ (s - n * mu)
        hess = X.T @ (X * w[:, None])
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        for _ in range(30):                       # halve until the likelihood does not go down
            new_beta = beta + step
            new_eta = X @ new_beta + off
            new_ll = binomial_loglik(new_eta, n, s)
            if new_ll >= ll - 1e-12 * abs(ll):
                break
            step = step / 2
        change = new_ll - ll
        beta, eta, ll = new_beta, new_eta, new_ll
        if abs(change) <= tol * (abs(ll) + 1.0):
            converged = True
            break
    mu = special.expit(eta)
    hess = X.T @ (X * (n * mu * (1 - mu))[:, None])
    try:
        cov = np.linalg.inv(hess)
    except np.linalg.LinAlgError:
        cov = np.full_like(hess, np.nan)
        converged = False
    if not np.all(np.isfinite(beta)):
        converged = False
    return LogisticFit(beta, cov, ll, converged, it)


def separated(fit: LogisticFit, limit: float = 30.0) -> bool:
    """Coefficients this large mean the outcome is (quasi-)separated by the score. The likelihood then converges
    to its supremum while coefficients drift off: LR statistics stay valid, Wald statistics do not."""
    return not fit.converged or bool(np.max(np.abs(fit.coef), initial=0.0) > limit)


def _coefficient(fit: LogisticFit, j: int) -> Coefficient:
    est = float(fit.coef[j])
    se = float(np.sqrt(fit.cov[j, j])) if fit.cov[j, j] > 0 else float("nan")
    z = est / se if se > 0 else float("nan")
    return Coefficient(est, se, z, float(2 * sps.norm.sf(abs(z))) if np.isfinite(z) else float("nan"))


def lr_test(deviance_null: float, deviance_alt: float, df: int) -> LRTest:
    stat = max(float(deviance_null - deviance_alt), 0.0)
    return LRTest(stat, int(df), float(sps.chi2.sf(stat, df)))


# ----------------------------------------------------------------------------------------------- aggregated data

@dataclass(frozen=True)
class LogitCounts:
    """Rows aggregated on (group, score): one row per distinct pair that occurs, with its logit p̂, trials and
    successes. Exact: the binomial likelihood of these rows is the rows' likelihood (entries of weighted data, such
    as the engine's table, count as their weight in rows; in binned mode the scores are the table's cell means)."""
    gamma: np.ndarray            # logit p̂ of each row
    score_index: np.ndarray      # the score's rank among the distinct scores (equal ranks, equal logit p̂)
    code: np.ndarray             # the group of each row
    n: np.ndarray
    s: np.ndarray

    def group(self, g: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(logit p̂, trials, successes) of group g (None: all rows), one row per distinct score, sorted."""
        return self.groups(None if g is None else [g])

    def groups(self, chosen: list[int] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The same for the rows of several groups pooled (None: every group)."""
        keep = np.ones(self.n.size, bool) if chosen is None else np.isin(self.code, chosen)
        index, inverse = np.unique(self.score_index[keep], return_inverse=True)
        first = np.zeros(index.size, dtype=np.int64)
        first[inverse] = np.flatnonzero(keep)
        n = np.bincount(inverse, weights=self.n[keep], minlength=index.size)
        s = np.bincount(inverse, weights=self.s[keep], minlength=index.size)
        return self.gamma[first], n, s


def logit_counts(score: np.ndarray, y: np.ndarray, codes: np.ndarray, n_groups: int,
                 weights: np.ndarray | None = None) -> LogitCounts:
    """Aggregate rows (or weighted entries: ``weights`` rows each) on their distinct (group, score) pairs."""
    distinct, rank = np.unique(score, return_inverse=True)
    pair, row_pair = np.unique(rank.reshape(-1).astype(np.int64) * n_groups + codes, return_inverse=True)
    rows = np.ones(score.size) if weights is None else np.asarray(weights, float)
    n = np.bincount(row_pair, weights=rows, minlength=pair.size).round()
    s = np.bincount(row_pair, weights=y * rows, minlength=pair.size).round()
    used = n > 0                                    # entries of weight 0 carry no rows
    index = pair[used] // n_groups
    return LogitCounts(logit(distinct[index]), index, pair[used] % n_groups, n[used], s[used])


def linear_bias_test(gamma: np.ndarray, n: np.ndarray, s: np.ndarray, min_events: int = 10) -> LinearBiasTest:
    """The lecture's §4.5 glm: intercept and slope with the offset, their Wald tests, and the joint LR test."""
    n_pos = int(s.sum())
    n_tot = int(n.sum())
    deviance_offset = -2.0 * binomial_loglik(gamma, n, s)
    reason = _too_small(n_tot, n_pos, min_events)
    if not reason and np.unique(gamma[n > 0]).size < 2:
        reason = "every score in the group is the same: a slope cannot be estimated"
    if reason:
        return LinearBiasTest(None, None, None, None, deviance_offset, float("nan"), reason)
    fit = fit_logistic(np.column_stack([np.ones_like(gamma), gamma]), n, s, offset=gamma)
    citl = fit_logistic(np.ones((gamma.size, 1)), n, s, offset=gamma)
    if separated(fit):
        return LinearBiasTest(None, None, None, None, deviance_offset, float("nan"),
                              "the fit did not converge (the outcome is perfectly separated by the score)")
    return LinearBiasTest(_coefficient(fit, 0), _coefficient(fit, 1), lr_test(deviance_offset, fit.deviance, 2),
                          _coefficient(citl, 0) if citl.converged else None, deviance_offset, fit.deviance,
                          deviance_in_the_large=citl.deviance)


def spline_fit(gamma: np.ndarray, n: np.ndarray, s: np.ndarray, knots_wanted: int = 4,
               min_events: int = 10) -> tuple[LogisticFit | None, np.ndarray, str]:
    """Logistic regression of y on [1, RCS(logit p̂)]: the smooth curve and the non-linear test in one fit.
    (With logit p̂ as an offset the fitted values are the same: the basis already holds logit p̂.)"""
    n_pos, n_tot = int(s.sum()), int(n.sum())
    reason = _too_small(n_tot, n_pos, min_events)
    if reason:
        return None, np.empty(0), reason
    knots = rcs_knots(gamma, n, knots_wanted)
    if knots.size < 3:
        return None, knots, f"too few distinct scores for a spline ({np.count_nonzero(n)} distinct)"
    fit = fit_logistic(spline_design(gamma, knots), n, s)
    if not fit.converged:
        return None, knots, "the spline fit did not converge"
    return fit, knots, ""


def spline_design(gamma: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """[1, RCS basis] on logit p̂ centred and scaled by the knots (same fit, better conditioned)."""
    centre, width = (knots[0] + knots[-1]) / 2, max(knots[-1] - knots[0], 1e-9)
    basis = rcs_basis((gamma - centre) / width, (knots - centre) / width)
    return np.column_stack([np.ones(basis.shape[0]), basis])


def spline_bias_test(gamma, n, s, knots_wanted: int = 4, min_events: int = 10,
                     linear: LinearBiasTest | None = None, fitted: tuple | None = None) -> SplineBiasTest:
    fit, knots, reason = fitted if fitted is not None else spline_fit(gamma, n, s, knots_wanted, min_events)
    if reason:
        return SplineBiasTest(tuple(map(float, knots)), None, None, float("nan"), reason)
    linear = linear or linear_bias_test(gamma, n, s, min_events)
    params = fit.coef.size
    vs_cal = lr_test(linear.deviance_offset, fit.deviance, params)
    vs_lin = lr_test(linear.deviance_fit, fit.deviance, params - 2) if linear.ok else None
    return SplineBiasTest(tuple(map(float, knots)), vs_cal, vs_lin, fit.deviance)


def smooth_curve(fit: LogisticFit | None, knots: np.ndarray, gamma: np.ndarray, n: np.ndarray,
                 reason: str = "", level: float = 0.95, points: int = CURVE_POINTS) -> SmoothCurve:
    if fit is None:
        empty = np.empty(0)
        return SmoothCurve(empty, empty, empty, empty, reason or "no fit")
    used = gamma[n > 0]
    grid = np.linspace(used.min(), used.max(), points)
    X = spline_design(grid, knots)
    eta = X @ fit.coef
    se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", X, fit.cov, X), 0.0))
    z = sps.norm.ppf(0.5 + level / 2)
    return SmoothCurve(special.expit(grid), special.expit(eta), special.expit(eta - z * se), special.expit(eta + z * se))


def _too_small(n: int, n_pos: int, min_events: int) -> str:
    n_neg = n - n_pos
    if min(n_pos, n_neg) < min_events:
        return (f"not enough data (n = {n:,}: {n_pos:,} positive, {n_neg:,} negative; "
                f"a test needs {min_events} of each)")
    return ""


def group_difference_test(lc: LogitCounts, names: list[str], min_events: int = 10,
                          tests: list[LinearBiasTest] | None = None,
                          overall: LinearBiasTest | None = None) -> GroupDifferenceTest:
    """LR tests of group-specific calibration against shared calibration, over the groups big enough to test.

    The model with a group term and a group × logit p̂ interaction is the same as one fit per group, so its
    deviance is the sum of the groups' deviances; the Wald tests of the differences use the groups' own fits
    (the interaction model's information matrix is block-diagonal by group). ``tests`` (each group's linear test)
    and ``overall`` (all rows') are reused when given: the shared model is the overall fit when every group is
    tested."""
    tested, excluded, fits, citl_dev = [], [], {}, 0.0
    for g, name in enumerate(names):
        test = tests[g] if tests is not None else linear_bias_test(*lc.group(g), min_events)
        if not test.ok:
            excluded.append(name)
            continue
        tested.append(g)
        fits[name] = test
        citl_dev += test.deviance_in_the_large
    reference = names[tested[0]] if tested else ""
    if len(tested) < 2:
        return GroupDifferenceTest(tuple(names[g] for g in tested), tuple(excluded), None, None, {}, reference,
                                   "fewer than two groups have enough data to compare")
    if overall is not None and overall.ok and len(tested) == len(names):
        shared_dev, shared_citl_dev = overall.deviance_fit, overall.deviance_in_the_large
    else:
        gamma, n, s = lc.groups(tested)
        shared_dev = fit_logistic(np.column_stack([np.ones_like(gamma), gamma]), n, s, offset=gamma).deviance
        shared_citl_dev = fit_logistic(np.ones((gamma.size, 1)), n, s, offset=gamma).deviance
    separate = sum(t.deviance_fit for t in fits.values())
    k = len(tested)
    ref = fits[reference]
    differences = {}
    for name, t in fits.items():
        if name == reference:
            continue
        differences[name] = {"intercept": _difference(t.intercept, ref.intercept),
                             "slope": _difference(t.slope, ref.slope)}
    return GroupDifferenceTest(tuple(fits), tuple(excluded), lr_test(shared_dev, separate, 2 * (k - 1)),
                               lr_test(shared_citl_dev, citl_dev, k - 1), differences, reference)


def _difference(a: Coefficient, b: Coefficient) -> Coefficient:
    est = a.estimate - b.estimate
    se = float(np.hypot(a.se, b.se))
    z = est / se if se > 0 else float("nan")
    return Coefficient(est, se, z, float(2 * sps.norm.sf(abs(z))) if np.isfinite(z) else float("nan"))
