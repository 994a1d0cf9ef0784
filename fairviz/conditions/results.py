"""Data conditions' settings and results ([5] Han et al.): the retraining sweep (``RetrainingAudit``) and the evaluation
reweighting of fixed predictions (``ReweightingAudit``). Frozen dataclasses; ``fairviz.conditions.readings`` words them
and ``fairviz.conditions.display`` lays them out."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairviz.conditions import distributions as dist
from fairviz.conditions.distributions import Condition
from fairviz.conditions.methods import DEFAULT_METHODS, GRIDS, METHOD_NAMES, METHODS, DebiasTrainParams
from fairviz.conditions.metrics import Scores
from fairviz.conditions.selection import RunRecord, Selected
from fairviz.core.progress import Completion
from fairviz.data import DataError


@dataclass(frozen=True)
class RetrainingParams:
    condition: str = "cb"
    alphas: tuple[float, ...] = dist.DEFAULT_ALPHAS
    grid: tuple[float, ...] = dist.DEFAULT_GRID
    methods: tuple[str, ...] = DEFAULT_METHODS
    seeds: int = 3
    m: int | None = None                    # rows drawn per condition (default: the data's m_default)
    grid_size: str = "small"
    train: DebiasTrainParams = DebiasTrainParams()
    on_empty: str = "drop"
    min_fairness: float | None = None
    leakage: bool = False                   # probe the hidden layer for z (fit on dev, scored on test)

    def check(self) -> None:
        if self.condition not in dist.CONDITIONS:
            raise DataError(f"Unknown condition '{self.condition}': use cb, jb or grid.")
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown:
            raise DataError(f"Unknown method(s) {', '.join(unknown)}; choose from {', '.join(METHODS)}.")
        if not self.methods:
            raise DataError("Choose at least one method.")
        if not 1 <= self.seeds <= 20:
            raise DataError(f"seeds must be between 1 and 20, got {self.seeds}.")
        bad = [a for a in self.alphas if not 0 <= a <= 2]
        if bad or not self.alphas:
            raise DataError(f"α values must lie in [0, 2]; got {', '.join(map(str, bad)) or 'none'}.")
        if self.condition == "grid" and (not self.grid or any(not 0 < v < 1 for v in self.grid)):
            raise DataError("Grid values (p_y and s) must lie strictly between 0 and 1.")
        if self.m is not None and self.m < 10:
            raise DataError(f"m must be at least 10 rows, got {self.m}.")

    @property
    def n_conditions(self) -> int:
        return len(self.grid) ** 2 if self.condition == "grid" else len(self.alphas)

    @property
    def n_models(self) -> int:
        """Models the sweep trains: conditions × seeds × every method's hyperparameter settings."""
        return self.n_conditions * self.seeds * sum(len(GRIDS[self.grid_size].get(k, [{}])) for k in self.methods)

    def to_dict(self) -> dict:
        return {"condition": self.condition, "alphas": list(self.alphas) if self.condition != "grid" else None,
                "grid": list(self.grid) if self.condition == "grid" else None, "methods": list(self.methods),
                "seeds": self.seeds, "m": self.m, "grid_size": self.grid_size, "train": self.train.to_dict(),
                "on_empty": self.on_empty, "min_fairness": self.min_fairness, "leakage": self.leakage}


@dataclass(frozen=True)
class Failure:
    condition: str
    method: str
    seed: int
    reason: str

    def to_dict(self) -> dict:
        return {"condition": self.condition, "method": self.method, "seed": self.seed, "reason": self.reason}


@dataclass(frozen=True)
class RetrainingAudit:
    data: dict
    settings: RetrainingParams
    m: int
    runs: tuple[RunRecord, ...]
    selected: tuple[Selected, ...]
    train_cells: tuple[dist.TrainCells, ...]
    classes: tuple[str, ...]
    groups: tuple[str, ...]
    failures: tuple[Failure, ...] = ()
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    device: str = "cpu"
    completion: Completion | None = None      # set when a Stop came first: the conditions that finished

    def to_dict(self) -> dict:
        out = {"data": self.data, "settings": self.settings.to_dict(), "m": self.m, "device": self.device,
               "runs": [r.to_dict() for r in self.runs], "selected": [s.to_dict() for s in self.selected],
               "train_cells": [c.to_dict(self.classes, self.groups) for c in self.train_cells],
               "failures": [f.to_dict() for f in self.failures], "warnings": list(self.warnings)}
        if self.completion is not None:
            out["partial"] = self.completion.to_dict()
        return out

    def selected_rows(self) -> list[dict]:
        return [{**s.to_dict(), "method_name": METHOD_NAMES.get(s.aggregate.method, s.aggregate.method)}
                for s in self.selected]


@dataclass(frozen=True)
class ReweightRow:
    condition: Condition
    scores: Scores
    weighted_accuracy: float        # importance-weighted accuracy, the check of Σ P'(c, g) TPR_{c,g}
    gap_tpr_pairwise: float         # RMS over classes of the largest pairwise TPR difference (= gap_tpr for 2 groups)

    def to_dict(self) -> dict:
        return {**self.condition.to_dict(), **self.scores.to_dict(), "weighted_accuracy": self.weighted_accuracy,
                "gap_tpr_pairwise": self.gap_tpr_pairwise}


@dataclass(frozen=True)
class ReweightingAudit:
    kind: str
    classes: tuple[str, ...]
    groups: tuple[str, ...]
    original: Scores
    observed_joint: np.ndarray
    rows: tuple[ReweightRow, ...]

    def to_dict(self) -> dict:
        return {"kind": self.kind, "classes": list(self.classes), "groups": list(self.groups),
                "original": self.original.to_dict(), "observed_joint": self.observed_joint.tolist(),
                "rows": [r.to_dict() for r in self.rows]}

    @property
    def tpr_gap_range(self) -> float:
        values = [r.scores.gap_tpr for r in self.rows]
        return float(np.nanmax(values) - np.nanmin(values))
