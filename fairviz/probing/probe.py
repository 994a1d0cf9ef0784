"""Counterfactual probing of knee regions ([1] §7, §8.2, App. D.2, App. J.4, App. O).

For an example x with residual d(x) = f(x) − y and an edit x′ (demographic swap, identity-term removal), the label
is unchanged, so the sensitivity is Δd = |f(x′) − f(x)|. ``probe`` scores a pool of labelled texts with any model
(a ``Scorer``: list of texts → P(y = 1)), finds the knee regions of the pool's residual curves with the same
analysis as the Residual page, and measures:

- App. O: matched samples of n knee-region and n non-knee examples (non-knee drawn with the knee sample's
  group × label counts), mean Δd per region and probe, the knee/non-knee ratio with a percentile-bootstrap CI and
  a two-sided Mann–Whitney test, and the Table 11 "average over probe types" ratio;
- App. D.2: four selection strategies (knee regions, highest entropy, highest confidence, random; 100 each) by
  demographic sensitivity (mean Δd of the swap), identity dependence (mean Δd of the removal) and the share with a
  clear pattern (max Δd ≥ 0.1; the paper does not define it, the threshold is a setting);
- §8.2 "error vs. sensitivity": |d| against Δd_swap over the probed examples, with Spearman and Pearson
  correlations;
- the probed examples themselves, each next to its edits (swaps can change meaning: App. M).

Rows whose text holds no listed word are left unchanged by an edit and get Δd = 0 (their share is reported).
Changes below ``tolerance`` (1e-6) are float32 noise from padding texts of other lengths in a batch and count as 0.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from scipy import stats as sps

from fairviz.core import stats
from fairviz.core.ece import ece, ece_regime
from fairviz.data import ColumnMapping, DataError, build_predictions
from fairviz.probing.lexicon import EDITS
from fairviz.probing.results import PROBES, ProbeResult, ProbeSummary, StrategySummary
from fairviz.residuals import KneeParams, RDFParams, ResidualAudit, analyse

Scorer = Callable[[list], np.ndarray]
Progress = Callable[[float, str], None]
CHUNK = 128


@dataclass(frozen=True)
class ProbeParams:
    n: int = 150                   # examples per region (App. O); the case study (App. J.4) used 200
    n_strategy: int = 100          # examples per selection strategy (App. D.2)
    region_eps: float = 0.05
    region_mode: str = "percentile"
    clear_threshold: float = 0.1   # "clear pattern": max(Δd_swap, Δd_removal) ≥ this
    resamples: int = 1000
    seed: int = 0
    tolerance: float = 1e-6        # |Δd| below this is float32 noise (padding in a batch), counted as 0
    knees: KneeParams = field(default_factory=KneeParams)

    def rdf_params(self) -> RDFParams:
        return RDFParams(region_eps=self.region_eps, region_mode=self.region_mode, knees=self.knees, resamples=0,
                         knee_resamples=0, seed=self.seed)

    def to_dict(self) -> dict:
        return asdict(self)


# ----------------------------------------------------------------------------------------------- scoring

def score_texts(scorer: Scorer, texts: list[str], progress: Progress | None = None, start: float = 0.0,
                span: float = 1.0, label: str = "Scoring") -> np.ndarray:
    """P(y = 1) for every text, in chunks (progress after each, so a Stop click lands within one chunk)."""
    out = np.empty(len(texts))
    for begin in range(0, len(texts), CHUNK):
        chunk = list(texts[begin:begin + CHUNK])
        values = np.asarray(scorer(chunk), dtype=float).reshape(-1)
        if values.size != len(chunk):
            raise ValueError(f"the scorer returned {values.size} scores for {len(chunk)} texts")
        out[begin:begin + len(chunk)] = values
        if progress is not None:
            progress(start + span * min(1.0, (begin + len(chunk)) / max(len(texts), 1)),
                     f"{label} {begin + len(chunk):,}/{len(texts):,}")
    if np.any(~np.isfinite(out)) or np.any((out < 0) | (out > 1)):
        raise ValueError("the scorer returned values outside [0, 1]")
    return out


def pool_audit(texts, y, groups, score, settings: ProbeParams) -> tuple[ResidualAudit, np.ndarray]:
    """The Residual page's analysis of the scored pool; returns it and the pool positions it kept."""
    frame = pd.DataFrame({"text": list(texts), "label": np.asarray(y, dtype=int), "group": np.asarray(groups).astype(str),
                          "score": np.asarray(score, dtype=float)})
    pred = build_predictions(frame, ColumnMapping("label", "score", ("group",), positive_label=1, text="text"),
                             source="probing pool", file_fingerprint=str(pd.util.hash_pandas_object(frame).sum()))
    return analyse(pred, "group", settings.rdf_params()), pred.frame.index.to_numpy()


def entropy(p: np.ndarray) -> np.ndarray:
    """Binary entropy H = −p log p − (1 − p) log(1 − p) (0 at p ∈ {0, 1})."""
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(np.where(p > 0, p * np.log(p), 0.0) + np.where(p < 1, (1 - p) * np.log(1 - p), 0.0))
    return h


# ----------------------------------------------------------------------------------------------- sampling

def matched_samples(in_region: np.ndarray, groups: np.ndarray, y: np.ndarray, n: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """n uniform knee-region rows, and n non-knee rows with the knee sample's group × label counts ([1] App. O);
    cells short of non-knee rows are filled uniformly from the rest. Returns (knee rows, non-knee rows, notes)."""
    notes = []
    knee_pool, rest_pool = np.flatnonzero(in_region), np.flatnonzero(~in_region)
    if knee_pool.size < n:
        notes.append(f"Only {knee_pool.size} knee-region rows in the pool: all are probed (asked for {n}).")
    knee = np.sort(rng.choice(knee_pool, size=min(n, knee_pool.size), replace=False))
    cells = pd.Series(list(zip(groups[knee], y[knee]))).value_counts()
    chosen: list[int] = []
    for (g, label), count in cells.items():
        candidates = rest_pool[(groups[rest_pool] == g) & (y[rest_pool] == label)]
        chosen += list(rng.choice(candidates, size=min(count, candidates.size), replace=False))
    short = min(n, rest_pool.size) - len(chosen)
    if short > 0:
        left = np.setdiff1d(rest_pool, chosen)
        chosen += list(rng.choice(left, size=min(short, left.size), replace=False))
        notes.append(f"{short} non-knee rows could not be matched on group × label and were drawn uniformly.")
    return knee, np.sort(np.asarray(chosen, dtype=int)), notes


def strategy_samples(in_region: np.ndarray, p: np.ndarray, k: int, rng: np.random.Generator) -> dict:
    """App. D.2's four selections of k rows: knee regions (uniform), highest entropy, highest confidence (lowest
    entropy), random; entropy ties keep pool order (stable sort)."""
    h = entropy(p)
    knee_pool = np.flatnonzero(in_region)
    order = np.argsort(-h, kind="stable")
    return {"knees": np.sort(rng.choice(knee_pool, size=min(k, knee_pool.size), replace=False)),
            "uncertainty": np.sort(order[:k]),
            "confidence": np.sort(np.argsort(h, kind="stable")[:k]),
            "random": np.sort(rng.choice(p.size, size=min(k, p.size), replace=False))}


# ----------------------------------------------------------------------------------------------- probing

def probe(texts, y, groups, scorer: Scorer, settings: ProbeParams = ProbeParams(),
          progress: Progress | None = None, meta: dict | None = None) -> ProbeResult:
    report = progress or (lambda *_: None)
    texts = [str(t) for t in texts]
    y, groups = np.asarray(y, dtype=int), np.asarray(groups).astype(str)
    if len(texts) == 0:
        raise DataError("No texts to probe.")
    report(0.0, "Scoring the pool")
    p = score_texts(scorer, texts, report, 0.0, 0.5, "Scoring the pool")
    audit, kept = pool_audit(texts, y, groups, p, settings)
    if kept.size != len(texts):
        texts, y, groups, p = [texts[i] for i in kept], y[kept], groups[kept], p[kept]
    in_region = audit.in_knee_region
    if not in_region.any():
        raise DataError("No knee region in the pool's residual curves (too few rows or constant scores): "
                        "nothing to probe. Use more data or another model.")
    if in_region.all():
        raise DataError("Every pool row lies in a knee region: there is no non-knee sample to compare with.")
    rng = np.random.default_rng(settings.seed)
    knee, rest, notes = matched_samples(in_region, groups, y, settings.n, rng)
    chosen = strategy_samples(in_region, p, settings.n_strategy, rng)
    probed = np.unique(np.concatenate([knee, rest, *chosen.values()]))

    report(0.5, "Editing and scoring the counterfactuals")
    edited = {name: [edit(texts[i]) for i in probed] for name, edit in EDITS.items()}
    delta, changed, edited_p = {}, {}, {}
    for step, name in enumerate(EDITS):
        moved = np.array([e != texts[i] for e, i in zip(edited[name], probed)])
        scores = np.array(p[probed], dtype=float)
        if moved.any():
            scores[moved] = score_texts(scorer, [e for e, m in zip(edited[name], moved) if m], report,
                                        0.5 + 0.4 * step / len(EDITS), 0.4 / len(EDITS), PROBES[name])
        edited_p[name] = dict(zip(probed.tolist(), scores))
        change = np.abs(scores - p[probed])
        delta[name] = dict(zip(probed.tolist(), np.where(moved & (change >= settings.tolerance), change, 0.0)))
        changed[name] = dict(zip(probed.tolist(), moved))

    report(0.92, "Comparing regions")
    brng = np.random.default_rng(settings.seed + 1)
    summaries = {name: _summarise(name, np.array([delta[name][i] for i in knee]),
                                  np.array([delta[name][i] for i in rest]),
                                  np.array([changed[name][i] for i in knee]), np.array([changed[name][i] for i in rest]),
                                  settings.resamples, brng)
                 for name in EDITS}
    ratios = [s.ratio for s in summaries.values()]
    ratio_average = float(np.mean(ratios)) if all(r is not None for r in ratios) else None
    d = p - y
    strategies = {}
    for name, rows in chosen.items():
        demo = np.array([delta["demographic_swap"][i] for i in rows])
        ident = np.array([delta["identity_removal"][i] for i in rows])
        strategies[name] = StrategySummary(name, int(rows.size), _mean(demo), _mean(ident),
                                           _mean(np.maximum(demo, ident) >= settings.clear_threshold),
                                           _mean(np.abs(d[rows])))
    both = np.concatenate([knee, rest])
    scatter = _correlation(np.abs(d[both]), np.array([delta["demographic_swap"][i] for i in both]))
    examples = pd.DataFrame({
        "row": both, "region": ["knee"] * knee.size + ["non-knee"] * rest.size, "group": groups[both],
        "label": y[both], "score": p[both], "residual": d[both],
        "nearest_knee": audit.nearest_knee[both], "text": [texts[i] for i in both],
        "swapped": [edited["demographic_swap"][int(np.searchsorted(probed, i))] for i in both],
        "score_swapped": [edited_p["demographic_swap"][i] for i in both],
        "delta_swap": [delta["demographic_swap"][i] for i in both],
        "removed": [edited["identity_removal"][int(np.searchsorted(probed, i))] for i in both],
        "score_removed": [edited_p["identity_removal"][i] for i in both],
        "delta_removal": [delta["identity_removal"][i] for i in both]})
    value = ece(p, y)
    knees = {g.name: [k.to_dict() for k in g.knees] for g in audit.groups}
    report(1.0, "Done")
    return ProbeResult(settings.to_dict(), dict(meta or {}), tuple(g.name for g in audit.groups), len(texts),
                       float(in_region.mean()), value, ece_regime(value), knees, summaries, ratio_average, strategies,
                       scatter, examples, tuple(notes) + tuple(audit.warnings))


def _summarise(name, knee, rest, changed_knee, changed_rest, resamples, rng) -> ProbeSummary:
    knee_mean, rest_mean = _mean(knee), _mean(rest)
    if rest_mean > 0:
        ratio, note = knee_mean / rest_mean, ""
    elif knee_mean == 0:
        ratio = None
        note = ("Δd = 0 for every probed example in both regions: the model's score does not react to these edits "
                "(it ignores the edited words), so there is no sensitivity to concentrate and the ratio is undefined.")
    else:
        ratio = None
        note = "Every non-knee example has Δd = 0 while knee examples move: the ratio is undefined (division by 0)."
    ci = knee_ci = rest_ci = stats.Interval(np.nan, np.nan)
    if resamples > 0 and knee.size and rest.size:
        kb = knee[rng.integers(0, knee.size, (resamples, knee.size))].mean(1)
        rb = rest[rng.integers(0, rest.size, (resamples, rest.size))].mean(1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ci = stats.percentile_interval(np.where(rb > 0, kb / rb, np.nan))
        knee_ci, rest_ci = stats.percentile_interval(kb), stats.percentile_interval(rb)
    test = stats.mann_whitney(knee, rest)
    p_two = None if not np.isfinite(test.p_two_sided) else float(test.p_two_sided)
    p_greater = None if not np.isfinite(test.p_greater) else float(test.p_greater)
    if p_two is None and not note:
        note = "The test is undefined: all Δd values are tied."
    return ProbeSummary(name, knee_mean, rest_mean, ratio, ci, knee_ci, rest_ci, p_two, p_greater, int(knee.size),
                        int(rest.size), _mean(changed_knee), _mean(changed_rest), note)


def _mean(x) -> float:
    x = np.asarray(x, dtype=float)
    return float(x.mean()) if x.size else float("nan")


def _correlation(error: np.ndarray, sensitivity: np.ndarray) -> dict:
    """§8.2 "error vs. sensitivity": Spearman (and Pearson) correlation of |d| with Δd_swap."""
    out = {"n": int(error.size), "spearman": None, "spearman_p": None, "pearson": None, "pearson_p": None,
           "note": "", "points": "examples[].residual (absolute value) and examples[].delta_swap"}
    if error.size < 3 or np.ptp(error) == 0 or np.ptp(sensitivity) == 0:
        out["note"] = "Undefined: one of the two variables is constant over the probed examples."
        return out
    rho, p_rho = sps.spearmanr(error, sensitivity)
    r, p_r = sps.pearsonr(error, sensitivity)
    out.update(spearman=float(rho), spearman_p=float(p_rho), pearson=float(r), pearson_p=float(p_r))
    return out
