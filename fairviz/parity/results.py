"""The results of the group-parity audit ([3] ch. 3): per-group benefits, the pair matrices and a pair's reading."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats as sps

from fairviz.core.counts import ConfusionCounts
from fairviz.parity.di import four_fifths
from fairviz.parity.ofi import OFI_TOLERANCE, OFITest, benefit_variance, classify
from fairviz.parity.pair_metrics import PairwiseMatrix


@dataclass(frozen=True)
class ParityParams:
    threshold: float = 0.5
    benefit: str = "positive"            # which prediction is the benefit: "positive" (score ≥ τ) or "negative"
    di_variant: str = "def31"            # "def31": P̂/n (Definition 3.1); "cikm": P̂/P (the published Fig. 3.2)
    di_zero_convention: bool = False     # DI = 1 when neither group gets any benefit (Table 3.1, Scenario B)
    ofi_tolerance: float = OFI_TOLERANCE
    alpha: float = 0.05


@dataclass(frozen=True)
class PairReading:
    """The diagnostic reading of OFI with DI for one ordered pair ([3] §3.2.3 and §3.6)."""

    group_i: str
    group_j: str
    counts_i: ConfusionCounts
    counts_j: ConfusionCounts
    values: dict                 # metric key → float | None
    reasons: dict                # metric key → why undefined ("" when defined)
    benefit_i: float
    benefit_j: float
    prevalence_gap: float        # Prev_i − Prev_j: the part of DPPL from base rates
    test: OFITest
    di_rule: str                 # four_fifths(DI)
    kind: str                    # "algorithmic", "possible", "small", "systemic", "none"
    headline: str
    text: str

    @property
    def box(self) -> str:
        return {"algorithmic": "bad", "systemic": "warn", "possible": "warn", "small": "info"}.get(self.kind, "good")


@dataclass(frozen=True)
class GroupParity:
    name: str
    counts: ConfusionCounts          # in the benefit orientation
    benefit_rate: float              # b = P̂/n
    expected_benefit: float          # E[b] = P/n (prevalence)
    marginal_benefit: float          # 𝓑 = b − E[b]

    @property
    def n(self) -> int:
        return self.counts.n


@dataclass(frozen=True)
class ParityAudit:
    attribute: str
    params: ParityParams
    groups: list[GroupParity]
    matrices: dict[str, PairwiseMatrix]   # metric key → its group × group matrix
    warnings: tuple[str, ...] = ()
    pair_groups: int | None = None   # pair tables cover the pairs among this many largest groups (None: all)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.groups)

    def group(self, name: str) -> GroupParity:
        return self.groups[self.names.index(name)]

    def values(self, i: str, j: str) -> dict:
        return {k: m.value(i, j) for k, m in self.matrices.items()}

    def reasons(self, i: str, j: str) -> dict:
        """Why each metric of the pair is undefined ("" where it is defined)."""
        return {k: m.reason(i, j) for k, m in self.matrices.items()}

    def pairs(self) -> list[tuple[str, str]]:
        """Unordered pairs as (i, j) with i before j in the group order (largest first, or a range's natural order),
        among the ``pair_groups`` largest groups."""
        return [(self.names[i], self.names[j]) for i, j in combinations(self._paired(), 2)]

    def _paired(self) -> np.ndarray:
        """The positions of the groups the pair tables cover: the ``pair_groups`` largest, in the group order."""
        if self.pair_groups is None or self.pair_groups >= len(self.groups):
            return np.arange(len(self.groups))
        sizes = np.array([g.counts.n for g in self.groups])
        return np.sort(np.argsort(-sizes, kind="stable")[:self.pair_groups])

    def pair_table(self, limit: int | None = None) -> list[dict]:
        """One record per unordered pair (i before j): every metric (None when undefined), the OFI test, the
        four-fifths verdict and the reading — vectorised, so thousands of pairs cost milliseconds. With ``limit``,
        only the pairs with the largest |OFI|."""
        paired = self._paired()
        rows, cols = (paired[k] for k in np.triu_indices(paired.size, 1))
        counts = [g.counts for g in self.groups]
        var = np.array([benefit_variance(c) for c in counts])
        ofi_values = self.matrices["ofi"].values[rows, cols]
        se = np.sqrt(var[rows] + var[cols])
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(se > 0, ofi_values / se, np.where(ofi_values == 0, 0.0, np.inf))
        p_values = 2 * sps.norm.sf(np.abs(z))
        order = np.argsort(-np.abs(ofi_values), kind="stable")[:limit] if limit else np.arange(rows.size)
        out = []
        for k in order:
            i, j = rows[k], cols[k]
            values = {key: (float(m.values[i, j]) if np.isfinite(m.values[i, j]) else None)
                      for key, m in self.matrices.items()}
            rule = four_fifths(values["di"])
            out.append({"group_i": self.names[i], "group_j": self.names[j], **values,
                        "parity_undefined": {key: str(m.reasons[i, j]) for key, m in self.matrices.items()
                                             if m.reasons[i, j]} or None,
                        "ofi_p_value": float(p_values[k]),
                        "ofi_ci": [float(ofi_values[k] - 1.959963984540054 * se[k]),
                                   float(ofi_values[k] + 1.959963984540054 * se[k])],
                        "four_fifths": rule,
                        "parity_reading": classify(ofi_values[k], p_values[k], rule, self.params.ofi_tolerance,
                                                   self.params.alpha)})
        return out

    def most_disparate(self) -> tuple[str, str]:
        """The ordered pair with the largest |OFI|, oriented so that OFI > 0 (row i is the favoured group)."""
        ofi_values = np.nan_to_num(self.matrices["ofi"].values, nan=-np.inf)     # OFI(j, i) = −OFI(i, j)
        i, j = np.unravel_index(int(np.argmax(ofi_values)), ofi_values.shape)
        return self.names[i], self.names[j]


