"""The retraining sweep of [5] (§3–6): for every condition of the
training distribution (CB or JB at each α, or each (p_y, s) of the grid), every seed and every method and
hyperparameter setting: resample the training split (§3.2, the same draw for every method at one seed), train,
keep the epoch with the smallest dev DTO, and score dev and the fixed test split. Then select per (condition,
method) by dev (``selection``).
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from fairviz.conditions import distributions as dist
from fairviz.conditions.data import Dataset, Split
from fairviz.conditions.methods import METHOD_NAMES, MethodFailed, config_label, grid, train
from fairviz.conditions.metrics import confusion, leakage, scores_of
from fairviz.conditions.resample import resample
from fairviz.conditions.results import Failure, RetrainingAudit, RetrainingParams
from fairviz.conditions.selection import RunRecord, select_all
from fairviz.core.progress import Completion, Stopped
from fairviz.data import DataError

Progress = Callable[[float, str], None]


def run(data: Dataset, settings: RetrainingParams = RetrainingParams(), progress: Progress | None = None) -> RetrainingAudit:
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
    runs, cells, failures, warnings = [], [], [], []
    device = settings.train.device or _device()

    def audit(finished: int) -> RetrainingAudit:
        """The audit of the first ``finished`` conditions (all of them unless a Stop came first)."""
        selected = select_all(runs, settings.min_fairness)
        notes = list(warnings)
        for f in dict.fromkeys((f.condition, f.method, f.reason) for f in failures):     # in order, once each
            notes.append(f"{METHOD_NAMES[f[1]]} has no result at {f[0]}: {f[2]}")
        completion = None if finished == len(conds) else Completion(finished, len(conds), "conditions")
        return RetrainingAudit(data.summary(), settings, m, tuple(runs), tuple(selected), tuple(cells[:finished]),
                               data.classes, data.groups, tuple(failures), tuple(notes),
                               time.perf_counter() - started, device, completion)

    done = 0
    for finished, cond in enumerate(conds):
        kept = len(runs), len(failures), len(warnings)
        try:
            done = _run_condition(data, settings, cond, m, runs, cells, failures, warnings, done, total, progress)
        except Stopped as stop:
            del runs[kept[0]:], failures[kept[1]:], warnings[kept[2]:]      # the unfinished condition's share
            raise stop.keeping(audit(finished) if finished else None)
    try:
        if progress is not None:
            progress(1.0, "done")
    except Stopped as stop:                 # a Stop on the last report: everything finished, keep it all
        raise stop.keeping(audit(len(conds)))
    return audit(len(conds))


def _run_condition(data: Dataset, settings: RetrainingParams, cond, m: int, runs: list, cells: list,
                   failures: list, warnings: list, done: int, total: int, progress: Progress | None) -> int:
    """Every seed, method and setting at one condition, appended to ``runs`` (and its training cells, failures
    and warnings to theirs). Returns the number of jobs done so far."""
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
    return done


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


def runs_frame(sim: RetrainingAudit):
    """One row per (condition, α or (p_y, s), method, setting, seed, split): the CSV of the CLI and the page."""
    import pandas as pd
    frame = pd.DataFrame([r.to_dict() for r in sim.runs])
    if not frame.empty:
        frame.insert(frame.columns.get_loc("method") + 1, "method_name", frame["method"].map(METHOD_NAMES))
    return frame


def selected_frame(sim: RetrainingAudit):
    """The selected setting per (condition, method) with test mean ± std and DTO: the paper's Table 3 layout."""
    import pandas as pd
    return pd.DataFrame(sim.selected_rows())


def reselect(sim: RetrainingAudit, min_fairness: float | None) -> RetrainingAudit:
    """The same runs selected with another rule (no retraining): min dev DTO, or a dev Fairness constraint."""
    from dataclasses import replace
    return replace(sim, settings=replace(sim.settings, min_fairness=min_fairness),
                   selected=tuple(select_all(list(sim.runs), min_fairness)))
