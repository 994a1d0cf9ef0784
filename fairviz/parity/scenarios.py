"""The scenarios of [3] Tables 3.1 and 3.3 (Ricci v. DeStefano; TE and DCA ignore correct predictions, OFI does
not) and the scenario builder's arithmetic on two edited confusion matrices."""
from __future__ import annotations

from dataclasses import dataclass, field

from fairviz.core.counts import ConfusionCounts
from fairviz.parity.di import di
from fairviz.parity.ofi import marginal_benefit
from fairviz.parity.pair_metrics import pairwise


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    group_i: ConfusionCounts
    group_j: ConfusionCounts
    thesis: str                      # what the thesis prints for it


SCENARIOS: dict[str, Scenario] = {s.key: s for s in [
    Scenario("A", "Table 3.1, Scenario A: the test is used (Ricci v. DeStefano)", ConfusionCounts(1, 0, 0, 5),
             ConfusionCounts(7, 0, 1, 10), "OFI −0.06, DI 0.38; Ricci v. DeStefano: likely no bias"),
    Scenario("B", "Table 3.1, Scenario B: the test is discarded", ConfusionCounts(0, 1, 0, 5),
             ConfusionCounts(0, 7, 0, 11), "OFI 0.22, DI NaN (1 by DI's convention); Ricci: bias for i"),
    Scenario("alpha", "Table 3.1, Scenario α: B plus one correct promotion per group", ConfusionCounts(1, 1, 0, 5),
             ConfusionCounts(1, 7, 0, 11), "OFI 0.23, DI 2.71; Ricci: bias for i"),
    Scenario("C", "Table 3.3, Scenario C", ConfusionCounts(1, 2, 1, 1), ConfusionCounts(1, 1, 2, 2),
             "TE 1.5, DCA 0.83, OFI −0.37 (all: bias against i)"),
    Scenario("D", "Table 3.3, Scenario D: j gains three true negatives", ConfusionCounts(1, 2, 1, 1),
             ConfusionCounts(1, 1, 2, 4), "TE 1.5, DCA 0.83 (unchanged), OFI −0.33 (moves)"),
]}


@dataclass(frozen=True)
class ScenarioResult:
    ofi: float | None
    di: float | None
    di_convention: float | None      # with DI = 1 when neither group benefits
    te: float | None
    dca: float | None
    dppl: float | None
    benefit_i: float | None
    benefit_j: float | None
    reasons: dict = field(default_factory=dict)


def scenario(cm_i: ConfusionCounts, cm_j: ConfusionCounts) -> ScenarioResult:
    """OFI, DI, TE, DCA and DPPL of two edited confusion matrices (the scenario builder)."""
    if cm_i.n <= 0 or cm_j.n <= 0:
        raise ValueError("each group needs at least one row")
    matrices = {k: pairwise(k, ("i", "j"), [cm_i, cm_j]) for k in ("ofi", "di", "te", "dca", "dppl")}
    return ScenarioResult(
        ofi=matrices["ofi"].value("i", "j"), di=matrices["di"].value("i", "j"),
        di_convention=di(cm_i, cm_j, zero_convention=True), te=matrices["te"].value("i", "j"),
        dca=matrices["dca"].value("i", "j"), dppl=matrices["dppl"].value("i", "j"),
        benefit_i=marginal_benefit(cm_i), benefit_j=marginal_benefit(cm_j),
        reasons={k: m.reason("i", "j") for k, m in matrices.items()})
