"""The retraining sweep of *Systematic Evaluation of Predictive Fairness* (§3–6): for every condition of the
training distribution (CB or JB at each α, or each (p_y, s) of the grid), every seed and every method and
hyperparameter setting: resample the training split (§3.2, the same draw for every method at one seed), train,
keep the epoch with the smallest dev DTO, and score dev and the fixed test split. Then select per (condition,
method) by dev (``selection``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from fairviz.conditions import distributions as dist
from fairviz.conditions.data import Dataset, Split
from fairviz.conditions.methods import (DEFAULT_METHODS, METHOD_NAMES, METHODS, MethodFailed, DebiasTrainParams,
                                        config_label, grid, train)
from fairviz.conditions.metrics import confusion, leakage, scores_of
from fairviz.conditions.resample import resample
from fairviz.conditions.selection import RunRecord, Selected, select_all
from fairviz.data import DataError

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class SimulationParams:
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
class Simulation:
    data: dict
    settings: SimulationParams
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

    def to_dict(self) -> dict:
        return {"data": self.data, "settings": self.settings.to_dict(), "m": self.m, "device": self.device,
                "runs": [r.to_dict() for r in self.runs], "selected": [s.to_dict() for s in self.selected],
                "train_cells": [c.to_dict(self.classes, self.groups) for c in self.train_cells],
                "failures": [f.to_dict() for f in self.failures], "warnings": list(self.warnings)}

    def selected_rows(self) -> list[dict]:
        return [{**s.to_dict(), "method_name": METHOD_NAMES.get(s.aggregate.method, s.aggregate.method)}
                for s in self.selected]

    def readings(self) -> list[str]:
        """Plain-language readings: where Vanilla is fairest, and which method has the best test DTO where."""
        out = []
        rows = self.selected_rows()
        if not rows:
            return ["No model could be trained under these settings."]
        key = "alpha" if self.settings.condition != "grid" else "s"
        vanilla = [r for r in rows if r["method"] == "vanilla" and r["fairness_mean"] is not None]
        if vanilla and self.settings.condition != "grid":
            best = max(vanilla, key=lambda r: r["fairness_mean"])
            worst = min(vanilla, key=lambda r: r["fairness_mean"])
            out.append(f"Vanilla is fairest at α = {best[key]:g} (Fairness {best['fairness_mean']:.3f}) and least "
                       f"fair at α = {worst[key]:g} ({worst['fairness_mean']:.3f}).")
        winners: dict[str, int] = {}
        cells = {}
        for r in rows:
            k = (r["p_y"], r[key])
            if r["dto"] is not None and (k not in cells or r["dto"] < cells[k]["dto"]):
                cells[k] = r
        for r in cells.values():
            winners[r["method_name"]] = winners.get(r["method_name"], 0) + 1
        if winners:
            text = ", ".join(f"{name} in {n}" for name, n in sorted(winners.items(), key=lambda kv: -kv[1]))
            out.append(f"Lowest test DTO per condition: {text} of {len(cells)} conditions"
                       + (" — no single best method." if len(winners) > 1 else "."))
        return out


def run(data: Dataset, settings: SimulationParams = SimulationParams(), progress: Progress | None = None) -> Simulation:
    settings.check()
    started = time.perf_counter()
    if settings.condition == "grid" and (data.n_classes, data.n_groups) != (2, 2):
        raise DataError(f"The (p_y, s) grid needs two classes and two groups; '{data.name}' has "
                        f"{data.n_classes} classes and {data.n_groups} groups. Use cb or jb.")
    m = int(settings.m or data.m_default)
    conds = dist.conditions(data.train_joint, settings.condition, settings.alphas, settings.grid)
    jobs = [(cond, seed, method, config) for cond in conds for seed in range(settings.seeds)
            for method in settings.methods for config in grid(method, settings.grid_size)]
    total = len(jobs)
    done = 0
    runs, cells, failures, warnings = [], [], [], []
    device = settings.train.device or _device()
    for cond in conds:
        drawn = {}
        for seed in range(settings.seeds):
            idx, tc = resample(data.train.y, data.train.z, cond, m, seed=seed, on_empty=settings.on_empty,
                               classes=data.classes, groups=data.groups)
            drawn[seed] = Split(data.train.X[idx], data.train.y[idx], data.train.z[idx])
            if seed == 0:
                cells.append(tc)
                if tc.dropped.any():
                    warnings.append(f"{cond.label}: {int(tc.dropped.sum())} requested cell(s) have no training rows "
                                    "and were left empty.")
                if "ds" in settings.methods:
                    kept = _downsampled_size(tc.counts)
                    if kept < 0.25 * tc.counts.sum():
                        warnings.append(f"{cond.label}: DS keeps only {kept:,} of {int(tc.counts.sum()):,} training "
                                        "rows (the smallest cell sets the size of every group).")
        for seed in range(settings.seeds):
            for method in settings.methods:
                for config in grid(method, settings.grid_size):
                    label = f"{cond.label} · {METHOD_NAMES[method]} · seed {seed}"
                    if progress is not None:
                        progress(done / total, label)

                    def tick(message: str, _label=label, _done=done) -> None:
                        if progress is not None:
                            progress(_done / total, f"{_label} · {message}")

                    try:
                        model = train(method, config, drawn[seed], data.dev, data.n_classes, data.n_groups,
                                      settings.train, seed=seed, tick=tick)
                    except MethodFailed as err:
                        failures.append(Failure(cond.label, method, seed, str(err)))
                        done += 1
                        continue
                    leak = None
                    if settings.leakage:
                        leak = leakage(model.represent(data.dev.X), data.dev.z, model.represent(data.test.X),
                                       data.test.z).balanced_accuracy
                    for split_name, split in (("dev", data.dev), ("test", data.test)):
                        s = scores_of(confusion(split.y, model.predict(split.X), split.z, data.n_classes,
                                                data.n_groups))
                        runs.append(RunRecord(settings.condition, cond.value, cond.p_y, method,
                                              config_label(method, config), seed, split_name, s.accuracy,
                                              s.fairness, s.gap_tpr, s.macro_f1, model.epochs,
                                              round(model.seconds, 4), leak if split_name == "test" else None))
                    done += 1
    if progress is not None:
        progress(1.0, "done")
    selected = select_all(runs, settings.min_fairness)
    for f in dict.fromkeys((f.condition, f.method, f.reason) for f in failures):     # in order, once each
        warnings.append(f"{METHOD_NAMES[f[1]]} has no result at {f[0]}: {f[2]}")
    return Simulation(data.summary(), settings, m, tuple(runs), tuple(selected), tuple(cells), data.classes,
                      data.groups, tuple(failures), tuple(warnings), time.perf_counter() - started, device)


def _downsampled_size(counts: np.ndarray) -> int:
    """Rows DS keeps from these cell counts: ⌊r·n_c⌋ per group of each class, r = min n_{c,g}/n_c."""
    n_c = counts.sum(1)
    present = n_c > 0
    if not present.any():
        return 0
    r = (counts[present] / n_c[present, None]).min()
    return int(sum(np.floor(r * n) * counts.shape[1] for n in n_c[present]))


def _device() -> str:
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


def runs_frame(sim: Simulation):
    """One row per (condition, α or (p_y, s), method, setting, seed, split): the CSV of the CLI and the page."""
    import pandas as pd
    frame = pd.DataFrame([r.to_dict() for r in sim.runs])
    if not frame.empty:
        frame.insert(frame.columns.get_loc("method") + 1, "method_name", frame["method"].map(METHOD_NAMES))
    return frame


def selected_frame(sim: Simulation):
    """The selected setting per (condition, method) with test mean ± std and DTO: the paper's Table 3 layout."""
    import pandas as pd
    return pd.DataFrame(sim.selected_rows())


def summary_text(sim: Simulation) -> str:
    """The terminal summary: one line per condition with every method's test Fairness and DTO."""
    lines = [f"Retraining sweep on {sim.data['name']}: {sim.settings.condition.upper()}, m = {sim.m:,}, "
             f"{sim.settings.seeds} seed(s), {len(sim.runs) // 2} trained models in {sim.seconds:.1f} s on {sim.device}."]
    rows = sim.selected_rows()
    key = "s" if sim.settings.condition == "grid" else "alpha"
    for cond in sorted({(r["p_y"] if r["p_y"] is not None else -1, r[key]) for r in rows}):
        here = [r for r in rows if (r["p_y"] if r["p_y"] is not None else -1, r[key]) == cond]
        name = f"p_y={cond[0]:g}, s={cond[1]:g}" if cond[0] != -1 else f"α={cond[1]:g}"
        parts = [f"{r['method_name']} {r['performance_mean']:.3f}/{r['fairness_mean']:.3f}/{r['dto']:.3f}" for r in here]
        lines.append(f"  {name:<16} " + "  ".join(parts))
    lines.append("  (test accuracy / Fairness / DTO of the setting selected on dev)")
    lines += [f"  note: {w}" for w in sim.warnings] + [f"  {t}" for t in sim.readings()]
    return "\n".join(lines)


def reselect(sim: Simulation, min_fairness: float | None) -> Simulation:
    """The same runs selected with another rule (no retraining): min dev DTO, or a dev Fairness constraint."""
    from dataclasses import replace
    return replace(sim, settings=replace(sim.settings, min_fairness=min_fairness),
                   selected=tuple(select_all(list(sim.runs), min_fairness)))
