"""Diversity quotas ([3] §3.5): the requested distribution of groups (a hard quota: the generator is queried
with each group's condition for exactly its share of rows) and of labels (a soft quota, through the diversity
head; uniform by default, as in the thesis)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from fairviz.data import DataError


def parse_target(text: str | None, levels: Sequence, what: str) -> dict:
    """'uniform' (or None/empty) → equal shares; 'A=0.3,B=0.7' → those shares (missing levels get 0)."""
    levels = list(levels)
    if text is None or not str(text).strip() or str(text).strip().lower() == "uniform":
        return {level: 1.0 / len(levels) for level in levels}
    by_text = {str(level): level for level in levels}
    shares = dict.fromkeys(levels, 0.0)
    for part in str(text).split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise DataError(f"The {what} target '{part.strip()}' is not NAME=SHARE (e.g. "
                            f"{levels[0]}=0.5,{levels[-1]}=0.5) or 'uniform'.")
        name, _, share = part.rpartition("=")
        name = name.strip()
        if name not in by_text:
            raise DataError(f"The {what} target names '{name}', which is not one of: "
                            f"{', '.join(map(str, levels))}.")
        try:
            value = float(share)
        except ValueError:
            raise DataError(f"The {what} share for '{name}' is not a number: '{share.strip()}'.") from None
        if not np.isfinite(value) or value < 0:
            raise DataError(f"The {what} share for '{name}' must be a finite number ≥ 0, got {share.strip()}.")
        shares[by_text[name]] = value
    return normalise(shares, what)


def normalise(shares: dict, what: str) -> dict:
    total = sum(shares.values())
    if total <= 0:
        raise DataError(f"The {what} target gives every value a share of 0.")
    return {k: v / total for k, v in shares.items()}


def allocate(rows: int, shares: dict) -> dict:
    """Exact row counts per level summing to ``rows`` (largest remainder; ties to the earlier level)."""
    if rows < 0:
        raise DataError(f"The number of rows must be ≥ 0, got {rows}.")
    keys = list(shares)
    exact = np.array([shares[k] for k in keys], dtype=float) * rows
    counts = np.floor(exact).astype(int)
    remainder = exact - counts
    order = np.argsort(-remainder, kind="stable")
    counts[order[: rows - counts.sum()]] += 1
    return {k: int(c) for k, c in zip(keys, counts)}


def format_target(shares: dict) -> str:
    return ",".join(f"{k}={v:.4g}" for k, v in shares.items())


def shares_text(levels: Sequence, values) -> str:
    """The shares of ``levels`` among ``values`` as a target ('A=0.300,B=0.700'): "as in the real data"."""
    import pandas as pd
    shares = pd.Series(values).astype(str).value_counts(normalize=True)
    return ",".join(f"{v}={shares.get(str(v), 0.0):.3f}" for v in levels)
