"""Jaggedness ([3] Fig. 4.1): a metric over random subsamples of a group, per subsample size — few confusion
matrices are possible at small n, so the metric jumps between few values."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from fairviz.core.confusion_metrics import CELL_ORDER, METRICS as CM_METRICS, Cells
from fairviz.core.counts import ConfusionCounts
from fairviz.sample_size.results import LEVELS, Jaggedness, scalar


def jaggedness(counts: ConfusionCounts, metric: str, sizes: Sequence[int], draws: int = 1000,
               seed: int = 0) -> Jaggedness:
    group_n = int(counts.n)
    sizes = np.array([s for s in sorted({int(s) for s in sizes}) if 1 <= s <= group_n], dtype=int)
    if sizes.size == 0:
        raise ValueError(f"no subsample size fits in a group of {group_n} rows")
    rng = np.random.default_rng(seed)
    colours = np.array([int(getattr(counts, f)) for f in CELL_ORDER], dtype=np.int64)
    spec = CM_METRICS[metric]
    quantiles = {level: np.full(sizes.size, np.nan) for level in LEVELS}
    undefined = np.zeros(sizes.size)
    for s, n in enumerate(sizes):
        sample = Cells.from_draws(rng.multivariate_hypergeometric(colours, int(n), size=draws, method="marginals"))
        values = spec(sample)
        ok = np.isfinite(values)
        undefined[s] = 1 - ok.mean()
        if ok.sum() >= 10:
            for level, q in zip(LEVELS, np.percentile(values[ok], LEVELS)):
                quantiles[level][s] = q
    return Jaggedness(metric, sizes, quantiles, undefined, scalar(spec(Cells.of(counts))), draws, seed)


