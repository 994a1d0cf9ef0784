"""Knee regions and the diagnostic set D* ([1] §7.1, Alg. 1): the rows within ε of their group's knees."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from fairviz.residuals.curves import SortedGroup
from fairviz.residuals.knees import Knee
from fairviz.residuals.results import REGION_EPS


def percentile_ranks(d: np.ndarray) -> np.ndarray:
    """Mid-rank percentile (rank − ½)/n of each value within its sample, stable for ties."""
    order = np.argsort(d, kind="stable")
    ranks = np.empty(d.size)
    ranks[order] = np.arange(1, d.size + 1)
    return (ranks - 0.5) / max(d.size, 1)


def knee_region(d: np.ndarray, knees: list[Knee], eps: float = REGION_EPS,
                mode: str = "percentile") -> tuple[np.ndarray, np.ndarray]:
    """Rows within ε of a knee: |u − q| ≤ ε in percentile mode, |d − r| < ε in residual mode (Alg. 1).
    Returns (mask, index of the nearest knee in ``knees`` or −1), in the order of ``d``."""
    order = np.argsort(d, kind="stable")
    mask_sorted, which_sorted = knee_region_sorted(d[order], knees, eps, mode)
    mask, which = np.empty_like(mask_sorted), np.empty_like(which_sorted)
    mask[order], which[order] = mask_sorted, which_sorted
    return mask, which


def knee_region_sorted(d_sorted: np.ndarray, knees: list[Knee], eps: float = REGION_EPS,
                       mode: str = "percentile") -> tuple[np.ndarray, np.ndarray]:
    """``knee_region`` for residuals already sorted (stably): the k-th value has percentile (k + ½)/n."""
    which = region_labels(np.arange(d_sorted.size), d_sorted.size, d_sorted, knees, eps, mode)
    return which >= 0, which


def region_labels(k: np.ndarray, n: int, d_k: np.ndarray | None, knees: list[Knee], eps: float = REGION_EPS,
                  mode: str = "percentile") -> np.ndarray:
    """The knee (index into ``knees``) whose region holds the row at sorted position k (of n) with residual d_k,
    −1 for none: within ε of the knee's percentile (percentile mode; u = (k + ½)/n) or residual (residual mode)."""
    if mode not in ("percentile", "residual"):
        raise ValueError(f"unknown knee-region mode {mode!r}")
    if not knees:
        return np.full(np.shape(k), -1)
    if mode == "percentile":
        u = (k + 0.5) / max(n, 1)
        dist = np.stack([np.abs(u - kn.percentile) for kn in knees])
        inside = dist <= eps + 1e-12
    else:
        dist = np.stack([np.abs(d_k - kn.residual) for kn in knees])
        inside = dist < eps
    mask = inside.any(0)
    return np.where(mask, np.argmin(np.where(inside, dist, np.inf), axis=0), -1)


class KneeRegions:
    """A group's knee regions over its sorted rows: which knee each sorted position belongs to (−1: none).

    Percentile mode: the label is constant between a few breakpoints (ε around each knee, midpoints between knees),
    found by evaluating the rule itself at the positions around them, so an entry of w rows is split exactly.
    Residual mode: the label depends on the residual, so a whole entry is in or out."""

    def __init__(self, sg: SortedGroup, knees: list[Knee], eps: float, mode: str):
        self.sg, self.knees, self.eps, self.mode = sg, knees, eps, mode
        n = sg.n
        if mode == "percentile" and knees and n:
            marks = [q + s * eps for q in (k.percentile for k in knees) for s in (-1, 1)]
            marks += [(a.percentile + b.percentile) / 2 for i, a in enumerate(knees) for b in knees[i + 1:]]
            guess = np.floor(np.asarray(marks) * n - 0.5).astype(np.int64)
            cand = np.unique(np.clip(np.concatenate([[0], (guess[:, None] + np.arange(-2, 4)).ravel()]), 0, n - 1))
            labels = region_labels(cand, n, None, knees, eps, mode)
            keep = np.concatenate([[True], labels[1:] != labels[:-1]])
            self.starts, self.labels = cand[keep], labels[keep]
        else:
            self.starts = self.labels = None

    def entry_labels(self) -> np.ndarray:
        return region_labels(None, self.sg.n, self.sg.d, self.knees, self.eps, self.mode)

    def counts(self) -> np.ndarray:
        """(entries, knees): rows of each sorted entry in each knee's region."""
        sg, k = self.sg, len(self.knees)
        out = np.zeros((sg.d.size, k), dtype=np.int64)
        if not k or not sg.n:
            return out
        if self.starts is None:                                   # residual mode: whole entries
            labels = self.entry_labels()
            inside = labels >= 0
            out[np.flatnonzero(inside), labels[inside]] = sg.w[inside]
            return out
        ends = np.append(self.starts[1:], sg.n)
        for j in range(k):
            seg = (ends - self.starts) * (self.labels == j)
            before = np.concatenate([[0], np.cumsum(seg)])

            def upto(x):                                         # rows of knee j among sorted positions < x
                t = np.searchsorted(self.starts, x, side="right") - 1
                return before[t] + np.minimum(x - self.starts[t], ends[t] - self.starts[t]) * (self.labels[t] == j)
            out[:, j] = upto(sg.cum) - upto(sg.cum - sg.w)
        return out

    def labels_at(self, positions: np.ndarray, entries: np.ndarray) -> np.ndarray:
        """Labels of sorted positions (``entries``: the sorted entry holding each)."""
        if not self.knees:
            return np.full(positions.size, -1)
        if self.starts is None:
            return self.entry_labels()[entries]
        return self.labels[np.searchsorted(self.starts, positions, side="right") - 1]


@dataclass(frozen=True)
class DStar:
    """What expands D* to rows on demand: the groups' sorted entries and regions, and rows per entry."""
    groups: list
    regions: list
    weight: np.ndarray | None
    entries: int

    def segments(self) -> pd.DataFrame:
        parts = []
        for sg, region in zip(self.groups, self.regions):
            if not sg.n or not region.knees:
                continue
            sides = np.array([k.side for k in region.knees], dtype=object)
            if region.starts is None:                                   # residual mode: whole entries
                labels = region.entry_labels()
                inside = np.flatnonzero(labels >= 0)
                parts.append((sg.entry[inside], np.zeros(inside.size, np.int64), sg.w[inside], sides[labels[inside]]))
                continue
            first = sg.cum - sg.w                                       # sorted position of each entry's first row
            ends = np.append(region.starts[1:], sg.n)
            for start, end, label in zip(region.starts, ends, region.labels):
                if label < 0:
                    continue
                hit = np.arange(np.searchsorted(sg.cum, start, side="right"), np.searchsorted(first, end, side="left"))
                lo, hi = np.maximum(first[hit], start), np.minimum(sg.cum[hit], end)
                parts.append((sg.entry[hit], lo - first[hit], hi - lo, np.full(hit.size, sides[label], dtype=object)))
        if not parts:
            return pd.DataFrame({"entry": [], "skip": [], "take": [], "knee": []})
        entry, skip, take, knee = (np.concatenate(p) for p in zip(*parts))
        return pd.DataFrame({"entry": entry, "skip": skip, "take": take, "knee": knee})

    @cached_property
    def per_row(self) -> tuple[np.ndarray, np.ndarray]:
        """``rows()``, built once (audits that differ only in their attached rates share it)."""
        return self.rows()

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        w = np.ones(self.entries, dtype=np.int64) if self.weight is None else self.weight
        offsets = np.cumsum(w) - w                                # first row of each entry in Predictions.rows()
        total = int(w.sum())
        mask = np.zeros(total, dtype=bool)
        nearest = np.full(total, "", dtype=object)
        for sg, region in zip(self.groups, self.regions):
            if not sg.n:
                continue
            ent = np.repeat(np.arange(sg.d.size), sg.w)
            pos = np.arange(sg.n)
            rows = offsets[sg.entry][ent] + (pos - (sg.cum - sg.w)[ent])
            labels = region.labels_at(pos, ent)
            inside = labels >= 0
            mask[rows[inside]] = True
            nearest[rows[inside]] = np.array([k.side for k in region.knees], dtype=object)[labels[inside]]
        return mask, nearest.astype(str)
