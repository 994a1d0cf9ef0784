"""What the findings layer produces: candidate statements, the ones that pass, and the Summary."""
from __future__ import annotations

from dataclasses import dataclass, field

from fairviz.core.focus import MIN_GROUP_SIZE
from fairviz.data.tasks import BINARY, MULTICLASS, REGRESSION

# A candidate's kind: which comparison it reads. Materiality thresholds are per kind (same units as the effect).
BINARY_KINDS = ("fpr", "fnr", "selection_rate", "ofi", "residual_distance", "calibration")
# Regression effects are in units of the reference group's MAE (a target in dollars or years has no universal
# threshold; a gap of a tenth of the typical error is); multiclass effects are rates, like the binary ones.
REGRESSION_KINDS = ("bias_gap", "mae_gap", "prediction_w1")
MULTICLASS_KINDS = ("class_tpr", "class_ofi", "gap_tpr")
KINDS = BINARY_KINDS + REGRESSION_KINDS + MULTICLASS_KINDS
TASK_KINDS = {BINARY.name: BINARY_KINDS, REGRESSION.name: (*REGRESSION_KINDS, "residual_distance"),
              MULTICLASS.name: MULTICLASS_KINDS}
ALL_GROUPS = "all groups"         # the "group" of a candidate about every group at once (GAP over classes)
KIND_TITLES = {
    "fpr": "false positive rate gap",
    "fnr": "false negative rate gap",
    "selection_rate": "selection rate gap",
    "ofi": "Objective Fairness Index",
    "residual_distance": "residual distribution distance (F_dist)",
    "calibration": "calibration error gap (ECE)",
    "bias_gap": "bias gap (÷ the reference's MAE)",
    "mae_gap": "MAE gap (÷ the reference's MAE)",
    "prediction_w1": "prediction distance W1 (÷ the reference's MAE)",
    "class_tpr": "true positive rate gap per class",
    "class_ofi": "Objective Fairness Index per class",
    "gap_tpr": "GAP(TPR) over classes",
}


@dataclass(frozen=True)
class FindingsParams:
    """The policy that makes a candidate a finding: significant after Benjamini–Hochberg over every candidate at
    ``alpha``, at least ``materiality[kind]`` in size, and about groups of at least ``min_group_size`` rows."""
    alpha: float = 0.05
    min_group_size: int = MIN_GROUP_SIZE    # every section's headline floor too (passed to each check)
    max_findings: int = 5
    reference: str | None = None          # None: the largest group
    materiality: tuple[tuple[str, float], ...] = (
        ("fpr", 0.05), ("fnr", 0.05), ("selection_rate", 0.05), ("ofi", 0.05),
        ("residual_distance", 0.05), ("calibration", 0.05),
        ("bias_gap", 0.10), ("mae_gap", 0.10), ("prediction_w1", 0.10),
        ("class_tpr", 0.05), ("class_ofi", 0.05), ("gap_tpr", 0.05))

    def threshold(self, kind: str) -> float:
        return dict(self.materiality)[kind]

    def with_materiality(self, **thresholds: float) -> "FindingsParams":
        unknown = set(thresholds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown finding kind(s): {', '.join(sorted(unknown))} (known: {', '.join(KINDS)})")
        merged = dict(self.materiality) | {k: float(v) for k, v in thresholds.items()}
        return FindingsParams(self.alpha, self.min_group_size, self.max_findings, self.reference,
                              tuple((k, merged[k]) for k in KINDS))


@dataclass(frozen=True)
class OutcomeWords:
    """How the label and the decision read for people, so a sentence names real values, not "Y = 1"."""
    unit: str = "rows"                        # "defendants", "applicants"
    label_positive: str = "with label = 1"    # a relative clause after the unit
    label_negative: str = "with label = 0"
    predicted_positive: str = "predicted positive"
    predicted_negative: str = "predicted negative"


@dataclass(frozen=True)
class Candidate:
    """One comparison of ``group`` with ``reference``: effect = group minus reference (rates, OFI, ECE) or a
    distance (F_dist, ≥ 0). ``group_value``/``reference_value`` are the two rates when the effect is a gap."""
    kind: str
    attribute: str
    group: str
    reference: str
    effect: float
    ci: tuple[float, float] | None
    p_value: float | None
    n_group: int
    n_reference: int
    group_value: float | None = None
    reference_value: float | None = None
    test: str = ""
    view: tuple[tuple[str, str], ...] = ()    # the page view that shows it (page, pair, metric, …)
    class_name: str | None = None             # multiclass: the class the comparison is about
    scale: float | None = None                # regression: what the effect was divided by (the reference's MAE)


@dataclass(frozen=True)
class Finding:
    candidate: Candidate
    p_adjusted: float | None
    significant: bool
    material: bool
    large_enough: bool
    strength: float                           # |effect| / materiality threshold: the ranking key

    @property
    def headline(self) -> bool:
        return self.significant and self.material and self.large_enough


@dataclass(frozen=True)
class SmallGroup:
    """A group under the size floor: never headlined; MATCH says whether its benefit rate is distinguishable from
    the rest at its size."""
    attribute: str
    group: str
    n: int
    benefit_rate: float | None
    match_p_adjusted: float | None
    verdict: str | None = None                # regression and multiclass: what can be said of it, in words


class JudgedFindings:
    """What a Summary reads from its judged findings (``findings``, ``params``, ``not_run``): one attribute's or
    every attribute's."""

    @property
    def top(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.headline)[: self.params.max_findings]

    @property
    def material_count(self) -> int:
        return sum(f.headline for f in self.findings)

    def unremarkable_kinds(self) -> tuple[str, ...]:
        """Kinds that were tested on large groups and gave no headline finding."""
        tested = {f.candidate.kind for f in self.findings if f.large_enough and f.candidate.p_value is not None}
        flagged = {f.candidate.kind for f in self.findings if f.headline}
        return tuple(k for k in KINDS if k in tested and k not in flagged)

    def untested_kinds(self) -> tuple[str, ...]:
        """Kinds compared without a test (their intervals need resampling, which this audit skipped), or not at all
        (their section was skipped)."""
        present = {f.candidate.kind for f in self.findings} | set(self.not_run)
        tested = {f.candidate.kind for f in self.findings if f.candidate.p_value is not None}
        return tuple(k for k in KINDS if k in present and k not in tested)


@dataclass(frozen=True)
class FindingsAudit(JudgedFindings):
    attribute: str
    reference: str
    threshold: float
    benefit: str
    params: FindingsParams
    words: OutcomeWords
    findings: tuple[Finding, ...]             # every candidate, ranked: headline ones first by strength
    small_groups: tuple[SmallGroup, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    not_run: tuple[str, ...] = ()             # kinds whose section this audit did not run (the quick audit)
    task: str = BINARY.name
    target: str | None = None                 # the label (target) column, as the sentences name it
    units: str | None = None                  # regression: the target's units


@dataclass(frozen=True)
class SliceFinding:
    """A slice (values of up to k attributes combined) whose metric differs from the rest of the data after the
    slice search's own correction (``fairviz.slices``): a finding of its own kind, after the attributes' ones."""
    slice: str
    n: float
    metric: str                               # the metric's title ("false positive rate")
    value: float
    rest: float
    difference: float
    ci: tuple[float, float] | None
    p_adjusted: float
    correction: str                           # the correction's name, as the sentence says it


@dataclass(frozen=True)
class AttributesSummary(JudgedFindings):
    """The Summary across every audited attribute: their candidates are ONE family for Benjamini–Hochberg (a gap
    found in any attribute counts against the same false-discovery budget), headline findings are ranked across
    attributes by strength, and groups under the size floor never headline. ``references``: each attribute's
    reference group; ``failed``: attributes that could not be audited, with the reason; ``slices``: the top
    significant slices, when a slice search ran."""
    attributes: tuple[str, ...]
    references: tuple[tuple[str, str], ...]
    threshold: float
    benefit: str
    params: FindingsParams
    words: OutcomeWords
    findings: tuple[Finding, ...]
    small_groups: tuple[SmallGroup, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    not_run: tuple[str, ...] = ()
    task: str = BINARY.name
    target: str | None = None
    units: str | None = None
    slices: tuple[SliceFinding, ...] = ()

    @property
    def attribute(self) -> str:
        return ", ".join(self.attributes)

