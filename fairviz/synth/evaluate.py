"""Judging synthetic data as the thesis does (§3.5, Tables 3.4–3.5, Fig. 3.4), plus the checks a user needs to
trust it: per-column marginal distances, a real-vs-synthetic classifier (realism) and the distance from each
synthetic row to its nearest real row (privacy).

Fairness of a protected group g is measured against the rest of the hold-out ("g vs the others"; the thesis does
not name the comparator of Table 3.4): OFI = 𝓑_g − 𝓑_rest with 𝓑 = (FP − FN)/n, DPPL = P̂_g/n_g − P̂_r/n_r,
DI = (P̂_g/n_g)/(P̂_r/n_r), DCA = P_g/P̂_g − P_r/P̂_r, with the positive prediction as the benefit.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from fairviz.core.confusion_metrics import METRICS, Cells, divide, marginal_benefit
from fairviz.synth.encoding import is_categorical

FAIRNESS_METRICS = ("ofi", "dppl", "di", "dca")
DISTANCES = ("ks", "kl", "js")
MAX_COMPARE_ROWS = 3000            # rows per side for the realism classifier and nearest-neighbour distances
MLP_HIDDEN = (32,)
MLP_ITER = 60


# ----------------------------------------------------------------------------------------------- Table 3.5

def distances(shares, target) -> dict:
    """KS, KL and JS of a categorical distribution to the target over one category order.

    KS = max |cumulative share difference|; KL = Σ p log(p/q) in nats (undefined, None, when the data has a
    category the target gives 0); JS distance = √(JS divergence), natural log (scipy's ``jensenshannon``)."""
    from scipy.spatial.distance import jensenshannon
    from scipy.special import rel_entr

    p, q = np.asarray(shares, float), np.asarray(target, float)
    kl = float(np.sum(rel_entr(p, q)))
    return {"ks": float(np.max(np.abs(np.cumsum(p) - np.cumsum(q)))),
            "kl": kl if np.isfinite(kl) else None,
            "js": float(jensenshannon(p, q))}


def shares(values: np.ndarray, levels: Sequence) -> np.ndarray:
    values = pd.Series(values, dtype=object).astype(str)
    counts = values.value_counts()
    return np.array([counts.get(str(level), 0) for level in levels], dtype=float) / max(len(values), 1)


# ----------------------------------------------------------------------------------------------- Table 3.4

def group_vs_rest(y: np.ndarray, predicted: np.ndarray, member: np.ndarray) -> dict:
    """OFI, DPPL, DI, DCA of the group ``member`` against all other rows (None where undefined)."""
    y, predicted, member = (np.asarray(a, bool) for a in (y, predicted, member))
    parts = [member, ~member]
    cells = Cells(*(np.array([np.sum(a & b & m) for m in parts], float)
                    for a, b in ((y, predicted), (y, ~predicted), (~y, predicted), (~y, ~predicted))))
    benefit = marginal_benefit(cells)
    ppr = METRICS["ppr"](cells)
    conditional_acceptance = divide(cells.positives, cells.predicted_positive)
    values = {"ofi": benefit[0] - benefit[1], "dppl": ppr[0] - ppr[1], "di": divide(ppr[0], ppr[1]),
              "dca": conditional_acceptance[0] - conditional_acceptance[1]}
    return {k: (float(v) if np.isfinite(v) else None) for k, v in values.items()}


@dataclass(frozen=True)
class Design:
    """One-hot categoricals and standardised numerics with the columns fixed by the real training data."""

    numeric: tuple[str, ...]
    categorical: tuple[tuple[str, tuple], ...]
    means: np.ndarray
    stds: np.ndarray

    @staticmethod
    def fit(frame: pd.DataFrame) -> "Design":
        numeric = tuple(c for c in frame.columns if not is_categorical(frame[c]))
        categorical = tuple((c, tuple(sorted(frame[c].astype(str).unique()))) for c in frame.columns
                            if c not in numeric)
        x = frame[list(numeric)].to_numpy(float) if numeric else np.zeros((len(frame), 0))
        stds = x.std(axis=0) if numeric else np.zeros(0)
        return Design(numeric, categorical, x.mean(axis=0) if numeric else np.zeros(0), np.where(stds > 0, stds, 1.0))

    def matrix(self, frame: pd.DataFrame) -> np.ndarray:
        parts = [(frame[list(self.numeric)].to_numpy(float) - self.means) / self.stds] if self.numeric else []
        for name, levels in self.categorical:
            values = frame[name].astype(str).to_numpy()
            parts.append((values[:, None] == np.asarray(levels)[None, :]).astype(float))
        return np.hstack(parts) if parts else np.zeros((len(frame), 0))


def fit_classifier(x: np.ndarray, y: np.ndarray, seed: int):
    """The thesis's downstream MLP classifier (it transferred better than a random forest from softmax data)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    if np.unique(y).size < 2:
        return _Constant(int(y[0]) if y.size else 0)
    model = MLPClassifier(hidden_layer_sizes=MLP_HIDDEN, max_iter=MLP_ITER, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(x, y)


@dataclass(frozen=True)
class _Constant:
    value: int

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.full(len(x), self.value)


@dataclass(frozen=True)
class Trial:
    """One trial: a classifier trained on real data and one on a synthetic draw, both scored on the hold-out."""

    real: dict             # group label → {metric: value}
    synthetic: dict
    accuracy_real: float
    accuracy_synthetic: float


def fairness_trial(train_x, train_y, synth_x, synth_y, test_x, test_y, members: dict, seed: int,
                   tick=None) -> Trial:
    """``tick(message)`` is called between the two classifier fits (a progress report, so Stop stays prompt)."""
    scores = []
    for side, (x, y) in zip(("real", "synthetic"), ((train_x, train_y), (synth_x, synth_y))):
        if tick is not None:
            tick(f"classifier trained on {side} data")
        predicted = fit_classifier(x, y, seed).predict(test_x).astype(bool)
        per_group = {g: group_vs_rest(test_y, predicted, m) for g, m in members.items()}
        scores.append((per_group, float(np.mean(predicted == test_y.astype(bool)))))
    return Trial(scores[0][0], scores[1][0], scores[0][1], scores[1][1])


# ----------------------------------------------------------------------------------------------- trust checks

def marginal_distances(real: pd.DataFrame, synthetic: pd.DataFrame) -> list[dict]:
    """Per column: the KS statistic (continuous) or the total variation distance (categorical), 0 = identical."""
    from scipy.stats import ks_2samp

    rows = []
    for name in real.columns:
        if is_categorical(real[name]):
            levels = sorted(set(real[name].astype(str)) | set(synthetic[name].astype(str)))
            tvd = 0.5 * np.abs(shares(real[name].to_numpy(), levels) - shares(synthetic[name].to_numpy(), levels)).sum()
            rows.append({"column": name, "kind": "categorical", "measure": "total variation", "distance": float(tvd)})
        else:
            stat = ks_2samp(real[name].to_numpy(float), synthetic[name].to_numpy(float)).statistic
            rows.append({"column": name, "kind": "continuous", "measure": "KS statistic", "distance": float(stat),
                         "real_mean": float(real[name].mean()), "synthetic_mean": float(synthetic[name].mean())})
    return rows


def matched_rows(real_keys: np.ndarray, synth_keys: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``k`` real rows drawn so that each cell (group × label) has its share in the synthetic data.

    The quotas change the group and label shares on purpose; without this a classifier would tell real from
    synthetic rows by those shares alone. Cells the real data lacks are skipped; small cells are drawn with
    replacement."""
    real_keys, synth_keys = np.asarray(real_keys, dtype=object), np.asarray(synth_keys, dtype=object)
    cells, counts = np.unique(synth_keys, return_counts=True)
    present = [(c, n) for c, n in zip(cells, counts) if np.any(real_keys == c)]
    total = sum(n for _, n in present)
    picks = []
    for cell, n in present:
        rows = np.flatnonzero(real_keys == cell)
        want = int(round(k * n / total))
        picks.append(rng.choice(rows, want, replace=want > rows.size))
    return np.concatenate(picks) if picks else np.zeros(0, dtype=int)


def realism_auc(real_x: np.ndarray, synth_x: np.ndarray, seed: int, real_keys=None, synth_keys=None) -> float:
    """Cross-validated AUC of a gradient-boosting classifier telling real rows from synthetic ones (0.5: it cannot).

    With ``real_keys``/``synth_keys`` (group × label cell of each row) the real rows are drawn to the synthetic
    cell shares first (``matched_rows``), so the AUC measures realism within the cells, not the quotas."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    rng = np.random.default_rng(seed)
    k = min(len(real_x), len(synth_x), MAX_COMPARE_ROWS)
    synth_pick = rng.choice(len(synth_x), k, replace=False)
    if real_keys is None:
        real_pick = rng.choice(len(real_x), k, replace=False)
    else:
        real_pick = matched_rows(real_keys, np.asarray(synth_keys, dtype=object)[synth_pick], k, rng)
    x = np.vstack([real_x[real_pick], synth_x[synth_pick]])
    k = len(real_pick)
    y = np.r_[np.zeros(k), np.ones(len(synth_pick))]
    model = HistGradientBoostingClassifier(max_iter=60, random_state=seed)
    folds = StratifiedKFold(3, shuffle=True, random_state=seed)
    p = cross_val_predict(model, x, y, cv=folds, method="predict_proba")[:, 1]
    return float(roc_auc_score(y, p))


def nearest_distances(reference: np.ndarray, queries: np.ndarray) -> np.ndarray:
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=1).fit(reference)
    return nn.kneighbors(queries)[0][:, 0]


def privacy(train_x: np.ndarray, synth_x: np.ndarray, holdout_x: np.ndarray, seed: int) -> dict:
    """Distance to the closest real training row: synthetic rows vs real hold-out rows (the baseline a fresh real
    sample sets). Exact copies of training rows are counted on both sides: in a table with few distinct rows (small
    integers and categories) unseen real rows match training rows too, so copies are judged against that rate."""
    rng = np.random.default_rng(seed)
    pick = lambda x: x[rng.choice(len(x), min(len(x), MAX_COMPARE_ROWS), replace=False)]  # noqa: E731
    synth_d = nearest_distances(train_x, pick(synth_x))
    hold_d = nearest_distances(train_x, pick(holdout_x))
    return {"synthetic_median": float(np.median(synth_d)), "synthetic_p05": float(np.quantile(synth_d, 0.05)),
            "holdout_median": float(np.median(hold_d)), "holdout_p05": float(np.quantile(hold_d, 0.05)),
            "exact_copies": int(np.sum(synth_d < 1e-9)), "checked_rows": int(synth_d.size),
            "holdout_exact_matches": int(np.sum(hold_d < 1e-9)), "holdout_checked_rows": int(hold_d.size),
            "closer_than_holdout_p05": float(np.mean(synth_d < np.quantile(hold_d, 0.05)))}
