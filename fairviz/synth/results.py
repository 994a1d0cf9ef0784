"""The result of one Conditional HydraGAN run ([3] §3.5): what the page, the CLI JSON and the terminal summary
render (``fairviz.synth.readings`` words it, ``fairviz.synth.display`` lays it out)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from fairviz.core.progress import Completion
from fairviz.core.serialize import clean
from fairviz.synth import evaluate as ev
from fairviz.synth.thesis import improvement, improves

METRIC_LABELS = {"ofi": "OFI", "dppl": "DPPL", "di": "DI", "dca": "DCA"}
DISTANCE_LABELS = {"ks": "KS statistic", "kl": "KL divergence", "js": "JS distance"}
REALISM_FAIR = 0.75                    # AUC below this: the real-vs-synthetic classifier struggles


@dataclass(frozen=True)
class DistributionTarget:
    """Table 3.5 for one target (labels or groups): the real and synthetic shares and their distances to it."""

    levels: tuple
    target: tuple[float, ...]
    real: tuple[float, ...]
    synthetic: tuple[float, ...]
    distances: dict                   # "ks"/"kl"/"js" → {"real", "synthetic", "improvement"}

    @staticmethod
    def of(levels, target, real, synthetic) -> "DistributionTarget":
        d_real, d_synth = ev.distances(real, target), ev.distances(synthetic, target)
        distances = {k: {"real": d_real[k], "synthetic": d_synth[k], "improvement": improvement(d_real[k], d_synth[k])}
                     for k in ev.DISTANCES}
        return DistributionTarget(tuple(levels), tuple(map(float, target)), tuple(map(float, real)),
                                  tuple(map(float, synthetic)), distances)

    def to_dict(self) -> dict:
        return {"levels": [str(v) for v in self.levels], "target": list(self.target), "real_shares": list(self.real),
                "synthetic_shares": list(self.synthetic), **self.distances}


@dataclass(frozen=True)
class GroupFairness:
    """Table 3.4 for one protected group (vs the rest of the hold-out), mean over the trials, with the trials."""

    group: str
    n_holdout: int
    real: dict                        # metric → [value per trial] (None where undefined)
    synthetic: dict

    @staticmethod
    def of(name: str, n: int, trials: Sequence[ev.Trial]) -> "GroupFairness":
        return GroupFairness(name, n, {m: [t.real[name][m] for t in trials] for m in ev.FAIRNESS_METRICS},
                             {m: [t.synthetic[name][m] for t in trials] for m in ev.FAIRNESS_METRICS})

    def mean(self, side: str, metric: str) -> float | None:
        values = [v for v in getattr(self, side)[metric] if v is not None]
        return float(np.mean(values)) if values else None

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"n_holdout": self.n_holdout}
        for m in ev.FAIRNESS_METRICS:
            real, synth = self.mean("real", m), self.mean("synthetic", m)
            out[m] = {"real": real, "synthetic": synth, "improves": improves(m, real, synth),
                      "real_trials": self.real[m], "synthetic_trials": self.synthetic[m]}
        return out


@dataclass(frozen=True)
class SynthAudit:
    source: str
    label: str
    positive: Any
    group_columns: tuple[str, ...]
    condition_name: str
    settings: Any                     # run.SynthParams
    counts: dict                      # rows generated per group (the hard quota)
    distribution: dict                # "label" / "group" → DistributionTarget
    fairness: tuple[GroupFairness, ...]
    accuracy: dict
    marginals: tuple[dict, ...]
    realism_auc: float
    privacy: dict
    history: dict
    heads: tuple
    device: str
    seconds: float
    n_train: int
    n_holdout: int
    synthetic: pd.DataFrame = field(compare=False, repr=False)
    notes: tuple[str, ...] = ()
    completion: Completion | None = None   # set when a Stop came first: the trials that finished

    @property
    def trials(self) -> int:
        """Trials the fairness means are over (fewer than asked when a Stop came first)."""
        return self.settings.trials if self.completion is None else self.completion.done

    def to_dict(self) -> dict:
        """The JSON (the CLI's ``--json`` and the page's download). ``timing`` is the only machine-dependent key."""
        return clean({
            "source": self.source, "label": self.label, "positive": self.positive,
            "groups": list(self.group_columns), "condition": self.condition_name,
            "settings": asdict(self.settings), "rows_per_group": self.counts,
            "n_train": self.n_train, "n_holdout": self.n_holdout,
            "distribution": {k: v.to_dict() for k, v in self.distribution.items()},
            "fairness": {g.group: g.to_dict() for g in self.fairness},
            "accuracy": self.accuracy,
            "realism": {"auc": self.realism_auc, "marginals": list(self.marginals)},
            "privacy": self.privacy,
            "training": {"heads": [{"name": n, "weight": w} for n, w in self.heads], "loss_history": self.history},
            "timing": {"device": self.device, "seconds": self.seconds,
                       "seconds_per_epoch": self.seconds / max(1, self.settings.epochs)},
            **({"partial": self.completion.to_dict()} if self.completion is not None else {}),
        })

    # ------------------------------------------------------------------------------------------- tables

    def table_35(self) -> pd.DataFrame:
        rows = []
        for key, label in DISTANCE_LABELS.items():
            row = {"metric": label}
            for target, name in (("label", "labels"), ("group", "groups")):
                d = self.distribution[target].distances[key]
                row.update({f"{name}: synthetic": d["synthetic"], f"{name}: real": d["real"],
                            f"{name}: improvement": percent(d["improvement"])})
            rows.append(row)
        return pd.DataFrame(rows)

    def table_34(self) -> pd.DataFrame:
        rows = []
        for m, label in METRIC_LABELS.items():
            synth = {g.group: self.mean_or_none(g, "synthetic", m) for g in self.fairness}
            real = {g.group: self.mean_or_none(g, "real", m) for g in self.fairness}
            rows.append({"metric": label, "data": "Synthetic", **synth})
            rows.append({"metric": label, "data": "Real", **real})
            rows.append({"metric": label, "data": "Improves",
                         **{g: improves(m, real[g], synth[g]) for g in synth}})
        return pd.DataFrame(rows)

    @staticmethod
    def mean_or_none(group: GroupFairness, side: str, metric: str) -> float | None:
        return group.mean(side, metric)

    def improved_metrics(self) -> tuple[int, int]:
        """How many group × metric cells training on synthetic data moved closer to no bias, of how many."""
        better = sum(1 for g in self.fairness for m in ev.FAIRNESS_METRICS
                     if (v := improves(m, g.mean("real", m), g.mean("synthetic", m))) is not None and v > 0)
        return better, len(self.fairness) * len(ev.FAIRNESS_METRICS)


def lab_fmt(value) -> str:
    return "undefined" if value is None else f"{value:.3f}"


def percent(value) -> str:
    return "undefined" if value is None else f"{100 * value:.1f}%"
