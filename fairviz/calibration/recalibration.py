"""Corrective recalibration ([2] §5): fit a monotone map b̃(p̂) on a calibration split, judge it on the rest.

Methods (all non-decreasing in p̂, as §5.1 asks):
- ``platt``: p̃ = expit(a + b·logit p̂), the lecture's "stacking with one predictor"; (a, b) = (β₀, 1 + β₁) of the
  linear calibration test fitted on the same rows.
- ``temperature``: p̃ = expit(logit p̂ / T), one parameter ([1] App. E.5).
- ``isotonic``: the pool-adjacent-violators step function (scikit-learn's IsotonicRegression, clipped).
- ``spline``: a smooth monotone spline of logit p̂ on the logit scale (the lecture's mgcv ``bs = "mpi"``): cubic
  B-splines with non-decreasing coefficients (θ = cumulative sums of non-negative steps), fitted by penalised
  likelihood (second differences of θ) with L-BFGS-B.

Per-group recalibration fits one map per group: it uses group membership at prediction time, which the page
labels clearly (it is a group-aware model, not allowed in every setting).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import optimize, special
from scipy.interpolate import BSpline

from fairviz.calibration.logistic import fit_logistic
from fairviz.calibration.performance import brier, log_loss
from fairviz.calibration.reliability import logit, reliability_table, weighted_quantiles
from fairviz.calibration.results import EPS, OVERALL
from fairviz.calibration.smooth_ece import smooth_ece
from fairviz.data import DataError, Predictions
from fairviz.data.view import View
from fairviz.core.ece import ece

METHODS = {"platt": "Platt (logistic)", "temperature": "Temperature", "isotonic": "Isotonic",
           "spline": "Monotone spline"}
ORIGINAL = "original"


@dataclass(frozen=True)
class RecalParams:
    methods: tuple[str, ...] = ("platt", "temperature", "isotonic", "spline")
    fraction: float = 0.5                 # share of rows in the calibration split (random, seeded)
    split_column: str | None = None       # or: rows whose value in this column equals split_value calibrate
    split_value: str | None = None
    per_group: bool = False
    seed: int = 0
    n_bins: int = 10
    spline_knots: int = 6                 # interior knots of the monotone spline
    spline_penalty: float = 1.0

    def __post_init__(self):
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown:
            raise ValueError(f"unknown recalibration method(s) {unknown}; choose from {list(METHODS)}")


@dataclass(frozen=True)
class Recalibrator:
    """A fitted monotone map from p̂ to a recalibrated probability."""
    method: str
    params: dict = field(default_factory=dict)

    def __call__(self, score: np.ndarray) -> np.ndarray:
        score = np.asarray(score, dtype=float)
        if self.method == "platt":
            return special.expit(self.params["a"] + self.params["b"] * logit(score))
        if self.method == "temperature":
            return special.expit(logit(score) / self.params["T"])
        if self.method == "isotonic":
            return np.interp(score, self.params["x"], self.params["y"])
        if self.method == "spline":
            return special.expit(_spline_eval(self.params, logit(score)))
        raise ValueError(f"unknown method {self.method!r}")

    def describe(self) -> str:
        p = self.params
        if self.method == "platt":
            return f"p̃ = expit({p['a']:+.3f} + {p['b']:.3f}·logit p̂)"
        if self.method == "temperature":
            return f"p̃ = expit(logit p̂ / {p['T']:.3f})"
        if self.method == "isotonic":
            return f"step function with {len(p['x'])} knots"
        return f"monotone cubic spline, {len(p['coef'])} coefficients, optimiser {'converged' if p['success'] else 'stopped early'}"


# ----------------------------------------------------------------------------------------------- fitting

def _aggregate(score: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores, rows and positives per score (every method below is a function of these)."""
    distinct, inverse = np.unique(score, return_inverse=True)
    return (distinct, np.bincount(inverse, minlength=distinct.size),
            np.bincount(inverse, weights=y, minlength=distinct.size))


def fit_platt(score: np.ndarray, y: np.ndarray) -> Recalibrator:
    x, n, s = _aggregate(score, y)
    g = logit(x)
    fit = fit_logistic(np.column_stack([np.ones_like(g), g]), n, s)
    return Recalibrator("platt", {"a": float(fit.coef[0]), "b": float(fit.coef[1])})


def fit_temperature(score: np.ndarray, y: np.ndarray) -> Recalibrator:
    x, n, s = _aggregate(score, y)
    g = logit(x)

    def nll(log_t: float) -> float:
        eta = g / np.exp(log_t)
        return float(np.sum(n * np.logaddexp(0.0, eta) - s * eta))

    best = optimize.minimize_scalar(nll, bounds=(-5.0, 5.0), method="bounded", options={"xatol": 1e-8})
    return Recalibrator("temperature", {"T": float(np.exp(best.x))})


def fit_isotonic(score: np.ndarray, y: np.ndarray) -> Recalibrator:
    from sklearn.isotonic import IsotonicRegression

    x, n, s = _aggregate(score, y)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(x, s / n, sample_weight=n)
    return Recalibrator("isotonic", {"x": iso.X_thresholds_.astype(float), "y": iso.y_thresholds_.astype(float)})


def fit_monotone_spline(score: np.ndarray, y: np.ndarray, interior_knots: int = 6,
                        penalty: float = 1.0) -> Recalibrator:
    """Non-decreasing cubic spline of logit p̂ (the logit of the recalibrated probability), by penalised ML."""
    x, n, s = _aggregate(score, y)
    g = logit(x)
    inner = np.unique(weighted_quantiles(g, n, np.linspace(0, 1, interior_knots + 2)[1:-1]))
    lo, hi = float(g.min()), float(g.max())
    if hi - lo < 1e-9:
        raise DataError("All calibration scores are equal: a spline needs a range of scores.")
    inner = inner[(inner > lo) & (inner < hi)]
    knots = np.concatenate([[lo] * 4, inner, [hi] * 4])
    basis = BSpline.design_matrix(np.clip(g, lo, hi), knots, 3).toarray()
    p = basis.shape[1]
    platt = fit_logistic(np.column_stack([np.ones_like(g), g]), n, s).coef
    greville = np.array([knots[j + 1:j + 4].mean() for j in range(p)])
    theta0 = np.maximum.accumulate(platt[0] + max(platt[1], 0.0) * greville)
    u0 = np.concatenate([[theta0[0]], np.diff(theta0)])
    diff2 = np.diff(np.eye(p), n=2, axis=0)
    lam = penalty * float(n.sum()) / 1000.0 if penalty else 0.0   # the penalty counts like 1,000 rows' worth

    def objective(u: np.ndarray) -> tuple[float, np.ndarray]:
        theta = np.cumsum(u)
        eta = basis @ theta
        mu = special.expit(eta)
        nll = float(np.sum(n * np.logaddexp(0.0, eta) - s * eta))
        d2 = diff2 @ theta
        grad_theta = basis.T @ (n * mu - s) + 2 * lam * diff2.T @ d2
        grad_u = np.cumsum(grad_theta[::-1])[::-1]              # θ = L u, so ∇u = Lᵀ ∇θ
        return nll + lam * float(d2 @ d2), grad_u

    bounds = [(None, None)] + [(0.0, None)] * (p - 1)
    result = optimize.minimize(objective, u0, jac=True, method="L-BFGS-B", bounds=bounds,
                               options={"maxiter": 2000, "ftol": 1e-12, "gtol": 1e-8})
    theta = np.cumsum(result.x)
    return Recalibrator("spline", {"knots": knots, "coef": theta, "lo": lo, "hi": hi,
                                   "success": bool(result.success)})


def _spline_eval(params: dict, g: np.ndarray) -> np.ndarray:
    """The spline inside [lo, hi]; beyond, a straight line with the end slope (≥ 0), so it stays monotone."""
    spline = BSpline(params["knots"], params["coef"], 3, extrapolate=False)
    lo, hi = params["lo"], params["hi"]
    inside = np.clip(g, lo, hi)
    eta = spline(inside)
    slope = spline.derivative()
    left, right = max(float(slope(lo)), 0.0), max(float(slope(hi)), 0.0)
    eta = np.where(g < lo, eta + left * (g - lo), eta)
    return np.where(g > hi, eta + right * (g - hi), eta)


FITTERS = {"platt": fit_platt, "temperature": fit_temperature, "isotonic": fit_isotonic}


def fit(method: str, score: np.ndarray, y: np.ndarray, params: RecalParams = RecalParams()) -> Recalibrator:
    y = np.asarray(y)
    if y.size == 0 or y.min() == y.max():
        only = "no rows" if y.size == 0 else f"only {'positive' if y.size and y[0] == 1 else 'negative'} outcomes"
        raise DataError(f"The calibration split has {only} ({y.size:,} rows): recalibration needs rows of both "
                        "outcomes. Use a larger calibration fraction or another split column.")
    if method == "spline":
        return fit_monotone_spline(score, y, params.spline_knots, params.spline_penalty)
    return FITTERS[method](score, y)


# ----------------------------------------------------------------------------------------------- evaluation

@dataclass(frozen=True)
class Metrics:
    n: int
    ece: float
    smooth_ece: float
    log_loss: float
    brier: float


@dataclass(frozen=True)
class MethodResult:
    method: str
    label: str
    scores: np.ndarray                 # recalibrated score of every row (calibration and evaluation)
    metrics: dict                      # group name (and "overall") → Metrics on the evaluation rows
    reliability: dict                  # group name (and "overall") → ReliabilityTable on the evaluation rows
    descriptions: dict                 # fitted map(s): "all" or group name → text
    problems: dict                     # group name → why its own map could not be fitted (per-group mode)


@dataclass(frozen=True)
class RecalibrationResult:
    attribute: str
    params: RecalParams
    calibration_rows: np.ndarray       # bool per row
    split_label: str
    original: MethodResult             # the scores as given, judged on the same evaluation rows
    methods: list[MethodResult]
    notes: tuple[str, ...] = ()

    @property
    def all(self) -> list[MethodResult]:
        return [self.original, *self.methods]

    def method(self, name: str) -> MethodResult:
        return next(m for m in self.all if m.method == name)

    def rows(self) -> list[dict]:
        """Each method's metrics per group on the evaluation rows (the original scores first)."""
        return [{"method": res.label, "group": name, "n": m.n, "ece": m.ece, "smooth_ece": m.smooth_ece,
                 "log_loss": m.log_loss, "brier": m.brier}
                for res in self.all for name, m in res.metrics.items()]


def split_rows(pred: Predictions, params: RecalParams) -> tuple[np.ndarray, str]:
    """Calibration rows (bool per row) and a description. Raises DataError for a split that cannot work."""
    if params.split_column:
        if params.split_column not in pred.frame.columns:
            raise DataError(f"The split column '{params.split_column}' is not in the file.")
        values = pred.frame[params.split_column].astype(str).str.strip().to_numpy()
        wanted = str(params.split_value).strip()
        rows = values == wanted
        label = f"rows with {params.split_column} = '{wanted}' calibrate; the others evaluate"
    else:
        if not 0.05 <= params.fraction <= 0.95:
            raise DataError(f"The calibration fraction must be between 0.05 and 0.95, got {params.fraction}.")
        rng = np.random.default_rng(params.seed)
        rows = np.zeros(pred.n, dtype=bool)
        rows[rng.permutation(pred.n)[: int(round(params.fraction * pred.n))]] = True
        label = f"a random {params.fraction:.0%} of rows (seed {params.seed}) calibrate; the other {1 - params.fraction:.0%} evaluate"
    if rows.all() or not rows.any():
        raise DataError(f"The split leaves {'no evaluation' if rows.all() else 'no calibration'} rows "
                        f"({label}). Choose another value or fraction.")
    return rows, label


def recalibrate(pred: Predictions, attribute: str | None = None, params: RecalParams = RecalParams()) -> RecalibrationResult:
    view = pred.groups(attribute)
    cal, label = split_rows(pred, params)
    y_cal = pred.y[cal]
    if y_cal.min() == y_cal.max():
        fit(params.methods[0] if params.methods else "platt", pred.score[cal], y_cal, params)   # raises the message
    notes = []
    clipped = int(np.count_nonzero((pred.score < EPS) | (pred.score > 1 - EPS)))
    if clipped:
        notes.append(f"{clipped:,} scores of exactly 0 or 1 were clipped to [{EPS:g}, 1 − {EPS:g}] before logit.")
    evaluation = ~cal
    original = _evaluate(ORIGINAL, "Original scores", pred.score, pred, view, evaluation, params, {}, {})
    methods = []
    for method in params.methods:
        scores = pred.score.copy()
        descriptions, problems = {}, {}
        if params.per_group:
            for g, name in enumerate(view.names):
                rows = view.codes == g
                try:
                    mapper = fit(method, pred.score[rows & cal], pred.y[rows & cal], params)
                except DataError as err:
                    problems[name] = f"{err.problems[0]} Its scores are left as they were."
                    continue
                scores[rows] = mapper(pred.score[rows])
                descriptions[name] = mapper.describe()
        else:
            mapper = fit(method, pred.score[cal], y_cal, params)
            scores = mapper(pred.score)
            descriptions["all"] = mapper.describe()
        label_text = METHODS[method] + (" — per group" if params.per_group else "")
        methods.append(_evaluate(method, label_text, scores, pred, view, evaluation, params, descriptions, problems))
    n_eval = int(evaluation.sum())
    if n_eval < 200:
        notes.append(f"Only {n_eval:,} evaluation rows: the before/after comparison is noisy.")
    return RecalibrationResult(view.attribute, params, cal, label, original, methods, tuple(notes))


def _evaluate(method, label, scores, pred, view, evaluation, params, descriptions, problems) -> MethodResult:
    metrics, tables = {}, {}
    for g, name in [*enumerate(view.names), (None, "overall")]:
        rows = evaluation if g is None else evaluation & (view.codes == g)
        s, y = scores[rows], pred.y[rows]
        metrics[name] = Metrics(int(rows.sum()), ece(s, y) if s.size else float("nan"),
                                smooth_ece(y, s)[0] if s.size else float("nan"), log_loss(y, s), brier(y, s))
        tables[name] = reliability_table(y, s, params.n_bins, "uniform")
    return MethodResult(method, label, scores, metrics, tables, descriptions, problems)


def recalibrated_frame(pred: Predictions, result: RecalibrationResult) -> pd.DataFrame:
    """The download: one row per kept row, the original score, each method's score, and the split."""
    view = pred.groups(result.attribute)
    frame = pd.DataFrame({
        "row": pred.row_labels(),
        pred.mapping.label: pred.y,
        "group": np.asarray(view.names)[view.codes],
        "split": np.where(result.calibration_rows, "calibration", "evaluation"),
        "score": pred.score,
    })
    for m in result.methods:
        frame[f"score_{m.method}{'_per_group' if result.params.per_group else ''}"] = m.scores
    return frame


# ----------------------------------------------------------------------------------------------- as a model

# How a recalibrated model is named: "<model> · <method>[ per <attribute>]" (the sidebar's Model picker lists it)
TITLE_SEP = " · "
TITLE_WORDS = {"platt": "Platt", "temperature": "temperature", "isotonic": "isotonic", "spline": "monotone spline"}


def recalibrated_model(joint: Predictions, method: str, attribute: str | None = None,
                       params: RecalParams = RecalParams()) -> tuple[np.ndarray, str, str]:
    """The active model's recalibration as a new model: (scores aligned with ``joint.joint()``'s entries, title,
    note), for ``Predictions.with_added_model``.

    It is the standalone recalibration itself, not a refit: ``recalibrate`` runs on the rows the Calibration page
    recalibrates (the active model's view, weighted data expanded to rows, so the same seeded split), and each entry
    takes the recalibrated score of its rows. Auditing the new model on the evaluation rows therefore gives the
    standalone's evaluation numbers. ``joint`` may be the joint predictions (its first model is recalibrated) or a
    model's table (``at``: that model is)."""
    base = joint.joint()
    model = joint.active_model
    view = base.at(View(model=model))
    rows = view.rows()
    result = recalibrate(rows, attribute, replace(params, methods=(method,)))
    fitted = result.method(method)
    # weighted data: every row of an entry has the entry's (groups, score), so the same recalibrated score
    entry_scores = fitted.scores if view.weight is None else fitted.scores[np.cumsum(view.weight) - view.weight]
    scores = entry_scores[_view_entries(base, view)]
    title = recalibrated_title(model, method, result.attribute, params.per_group)
    return scores, title, f"{title}: " + _model_note(model, method, result, fitted)


def recalibrated_title(model: str, method: str, attribute: str, per_group: bool) -> str:
    """The name of ``model``'s recalibration: "<model> · <method>", "… per <attribute>" for one map per group."""
    return model + TITLE_SEP + TITLE_WORDS[method] + (f" per {attribute}" if per_group else "")


def recalibration_base(title: str, models: list[str]) -> str | None:
    """The model that ``title`` recalibrates (named as ``recalibrated_model`` names it), or None."""
    for model in sorted(models, key=len, reverse=True):
        rest = title[len(model) + len(TITLE_SEP):] if title.startswith(model + TITLE_SEP) else None
        if rest and any(rest == word or rest.startswith(word + " per ") for word in TITLE_WORDS.values()):
            return model
    return None


def recalibration_pair(model: str, models: list[str]) -> tuple[str, str | None]:
    """(before, after) for "calibrate, then re-run": ``model`` and its latest recalibration among ``models``, or,
    when ``model`` is itself a recalibration, the model it recalibrates and ``model``. After is None when ``model``
    has no recalibration yet."""
    if base := recalibration_base(model, models):
        return base, model
    made = [m for m in models if recalibration_base(m, models) == model]
    return model, (made[-1] if made else None)


def recalibration_note(title: str, notes: tuple[str, ...]) -> str | None:
    """The note ``recalibrated_model`` wrote for the model ``title`` (kept in the predictions' notes once added)."""
    return next((n[len(title) + 2:] for n in reversed(notes) if n.startswith(f"{title}: ")), None)


def _view_entries(base: Predictions, view: Predictions) -> np.ndarray:
    """For each of ``base``'s entries, the entry of the one-model ``view`` that holds its rows. Weighted data: the
    view merged entries sharing groups, label and the model's score (binned: its score cell), in sorted order."""
    if view.weight is None or view is base:
        return np.arange(base.y.size)
    score = base.scores[view.model]
    keys = {f"a{k}": v.codes for k, v in enumerate(base.attributes.values())}
    cell = np.floor(score * round(1 / base.resolution)) if base.resolution else score
    table = pd.DataFrame({**keys, "y": base.y, "s": cell})
    index = table.groupby(list(table.columns), sort=True, observed=True).ngroup().to_numpy()
    merged = np.bincount(index, weights=base.weight, minlength=view.y.size)
    if index.max() + 1 != view.y.size or not np.array_equal(merged, view.weight) or \
            not np.array_equal(view.y[index], base.y):
        raise ValueError("the model's view does not merge the joint entries as expected")
    return index


def _model_note(model: str, method: str, result: RecalibrationResult, fitted: MethodResult) -> str:
    before, after = result.original.metrics[OVERALL], fitted.metrics[OVERALL]
    maps = "; ".join(f"{name}: {text}" if name != "all" else text for name, text in fitted.descriptions.items())
    kept = f" Left as they were: {', '.join(fitted.problems)}." if fitted.problems else ""
    how = TITLE_WORDS[method] + (f" recalibration, one map per {result.attribute} group" if result.params.per_group
                                 else " recalibration")
    return (f"'{model}' with {how} ({maps}), fitted on a split: {result.split_label}. "
            f"Judged on the {after.n:,} evaluation rows: ECE {before.ece:.3f} → {after.ece:.3f}, "
            f"log-loss {before.log_loss:.3f} → {after.log_loss:.3f}.{kept}")
