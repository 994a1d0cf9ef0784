"""Model selection as in [5] §4.4: per method and hyperparameter
setting, mean ± std over seeds; keep the settings that are Pareto-efficient on **dev**; pick the one with the
smallest dev DTO (distance of the dev means to the utopia (1, 1)) — or, with a constraint, the best dev
performance among settings whose dev fairness reaches τ. Test figures are reported for the selected setting
only; the test split never takes part in choosing. Ties: lower DTO, then higher dev performance, then the first.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairviz.conditions.metrics import dto


@dataclass(frozen=True)
class RunRecord:
    """One trained model evaluated on one split."""

    condition: str
    value: float                # α, or s for a grid cell
    p_y: float | None
    method: str
    config: str                 # the hyperparameter setting, e.g. "λ=1"
    seed: int
    split: str                  # "dev" or "test"
    performance: float
    fairness: float
    gap_tpr: float
    macro_f1: float
    epochs: int = 0
    seconds: float = 0.0
    leakage: float | None = None     # balanced accuracy of a linear probe for z on the hidden layer (test runs)

    @property
    def dto(self) -> float:
        return dto(self.performance, self.fairness)

    def to_dict(self) -> dict:
        return {"condition": self.condition, "alpha": self.value if self.p_y is None else None,
                "p_y": self.p_y, "s": self.value if self.p_y is not None else None, "method": self.method,
                "config": self.config, "seed": self.seed, "split": self.split, "performance": self.performance,
                "fairness": self.fairness, "gap_tpr": self.gap_tpr, "macro_f1": self.macro_f1, "dto": self.dto,
                "epochs": self.epochs, "leakage": self.leakage}


@dataclass(frozen=True)
class Aggregate:
    """A (condition, method, config) over its seeds: dev and test mean and std."""

    condition: str
    value: float
    p_y: float | None
    method: str
    config: str
    n_seeds: int
    dev_performance: float
    dev_fairness: float
    test_performance: float
    test_performance_std: float
    test_fairness: float
    test_fairness_std: float
    test_leakage: float | None = None

    @property
    def dev_dto(self) -> float:
        return dto(self.dev_performance, self.dev_fairness)

    @property
    def test_dto(self) -> float:
        """From the test *means*, as the paper's tables (no ± on DTO)."""
        return dto(self.test_performance, self.test_fairness)


@dataclass(frozen=True)
class Selected:
    aggregate: Aggregate
    candidates: int             # settings tried
    pareto: int                 # of which Pareto-efficient on dev
    rule: str                   # "min dev DTO" or "max dev performance with dev fairness ≥ τ"

    def to_dict(self) -> dict:
        a = self.aggregate
        return {"condition": a.condition, "alpha": a.value if a.p_y is None else None, "p_y": a.p_y,
                "s": a.value if a.p_y is not None else None, "method": a.method, "config": a.config,
                "n_seeds": a.n_seeds, "dev_performance": a.dev_performance, "dev_fairness": a.dev_fairness,
                "dev_dto": a.dev_dto, "performance_mean": a.test_performance,
                "performance_std": a.test_performance_std, "fairness_mean": a.test_fairness,
                "fairness_std": a.test_fairness_std, "dto": a.test_dto, "leakage_mean": a.test_leakage,
                "candidates": self.candidates,
                "pareto": self.pareto, "rule": self.rule}


def aggregate(runs: list[RunRecord]) -> list[Aggregate]:
    groups: dict[tuple, dict[str, list[RunRecord]]] = {}
    for r in runs:
        key = (r.condition, r.value, r.p_y, r.method, r.config)
        groups.setdefault(key, {"dev": [], "test": []})[r.split].append(r)
    out = []
    for (condition, value, p_y, method, config), split in groups.items():
        dev, test = split["dev"], split["test"]
        if not dev or not test:
            continue
        tp = np.array([r.performance for r in test])
        tf = np.array([r.fairness for r in test])
        leaks = [r.leakage for r in test if r.leakage is not None]
        out.append(Aggregate(condition, value, p_y, method, config, len(test),
                             float(np.mean([r.performance for r in dev])), float(np.mean([r.fairness for r in dev])),
                             float(tp.mean()), float(tp.std(ddof=1)) if tp.size > 1 else 0.0,
                             float(tf.mean()), float(tf.std(ddof=1)) if tf.size > 1 else 0.0,
                             float(np.mean(leaks)) if leaks else None))
    return out


def pareto_mask(performance, fairness) -> np.ndarray:
    """True for points no other point beats on both axes (ties on both count as efficient)."""
    p = np.asarray(performance, dtype=float)
    f = np.asarray(fairness, dtype=float)
    keep = np.ones(p.size, dtype=bool)
    for i in range(p.size):
        dominated = (p >= p[i]) & (f >= f[i]) & ((p > p[i]) | (f > f[i]))
        keep[i] = not dominated.any()
    return keep


def select(candidates: list[Aggregate], min_fairness: float | None = None, use_pareto: bool = True) -> Selected | None:
    """The chosen setting among one (condition, method)'s candidates."""
    usable = [a for a in candidates if np.isfinite(a.dev_performance) and np.isfinite(a.dev_fairness)]
    if not usable:
        return None
    mask = pareto_mask([a.dev_performance for a in usable], [a.dev_fairness for a in usable]) if use_pareto \
        else np.ones(len(usable), bool)
    front = [a for a, k in zip(usable, mask) if k]
    if min_fairness is not None:
        passing = [a for a in front if a.dev_fairness >= min_fairness]
        if passing:
            best = max(passing, key=lambda a: (a.dev_performance, -a.dev_dto))
            return Selected(best, len(usable), len(front), f"max dev performance with dev fairness ≥ {min_fairness:g}")
    best = min(front, key=lambda a: (round(a.dev_dto, 12), -a.dev_performance))
    return Selected(best, len(usable), len(front), "min dev DTO")


def select_all(runs: list[RunRecord], min_fairness: float | None = None) -> list[Selected]:
    by_key: dict[tuple, list[Aggregate]] = {}
    for a in aggregate(runs):
        by_key.setdefault((a.condition, a.value, a.p_y, a.method), []).append(a)
    out = [select(c, min_fairness) for c in by_key.values()]
    return [s for s in out if s is not None]
