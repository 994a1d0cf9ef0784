"""The Conditional HydraGAN pipeline ([3] §3.5): split → encode → train → generate under the quotas → judge.

``run(table, settings, progress)`` returns one ``SynthAudit``; the page, the CLI JSON and the terminal summary all
render it.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable

import numpy as np
import pandas as pd

from fairviz.core.progress import Completion, Stopped
from fairviz.data import INTERSECTION_SEP, DataError
from fairviz.synth import evaluate as ev
from fairviz.synth import model, quotas
from fairviz.synth.data import SynthTable
from fairviz.synth.encoding import fit_encoder
from fairviz.synth.results import DistributionTarget, GroupFairness, SynthAudit

Progress = Callable[[float, str], None]
TRAIN_SHARE = 0.8                  # of the progress bar; the rest is the evaluation


@dataclass(frozen=True)
class SynthParams:
    group_target: str = "uniform"        # 'uniform' or 'G=SHARE,…' over the condition's groups (hard quota)
    label_target: str = "uniform"        # 'uniform' or 'V=SHARE,…' over the label values (soft quota)
    rows: int | None = None              # synthetic rows; None: as many as the real training rows
    epochs: int = 30
    seed: int = 0
    trials: int = 5                      # repeated trials for Fig. 3.4's boxplots
    holdout: float = 0.3                 # share of real rows kept for testing the classifiers
    batch: int = 500
    lr: float = 1e-3
    diversity_weight: float = 10.0
    max_modes: int = 10                  # Gaussian-mixture modes per continuous column; 1 = plain standardisation
    device: str = "auto"

    def check(self) -> "SynthParams":
        problems = []
        if self.rows is not None and not 10 <= self.rows <= 1_000_000:
            problems.append(f"rows must be between 10 and 1,000,000, got {self.rows}")
        if not 1 <= self.epochs <= 2000:
            problems.append(f"epochs must be between 1 and 2,000, got {self.epochs}")
        if not 1 <= self.trials <= 50:
            problems.append(f"trials must be between 1 and 50, got {self.trials}")
        if not 1 <= self.max_modes <= 20:
            problems.append(f"max_modes must be between 1 and 20, got {self.max_modes}")
        if not 0.05 <= self.holdout <= 0.5:
            problems.append(f"holdout must be between 0.05 and 0.5, got {self.holdout}")
        if problems:
            raise DataError(problems)
        return self

    def gan(self) -> model.GANParams:
        return model.GANParams(epochs=self.epochs, batch=self.batch, lr=self.lr,
                                 diversity_weight=self.diversity_weight, seed=self.seed, device=self.device)

    @staticmethod
    def from_dict(values: dict) -> "SynthParams":
        known = {f.name for f in fields(SynthParams)}
        return SynthParams(**{k: v for k, v in values.items() if k in known})


def split(n: int, holdout: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng(seed).permutation(n)
    k = int(round(n * holdout))
    return np.sort(order[k:]), np.sort(order[:k])


def run(table: SynthTable, settings: SynthParams = SynthParams(), progress: Progress | None = None) -> SynthAudit:
    settings = settings.check()
    report = progress or (lambda fraction, message: None)
    cond_all = table.condition
    conditions = sorted(set(cond_all), key=str)
    label_levels = sorted(table.features[table.label].unique().tolist(), key=str)
    group_target = quotas.parse_target(settings.group_target, conditions, "group")
    label_target = quotas.parse_target(settings.label_target, label_levels, "label")
    train_idx, test_idx = split(table.n, settings.holdout, settings.seed)
    train = table.features.iloc[train_idx].reset_index(drop=True)
    holdout = table.features.iloc[test_idx].reset_index(drop=True)
    if train[table.label].nunique() < 2 or holdout[table.label].nunique() < 2:
        raise DataError("After the hold-out split one side has a single label value; add rows or change the seed.")
    encoder = fit_encoder(train, categorical={table.label}, seed=settings.seed, max_modes=settings.max_modes,
                          progress=lambda f, m: report(0.05 * f, m))
    code_of = {c: i for i, c in enumerate(conditions)}
    train_codes = np.array([code_of[c] for c in cond_all[train_idx]])
    span = encoder.category_span(table.label)
    levels = encoder.column(table.label).levels
    heads = [model.realism_head(1.0),
             model.label_diversity_head(span, [label_target[v] for v in levels], settings.diversity_weight)]
    trained = model.train(encoder.encode(train), train_codes, encoder, conditions, heads, settings.gan(),
                          progress=lambda f, m: report(0.05 + (TRAIN_SHARE - 0.05) * f, m))
    rows = settings.rows or len(train)
    counts = quotas.allocate(rows, group_target)
    group_values = {c: table.groups.iloc[np.flatnonzero(cond_all == c)[0]].tolist() for c in conditions}

    def sample(t: int) -> pd.DataFrame:
        return generate(trained, table, counts, code_of, group_values, settings.seed + 1000 + t)

    share = lambda t: TRAIN_SHARE + (1 - TRAIN_SHARE) * t / (settings.trials + 1)   # noqa: E731
    report(share(0), "generating trial 1")
    first = sample(0)
    judge = Judge.of(table, train, table.groups.iloc[train_idx].reset_index(drop=True), cond_all[train_idx], holdout,
                     table.groups.iloc[test_idx], conditions, group_target, label_levels, label_target, settings)
    report(share(0.25), "realism and privacy checks")
    checks = judge.checks(first)
    trials = []

    def audit() -> SynthAudit:
        done = len(trials)
        completion = None if done == settings.trials else Completion(done, settings.trials, "trials")
        return SynthAudit(
            source=table.source, label=table.label, positive=table.positive, group_columns=table.group_columns,
            condition_name=table.condition_name, settings=settings, counts=counts, **checks,
            **judge.fairness(trials), history=trained.history, heads=trained.heads, device=trained.device,
            seconds=trained.seconds, n_train=len(train), n_holdout=len(holdout), synthetic=first, notes=table.notes,
            completion=completion)

    for t in range(settings.trials):          # a trial: a fresh synthetic sample, classifiers trained on it
        try:
            report(share(t + 0.5), f"generating and judging trial {t + 1}")
            trials.append(judge.trial(first if t == 0 else sample(t), settings.seed + t,
                                      lambda m, t=t: report(share(t + 0.75), m)))
        except Stopped as stop:             # the trials that finished are kept
            raise stop.keeping(audit() if trials else None)
    try:
        report(1.0, "done")
    except Stopped as stop:                 # a Stop on the last report: everything finished, keep it all
        raise stop.keeping(audit())
    return audit()


def generate(trained: model.TrainedGAN, table: SynthTable, counts: dict, code_of: dict, group_values: dict,
             seed: int) -> pd.DataFrame:
    """Exactly ``counts[g]`` rows for each group g (the hard quota), shuffled; group columns first."""
    codes = np.concatenate([np.full(k, code_of[g], dtype=np.int64) for g, k in counts.items()]) if counts else \
        np.zeros(0, np.int64)
    rows = trained.encoder.decode(model.sample(trained, codes, seed))
    names = list(code_of)
    groups = pd.DataFrame([group_values[names[c]] for c in codes], columns=list(table.group_columns))
    out = pd.concat([groups, rows], axis=1)
    order = np.random.default_rng(seed).permutation(len(out))
    return out.iloc[order].reset_index(drop=True)


def _cells(condition: np.ndarray, label: pd.Series) -> np.ndarray:
    return np.asarray(condition, dtype=object) + "|" + label.astype(str).to_numpy(dtype=object)


@dataclass(frozen=True)
class Judge:
    """How the thesis judges synthetic rows (§3.5): against the training shares and quotas, by realism and
    privacy (on the first sample), and by the fairness of classifiers trained on each trial's sample and tested on
    the real hold-out."""
    table: SynthTable
    train: pd.DataFrame
    train_groups: pd.DataFrame
    train_cond: np.ndarray
    holdout: pd.DataFrame
    holdout_groups: pd.DataFrame
    conditions: list
    group_target: dict
    label_levels: list
    label_target: dict
    settings: SynthParams
    x_columns: list
    design: ev.Design
    members: dict
    train_x: np.ndarray
    test_x: np.ndarray

    @classmethod
    def of(cls, table, train, train_groups, train_cond, holdout, holdout_groups, conditions, group_target,
           label_levels, label_target, settings) -> "Judge":
        x_columns = [c for c in train.columns if c != table.label]
        holdout_groups = holdout_groups.reset_index(drop=True)
        members = {}
        for col in table.group_columns:
            for value in sorted(holdout_groups[col].unique(), key=str):
                members[f"{col}={value}"] = (holdout_groups[col] == value).to_numpy()
        design = ev.Design.fit(train[x_columns])
        return cls(table, train, train_groups, train_cond, holdout, holdout_groups, conditions, group_target,
                   label_levels, label_target, settings, x_columns, design, members,
                   design.matrix(train[x_columns]), design.matrix(holdout[x_columns]))

    def checks(self, first: pd.DataFrame) -> dict:
        """Shares against the targets, marginals, realism and privacy of the first sample."""
        table, train, settings = self.table, self.train, self.settings
        synth_cond = first[table.group_columns[0]].astype(str).to_numpy(dtype=object)
        for col in table.group_columns[1:]:
            synth_cond = synth_cond + INTERSECTION_SEP + first[col].astype(str).to_numpy(dtype=object)
        levels, conditions = self.label_levels, self.conditions
        distribution = {
            "label": DistributionTarget.of(levels, [self.label_target[v] for v in levels],
                                           ev.shares(train[table.label].to_numpy(), levels),
                                           ev.shares(first[table.label].to_numpy(), levels)),
            "group": DistributionTarget.of(conditions, [self.group_target[c] for c in conditions],
                                           ev.shares(self.train_cond, conditions), ev.shares(synth_cond, conditions)),
        }
        full_columns = list(table.group_columns) + list(train.columns)
        real_full = pd.concat([self.train_groups.reset_index(drop=True), train], axis=1)[full_columns]
        hold_full = pd.concat([self.holdout_groups, self.holdout], axis=1)[full_columns]
        full_design = ev.Design.fit(real_full)
        real_m, synth_m = full_design.matrix(real_full), full_design.matrix(first[full_columns])
        return {"distribution": distribution,
                "marginals": tuple(ev.marginal_distances(real_full, first[full_columns])),
                "realism_auc": ev.realism_auc(real_m, synth_m, settings.seed, _cells(self.train_cond,
                                              train[table.label]), _cells(synth_cond, first[table.label])),
                "privacy": ev.privacy(real_m, synth_m, full_design.matrix(hold_full), settings.seed)}

    def trial(self, sample: pd.DataFrame, seed: int, tick):
        """Classifiers trained on the real and on the synthetic rows, tested on the real hold-out."""
        table = self.table
        return ev.fairness_trial(self.train_x, (self.train[table.label] == table.positive).to_numpy(),
                                 self.design.matrix(sample[self.x_columns]),
                                 (sample[table.label] == table.positive).to_numpy(), self.test_x,
                                 (self.holdout[table.label] == table.positive).to_numpy(), self.members, seed,
                                 tick=tick)

    def fairness(self, trials: list) -> dict:
        """Per group and overall accuracy, means over the trials given."""
        return {"fairness": tuple(GroupFairness.of(name, int(mask.sum()), trials)
                                  for name, mask in self.members.items()),
                "accuracy": {"real": float(np.mean([t.accuracy_real for t in trials])),
                             "synthetic": float(np.mean([t.accuracy_synthetic for t in trials]))}}
