"""RDF-guided counterfactual augmentation ([1] §8.3, App. E, Algorithm 1).

Algorithm 1, on a pluggable model (anything with ``score(texts)`` and ``fine_tune(texts, labels, seed, progress)``
returning a new model; ``fairviz.probing.textmodel`` wraps the explanation page's text models):

1. score the validation set V, compute d = f(x) − y, detect each group's knees;
2. D* = the diagnostic set of the Residual page for V (Algorithm 1's residual band |d − r| < ε by default), and
   select k examples: **rdf** uniformly from D* (when |D*| < k: all of D*, then the rows nearest a knee, our
   choice: [1] does not say), **uncertainty** the k highest-entropy rows, **random** k uniform rows — all from the same pool V;
3. add a counterfactual copy (x′, y) of each selected example, x′ = demographic swap (identity-term removal when
   the text has no gendered word);
4. f′ = FineTune(f, T ∪ A) and the change of F_pattern, F_v and F_dist on the held-out test set.

Repeated for each k and seed (the paper: k ∈ {100, 500}, seeds 42, 123, 456); mean ± std (ddof = 1) over seeds,
efficiency ΔF/k, and a two-sided Welch t-test of each strategy against random. A control fine-tunes on T alone
with the same seed ([1] §8.3), so the effect of the extra epoch is visible apart from the augmentation.

Sign convention (stated on every output): ΔF = F(after) − F(before). F_pattern is 1 when the groups' median
residuals are equal, so a positive ΔF_pattern means fairer; F_v and F_dist are 0 when fair, so negative means
fairer. The paper's Tables 3 and 9 say "negative values indicate improvement" for ΔF_pattern; their numbers behave
like the change of the median gap |m₁ − m₀|/2 = 1 − F_pattern, reported here as ``gap`` (= −ΔF_pattern).
Efficiency = ΔF_pattern / k (higher is better, App. E.3 read with F_pattern's own direction).
"""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field
from typing import Callable, Protocol

import numpy as np
import pandas as pd
from scipy import stats as sps

from fairviz.core.ece import ece, ece_regime
from fairviz.core.progress import Completion, Stopped
from fairviz.data import ColumnMapping, DataError, build_predictions
from fairviz.probing.lexicon import demographic_swap, identity_removal
from fairviz.probing.probe import entropy, score_texts
from fairviz.probing.readings import calibration_reading
from fairviz.probing.results import AUGMENT_STRATEGIES, DELTA_METRICS, SEEDS, AugmentRecord, AugmentResult
from fairviz.residuals import KneeParams, RDFParams, ResidualAudit, analyse

Progress = Callable[[float, str], None]


class Trainable(Protocol):
    def score(self, texts) -> np.ndarray: ...

    def fine_tune(self, texts, labels, seed: int, progress: Progress | None = None) -> "Trainable": ...


@dataclass(frozen=True)
class AugmentParams:
    strategies: tuple[str, ...] = tuple(AUGMENT_STRATEGIES)
    ks: tuple[int, ...] = (100, 500)
    seeds: tuple[int, ...] = SEEDS
    region_eps: float = 0.05
    region_mode: str = "residual"          # Algorithm 1's |d − r| < ε; "percentile" = the §7.1 default
    knees: KneeParams = field(default_factory=KneeParams)
    control: bool = True                   # also fine-tune on T alone (same seed)

    def rdf_params(self) -> RDFParams:
        return RDFParams(region_eps=self.region_eps, region_mode=self.region_mode, knees=self.knees, resamples=0,
                         knee_resamples=0)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Split:
    """Texts with binary labels and group names (one of T, V or the test set)."""
    text: list
    label: np.ndarray
    group: np.ndarray

    @classmethod
    def of(cls, frame: pd.DataFrame) -> "Split":
        return cls(frame["text"].astype(str).tolist(), frame["label"].to_numpy(dtype=int),
                   frame["group"].astype(str).to_numpy())

    def __len__(self) -> int:
        return len(self.text)


# ----------------------------------------------------------------------------------------------- D* and selection

def residual_audit(p: np.ndarray, y: np.ndarray, groups: np.ndarray, params: RDFParams) -> ResidualAudit:
    """The Residual page's analysis (``fairviz.residuals.analyse``) of scored texts."""
    frame = pd.DataFrame({"label": np.asarray(y, dtype=int), "score": np.asarray(p, dtype=float),
                          "group": np.asarray(groups).astype(str)})
    pred = build_predictions(frame, ColumnMapping("label", "score", ("group",), positive_label=1),
                             source="augmentation", file_fingerprint=str(pd.util.hash_pandas_object(frame).sum()))
    if pred.n != len(frame):
        raise DataError("Some rows fell out of the residual analysis (a group with a single row?).")
    return analyse(pred, "group", params)


def diagnostic_set(p, y, groups, settings: AugmentParams) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 steps 1–2: (D* as a mask, each row's distance to its group's nearest knee in the active mode)."""
    audit = residual_audit(p, y, groups, settings.rdf_params())
    d = np.asarray(p, dtype=float) - np.asarray(y, dtype=float)
    groups = np.asarray(groups).astype(str)
    distance = np.full(d.size, np.inf)
    for summary in audit.groups:
        rows = np.flatnonzero(groups == summary.name)
        coords = _percentile_ranks(d[rows]) if settings.region_mode == "percentile" else d[rows]
        for knee in summary.knees:
            at = knee.percentile if settings.region_mode == "percentile" else knee.residual
            distance[rows] = np.minimum(distance[rows], np.abs(coords - at))
    return audit.in_knee_region.copy(), distance


def _percentile_ranks(d: np.ndarray) -> np.ndarray:
    """Mid-rank percentile (rank − ½)/n within the sample, stable for ties: the Residual page's knee coordinate
    ([1] §7.1)."""
    order = np.argsort(d, kind="stable")
    ranks = np.empty(d.size)
    ranks[order] = np.arange(1, d.size + 1)
    return (ranks - 0.5) / max(d.size, 1)


def select(strategy: str, k: int, p: np.ndarray, dstar: np.ndarray, distance: np.ndarray,
           rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """k row positions of the pool for one strategy; returns (rows, shortfall filled outside D*)."""
    n = p.size
    k = min(k, n)
    if strategy == "random":
        return np.sort(rng.choice(n, size=k, replace=False)), 0
    if strategy == "uncertainty":
        return np.sort(np.argsort(-entropy(p), kind="stable")[:k]), 0
    if strategy == "rdf":
        members = np.flatnonzero(dstar)
        if members.size >= k:
            return np.sort(rng.choice(members, size=k, replace=False)), 0
        outside = np.flatnonzero(~dstar)
        nearest = outside[np.argsort(distance[outside], kind="stable")][:k - members.size]
        return np.sort(np.concatenate([members, nearest])), int(k - members.size)
    raise ValueError(f"unknown strategy {strategy!r}; choose from {', '.join(AUGMENT_STRATEGIES)}")


def counterfactual(text: str) -> str:
    """Algorithm 1 step 3: the demographic swap, or identity-term removal when the text has nothing to swap."""
    swapped = demographic_swap(text)
    return swapped if swapped != text else identity_removal(text)


# ----------------------------------------------------------------------------------------------- metrics

def fairness(model: Trainable, test: Split, params: RDFParams, progress=None, start=0.0, span=0.0) -> dict:
    """F_pattern, F_v, F_dist (and F_h) of the held-out test set's first group pair."""
    p = score_texts(model.score, test.text, progress, start, span, "Scoring the test set")
    pair = residual_audit(p, test.label, test.group, params).pairs[0]
    return {"f_pattern": pair.f_pattern, "f_v": pair.f_v, "f_dist": pair.f_dist, "f_h": pair.f_h,
            "pair": [pair.group_i, pair.group_j]}


def _welch(a, b) -> dict | None:
    """Welch's two-sided t-test of a strategy's per-seed Δ against random's ([1] App. E: unequal variances), and the
    paired-by-seed variant next to it (both runs of a seed share its fine-tuning seed)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    both = np.isfinite(a) & np.isfinite(b) if a.size == b.size else None
    a_ok, b_ok = a[np.isfinite(a)], b[np.isfinite(b)]
    if a_ok.size < 2 or b_ok.size < 2:
        return None
    with warnings.catch_warnings():          # near-identical seeds: scipy warns, the result is still reported
        warnings.simplefilter("ignore", RuntimeWarning)
        t, p = sps.ttest_ind(a_ok, b_ok, equal_var=False)
        paired = sps.ttest_rel(a[both], b[both]) if both is not None and both.sum() >= 2 else None

    def num(x):
        return float(x) if x is not None and np.isfinite(x) else None
    return {"t": num(t), "p_value": num(p), "test": "Welch two-sided",
            "paired_t": None if paired is None else num(paired.statistic),
            "paired_p_value": None if paired is None else num(paired.pvalue)}


# ----------------------------------------------------------------------------------------------- Algorithm 1

def augment(model: Trainable, train: Split, validation: Split, test: Split,
            settings: AugmentParams = AugmentParams(), progress: Progress | None = None,
            meta: dict | None = None) -> AugmentResult:
    report = progress or (lambda *_: None)
    unknown = [s for s in settings.strategies if s not in AUGMENT_STRATEGIES]
    if unknown or not settings.strategies:
        raise DataError(f"Unknown strategy {', '.join(unknown) or '(none)'}; choose from {', '.join(AUGMENT_STRATEGIES)}.")
    if not settings.ks or min(settings.ks) < 1 or not settings.seeds:
        raise DataError("k must be at least 1 and at least one seed is needed.")
    params = settings.rdf_params()
    jobs = len(settings.seeds) * (len(settings.strategies) * len(settings.ks) + int(settings.control))
    step = [0]

    def job_progress(label: str) -> Progress:
        def update(fraction: float, message: str = "") -> None:
            report(0.1 + 0.9 * (step[0] + min(fraction, 1.0)) / jobs, f"{label}: {message}")
        return update

    report(0.0, "Scoring the validation set")
    p_val = score_texts(model.score, validation.text, report, 0.0, 0.05, "Scoring the validation set")
    dstar, distance = diagnostic_set(p_val, validation.label, validation.group, settings)
    before = fairness(model, test, params, report, 0.05, 0.05)
    notes = []
    if settings.ks and max(settings.ks) > len(validation):
        notes.append(f"k = {max(settings.ks)} exceeds the validation pool ({len(validation)} rows): all rows used.")
    deltas: dict = {}
    per_seed: list[dict] = []          # each finished seed's (shortfall, unchanged) per (strategy, k)

    def result(finished: int) -> AugmentResult:
        """The result of the first ``finished`` seeds (all of them unless a Stop came first)."""
        kept = {key: rows[:finished] for key, rows in deltas.items()}
        info = {key: tuple(max(seed[key][i] for seed in per_seed[:finished]) for i in (0, 1))
                for key in per_seed[0]} if finished else {}
        completion = None if finished == len(settings.seeds) else Completion(finished, len(settings.seeds), "seeds")
        return _result(settings, meta, before, kept, info, dstar, validation, p_val, list(notes), completion)

    for finished, seed in enumerate(settings.seeds):
        try:
            per_seed.append(_one_seed(model, train, validation, test, settings, params, seed, p_val, dstar, distance,
                                      before, deltas, job_progress, step))
        except Stopped as stop:        # the seeds that finished are kept; the unfinished one's runs are dropped
            raise stop.keeping(result(finished) if finished else None)
    try:
        report(1.0, "Done")
    except Stopped as stop:                 # a Stop on the last report: everything finished, keep it all
        raise stop.keeping(result(len(settings.seeds)))
    return result(len(settings.seeds))


def _one_seed(model, train: Split, validation: Split, test: Split, settings: AugmentParams, params, seed: int,
              p_val, dstar, distance, before: dict, deltas: dict, job_progress, step: list) -> dict:
    """Every fine-tuning of one seed (the control, then each strategy and k); appends each Δ to ``deltas`` and
    returns (shortfall, unchanged copies) per (strategy, k)."""
    info = {}
    if settings.control:
        after = fairness(model.fine_tune(train.text, train.label, seed, job_progress(f"Control, seed {seed}")),
                         test, params)
        deltas.setdefault(("none", 0), []).append({m: after[m] - before[m] for m in DELTA_METRICS})
        step[0] += 1
    for s_index, strategy in enumerate(settings.strategies):
        for k in settings.ks:
            rng = np.random.default_rng([seed, k, s_index])
            rows, short = select(strategy, k, p_val, dstar, distance, rng)
            copies = [counterfactual(validation.text[i]) for i in rows]
            unchanged = sum(c == validation.text[i] for c, i in zip(copies, rows))
            texts = list(train.text) + copies
            labels = np.concatenate([train.label, validation.label[rows]])
            tuned = model.fine_tune(texts, labels, seed, job_progress(f"{AUGMENT_STRATEGIES[strategy]}, k = {k}, "
                                                                        f"seed {seed}"))
            after = fairness(tuned, test, params)
            deltas.setdefault((strategy, k), []).append({m: after[m] - before[m] for m in DELTA_METRICS})
            info[(strategy, k)] = (short, unchanged)
            step[0] += 1
    return info


def _result(settings: AugmentParams, meta: dict | None, before: dict, deltas: dict, info: dict, dstar, validation,
            p_val, notes: list, completion: Completion | None) -> AugmentResult:
    records = []
    for strategy in settings.strategies:
        for k in settings.ks:
            per_metric = {m: [row[m] for row in deltas[(strategy, k)]] for m in DELTA_METRICS}
            records.append(AugmentRecord(strategy, k, per_metric, *info[(strategy, k)]))
    if "random" in settings.strategies:
        records = [r if r.strategy == "random" else
                   AugmentRecord(r.strategy, r.k, r.deltas, r.shortfall, r.unchanged,
                                 {m: _welch(r.deltas[m], next(x for x in records if x.strategy == "random"
                                                              and x.k == r.k).deltas[m]) for m in DELTA_METRICS})
                   for r in records]
    control = None
    if settings.control:
        control = AugmentRecord("none", 0, {m: [row[m] for row in deltas[("none", 0)]] for m in DELTA_METRICS})
    shortfalls = [r for r in records if r.strategy == "rdf" and r.shortfall]
    for r in shortfalls:
        notes.append(f"D* holds {int(dstar.sum())} rows, fewer than k = {r.k}: the other {r.shortfall} were the rows "
                        "nearest a knee (outside D*).")
    value = ece(p_val, validation.label)
    return AugmentResult(settings.to_dict(), dict(meta or {}), before, records, control, value, ece_regime(value),
                         int(dstar.sum()), len(validation), tuple(notes), calibration_reading(value, records),
                         completion)
