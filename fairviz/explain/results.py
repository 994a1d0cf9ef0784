"""The results of the explanation-disparity analysis (no torch: the page's instant demo reads them).

- ``ExplainResult``: the per-sentence result of an explanation run, on disk and in memory;
- ``Cell``: the test of one (method, metric) between the two groups; ``DisparityAudit``: the grid of cells
  ([4] §4.4, Tables 3–5), with its JSON (``disparity_json``, written by the CLI, the audit and the page).

One ``ExplainResult`` holds three tables and a metadata dict:

- ``scores``       one row per (run, instance, method): the seven metric values, the IG convergence delta and
                   the reason a value is undefined; the single source of every boxplot, test and heatmap;
- ``instances``    one row per (run, instance): text, tokens (JSON list, [CLS]/[SEP] left out), group, gold label,
                   prediction, p(gold), p(gold) of the twin / gender-flipped text, and p(gold) with all evidence
                   removed four ways: every word deleted, masked, embedding zeroed, the IG baseline;
- ``attributions`` one row per (run, instance, method): the L1-normalised token scores (a JSON list);
- ``meta``         data set, model, settings, the model's own per-group behaviour per run, timings, versions.

On disk a result is a folder with ``scores.csv.gz``, ``instances.csv.gz``, ``attributions.csv.gz`` (gzip keeps the
shipped demo small; ``zcat`` reads them) and ``meta.json``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairviz.core.markup import csv_safe
from fairviz.core.progress import Completion
from fairviz.core.serialize import clean
from fairviz.core.stats import Interval
from fairviz.data import DataError
from fairviz.explain.registry import METHOD_NAMES, METRICS

SHIPPED = Path(__file__).resolve().parents[2] / "assets" / "explain"
TABLES = ("scores", "instances", "attributions")
SHIPPED_ORDER = ("geco-all", "geco-subj", "stereotypes", "compas", "neutral")   # the paper's order, control last


@dataclass(frozen=True)
class ExplainResult:
    scores: pd.DataFrame
    instances: pd.DataFrame
    attributions: pd.DataFrame
    meta: dict

    # ------------------------------------------------------------------------------------------- views
    @property
    def methods(self) -> list[str]:
        present = set(self.scores["method"])
        return [m for m in METHOD_NAMES if m in present]

    @property
    def metrics(self) -> list[str]:
        return [m for m in METRICS if m in self.scores.columns and self.scores[m].notna().any()]

    @property
    def groups(self) -> tuple[str, str]:
        return tuple(self.meta["dataset"]["groups"])

    @property
    def completion(self) -> Completion | None:
        """Set when a Stop came first: the explainers that finished (the others are absent)."""
        partial = self.meta.get("partial")
        return None if partial is None else Completion(partial["done"], partial["total"], partial["unit"])

    @property
    def runs(self) -> list[int]:
        return sorted(int(r) for r in self.scores["run"].unique())

    def long(self) -> pd.DataFrame:
        """One row per (run, instance, method, metric) with ``value`` (NaN when undefined)."""
        metrics = [m for m in METRICS if m in self.scores.columns]
        keys = ["run", "instance_id", "pair_id", "group", "label", "method"]
        return self.scores.melt(id_vars=keys, value_vars=metrics, var_name="metric", value_name="value")

    def attribution(self, run: int, instance_id: int, method: str) -> tuple[list[str], np.ndarray] | None:
        rows = self.attributions
        hit = rows[(rows["run"] == run) & (rows["instance_id"] == instance_id) & (rows["method"] == method)]
        inst = self.instances
        tokens = inst.loc[(inst["run"] == run) & (inst["instance_id"] == instance_id), "tokens"]
        if hit.empty or tokens.empty:
            return None
        return json.loads(tokens.iloc[0]), np.asarray(json.loads(hit["scores"].iloc[0]), dtype=float)

    def per_sentence_csv(self) -> str:
        """The download / ``--csv`` table: one row per sentence and method, text and prediction joined in."""
        cols = ["run", "instance_id", "text", "pred", "p_gold", "p_gold_counterfactual", "p_gold_empty",
                "p_gold_masked", "p_gold_zeroed", "p_gold_pad"]
        joined = self.scores.merge(self.instances[[c for c in cols if c in self.instances.columns]],
                                   on=["run", "instance_id"], how="left")
        return csv_safe(joined).to_csv(index=False, float_format="%.6g", lineterminator="\n")

    # ------------------------------------------------------------------------------------------- disk
    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        for name, table in (("scores", self.scores), ("instances", self.instances),
                            ("attributions", self.attributions)):
            table.to_csv(folder / f"{name}.csv.gz", index=False, float_format="%.6g", lineterminator="\n",
                         compression={"method": "gzip", "compresslevel": 9, "mtime": 0})
        (folder / "meta.json").write_text(json.dumps(clean(self.meta), indent=1) + "\n")
        return folder


def load(folder: str | Path) -> ExplainResult:
    folder = Path(folder)
    paths = {name: next((p for p in (folder / f"{name}.csv.gz", folder / f"{name}.csv") if p.exists()), None)
             for name in TABLES}
    missing = [f"{name}.csv.gz" for name, p in paths.items() if p is None]
    missing += [] if (folder / "meta.json").exists() else ["meta.json"]
    if missing:
        raise DataError(f"'{folder}' is not an explanation result: {', '.join(missing)} missing.")
    meta = json.loads((folder / "meta.json").read_text())
    scores = pd.read_csv(paths["scores"], keep_default_na=True)
    scores["nan_reason"] = scores["nan_reason"].fillna("")
    return ExplainResult(scores, pd.read_csv(paths["instances"]), pd.read_csv(paths["attributions"]), meta)


def shipped() -> dict[str, str]:
    """Shipped demo results: key → title (from each folder's meta.json), in the paper's order, the control last."""
    out = {}
    if SHIPPED.exists():
        order = {key: i for i, key in enumerate(SHIPPED_ORDER)}
        folders = [p for p in SHIPPED.iterdir() if (p / "meta.json").exists()]
        for folder in sorted(folders, key=lambda p: (order.get(p.name, len(order)), p.name)):
            meta = json.loads((folder / "meta.json").read_text())
            out[folder.name] = f"{meta['dataset']['title']} · {meta['model']['label']}"
    return out


def load_shipped(key: str) -> ExplainResult:
    return load(SHIPPED / key)


# ----------------------------------------------------------------------------------------------- the tests

@dataclass(frozen=True)
class Cell:
    method: str
    metric: str
    group_i: str
    group_j: str
    n_i: int
    n_j: int
    undefined_i: int                 # sentences whose metric is undefined (NaN), left out of the test
    undefined_j: int
    median_i: float
    median_j: float
    mean_i: float
    mean_j: float
    p_value: float                   # two-sided Mann–Whitney U
    p_adjusted: float                # Benjamini–Hochberg over the grid (used for significance only with "bh")
    cohens_d: float                  # i minus j
    ci: Interval                     # bootstrap percentile CI of d
    significant: bool                # p (or adjusted p) ≤ α
    considerable: bool               # significant and |d| ≥ 0.2
    runs: int
    runs_significant: int            # runs whose own test gives p ≤ α (paper Tables 3–5)
    p_paired: float | None = None    # Wilcoxon signed-rank on twin differences (paired data only)

    @property
    def higher(self) -> str | None:
        if not np.isfinite(self.cohens_d) or self.cohens_d == 0:
            return None
        return self.group_i if self.cohens_d > 0 else self.group_j

    @property
    def better(self) -> str | None:
        """The group whose explanations score better on this metric (the metric's direction in ``METRICS``)."""
        higher = self.higher
        if higher is None:
            return None
        return higher if METRICS[self.metric].direction > 0 else (self.group_j if higher == self.group_i else self.group_i)

    def to_dict(self) -> dict:
        return {"method": self.method, "metric": self.metric,
                "n": {self.group_i: self.n_i, self.group_j: self.n_j},
                "undefined": {self.group_i: self.undefined_i, self.group_j: self.undefined_j},
                "median": {self.group_i: _finite(self.median_i), self.group_j: _finite(self.median_j)},
                "mean": {self.group_i: _finite(self.mean_i), self.group_j: _finite(self.mean_j)},
                "p_value": _finite(self.p_value), "p_adjusted": _finite(self.p_adjusted),
                "cohens_d": _finite(self.cohens_d), "ci": self.ci.to_list(),
                "significant": self.significant, "considerable": self.considerable,
                "higher": self.higher, "better": self.better,
                "runs": self.runs, "runs_significant": self.runs_significant,
                "p_paired_wilcoxon": _finite(self.p_paired)}


@dataclass(frozen=True)
class DisparityAudit:
    cells: tuple[Cell, ...]
    groups: tuple[str, str]
    alpha: float
    correction: str                  # "none" or "bh"
    resamples: int
    seed: int

    def cell(self, method: str, metric: str) -> Cell | None:
        return next((c for c in self.cells if c.method == method and c.metric == metric), None)

    @property
    def methods(self) -> list[str]:
        present = {c.method for c in self.cells}
        return [m for m in METHOD_NAMES if m in present]

    @property
    def metrics(self) -> list[str]:
        present = {c.metric for c in self.cells}
        return [m for m in METRICS if m in present]

    def to_dict(self) -> dict:
        return {"groups": list(self.groups), "alpha": self.alpha, "correction": self.correction,
                "bootstrap_resamples": self.resamples, "seed": self.seed, "sign": f"{self.groups[0]} minus {self.groups[1]}",
                "cells": [c.to_dict() for c in self.cells]}


def _finite(x):
    return float(x) if x is not None and np.isfinite(x) else None


def disparity_json(result: ExplainResult, report: DisparityAudit, warnings: list[str]) -> dict:
    """The explanation-disparity JSON that the CLI, the audit section and the page's download all write: per
    method × metric n per group, medians, p_value, p_adjusted, cohens_d, ci (and more), plus context."""
    tests = {}
    for cell in report.cells:
        tests.setdefault(cell.method, {})[cell.metric] = cell.to_dict()
    meta = result.meta
    return clean({
        "dataset": {k: meta["dataset"][k] for k in ("key", "title", "groups", "label_names", "paired", "n_explained")
                    if k in meta["dataset"]},
        "model": {k: meta["model"].get(k) for k in ("kind", "path", "description", "n_parameters", "device")},
        "settings": meta.get("settings"),
        "model_behaviour": {run: v["behaviour"] for run, v in meta.get("runs", {}).items()},
        "warnings": warnings,
        "groups": list(report.groups), "sign": f"{report.groups[0]} minus {report.groups[1]}",
        "alpha": report.alpha, "correction": report.correction, "bootstrap_resamples": report.resamples,
        "tests": tests,
    })
