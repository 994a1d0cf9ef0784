"""What a comparison of two models on the same rows holds: a headline table per model × group, every paired
difference (model b minus model a) with its interval, test and Benjamini–Hochberg adjusted p-value, and the curves
the overlaid figures draw."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairviz.calibration.results import ReliabilityTable
from fairviz.core import stats
from fairviz.core.serialize import clean
from fairviz.data.model import DataError

# every metric a comparison differences, with how it reads; "pair" metrics contrast a group with the reference
DIFFERENCE_TITLES = {"ece": "ECE", "log_loss": "log-loss", "brier": "Brier score", "auroc": "AUROC",
                     "ofi": "OFI", "di": "DI", "fpr_gap": "FPR gap", "f_dist": "F_dist",
                     "knee_ratio": "knee concentration"}
# a comparison of errors of a numeric target (``fairviz.compare.paired_errors``): per group and their gaps to the
# reference
ERROR_TITLES = {"mae": "MAE", "bias": "bias (ŷ − y)", "mse": "MSE", "mae_gap": "MAE gap",
                     "bias_gap": "bias gap", "error_rate": "error rate", "error_rate_gap": "error-rate gap"}
PAIR_METRICS = ("ofi", "di", "fpr_gap", "f_dist")
# the pair metrics' value of "no disparity": a gap closes towards it
PARITY_VALUE = {"ofi": 0.0, "di": 1.0, "fpr_gap": 0.0, "f_dist": 0.0}
TOPIC_METRICS = {"calibration": ("ece", "log_loss", "brier", "auroc"),
                 "residuals": ("f_dist", "knee_ratio", "ece", "auroc"),
                 "parity": ("ofi", "di", "fpr_gap")}
TOPIC_COLUMNS = {"calibration": ("ece", "auroc", "log_loss", "brier"),
                 "residuals": ("f_dist", "knee_ratio", "ece", "auroc"),
                 "parity": ("selection_rate", "fpr", "fnr")}
ALL = "All rows"


@dataclass(frozen=True)
class CompareParams:
    resamples: int = 1000          # paired bootstrap resamples
    permutations: int = 1000       # paired permutation swaps
    seed: int = 0
    level: float = 0.95
    alpha: float = 0.05            # Benjamini–Hochberg's false discovery rate
    min_group_size: int = 100      # a smaller group is in the tables but never headlines a reading
    n_bins: int = 10               # reliability bins of the overlaid diagrams
    max_points: int = 2000         # points per sorted-residual curve
    max_readings: int = 3
    # Above this many entries (rows, or the engine's joint cells) the resampling reads the entries merged to
    # ``cells`` cells per model, split at τ (``fairviz.data.model.merged_cells``: every count at τ and every sum of
    # scores kept), re-centred on the values computed on every entry: it costs (resamples × entries), and a million
    # entries would take an hour. 50 cells (5,000 joint entries at 1M rows, 2.2 s) give intervals within Monte
    # Carlo error of the unmerged ones (``tests/compare``); 100 cost three times as much for nothing measurable.
    max_entries: int = 20_000
    cells: int = 50


@dataclass(frozen=True)
class Difference:
    """One metric of model b minus model a, overall (group None), in one group, or for a group against the
    reference (``reference`` set)."""
    metric: str
    group: str | None
    reference: str | None
    value_a: float
    value_b: float
    difference: float              # b − a
    ci: stats.Interval             # paired bootstrap, basic interval
    p_value: float
    test: str
    n: int                         # rows the metric reads (a pair: both groups')
    p_adjusted: float = float("nan")
    delong_ci: tuple[float, float] | None = None   # AUROC: DeLong's interval of b − a beside the bootstrap's

    @property
    def key(self) -> str:
        if self.reference is not None:
            return f"{self.metric}|{self.group} vs {self.reference}"
        return self.metric if self.group is None else f"{self.metric}|{self.group}"

    @property
    def title(self) -> str:
        return DIFFERENCE_TITLES.get(self.metric) or ERROR_TITLES[self.metric]

    def to_dict(self) -> dict:
        out = {"metric": self.metric, "group": self.group, "reference": self.reference, "value_a": self.value_a,
               "value_b": self.value_b, "difference": self.difference, "ci": self.ci.to_list(),
               "level": self.ci.level, "p_value": self.p_value, "p_adjusted": self.p_adjusted, "test": self.test,
               "n": self.n}
        if self.delong_ci is not None:
            out["delong_ci"] = list(self.delong_ci)
        return out


@dataclass(frozen=True)
class ModelCurves:
    """What the overlaid figures draw for one model: reliability tables (overall and per group) and each group's
    sorted residual curve (at most ``max_points`` quantiles)."""
    reliability: dict[str, ReliabilityTable]
    residual_quantiles: dict[str, tuple[np.ndarray, np.ndarray]]    # group → (percentiles, residual quantiles)


@dataclass(frozen=True)
class ModelComparison:
    attribute: str
    threshold: float
    benefit: str
    reference: str
    model_a: str
    model_b: str
    params: CompareParams
    group_sizes: dict[str, int]
    table: pd.DataFrame                         # one row per model × group (the first rows: every row)
    differences: tuple[Difference, ...]
    curves: dict[str, ModelCurves] = field(default_factory=dict, repr=False)
    notes: tuple[str, ...] = ()
    fingerprint: str = ""                       # the compared data's (figure keys)

    @property
    def name(self) -> str:
        return f"{self.model_a}_vs_{self.model_b}"

    def difference(self, metric: str, group: str | None = None, pair: bool = False) -> Difference:
        for d in self.differences:
            if d.metric == metric and d.group == group and (d.reference is not None) == pair:
                return d
        raise KeyError(f"no {metric} difference for {group!r}")

    def small_groups(self) -> list[str]:
        return [g for g, n in self.group_sizes.items() if n < self.params.min_group_size]

    def to_dict(self, readings: list[str] = ()) -> dict:
        return clean({
            "model_a": self.model_a, "model_b": self.model_b, "direction": "model_b minus model_a",
            "attribute": self.attribute, "threshold": self.threshold, "benefit": self.benefit,
            "reference": self.reference, "alpha": self.params.alpha, "tests": len(self.differences),
            "multiple_testing": "Benjamini–Hochberg over every difference below",
            "resamples": self.params.resamples, "permutations": self.params.permutations, "seed": self.params.seed,
            "differences": {d.key: d.to_dict() for d in self.differences},
            "table": self.table.to_dict(orient="records"),
            "readings": list(readings), "notes": list(self.notes),
        })


def two_models(names: list[str], model_a: str | None, model_b: str | None) -> tuple[str, str]:
    """The two models a comparison reads: ``model_a`` (None: the first) and ``model_b`` (None: the first other one),
    both among ``names`` and different."""
    model_a = model_a or names[0]
    model_b = model_b or next((n for n in names if n != model_a), None)
    if model_b is None or model_a == model_b:
        raise DataError("Comparing models needs two different models; the data holds "
                        f"{', '.join(repr(n) for n in names)}.")
    for title in (model_a, model_b):
        if title not in names:
            raise DataError(f"There is no model named '{title}' (models: {', '.join(names)}).")
    return model_a, model_b
