"""What every audit section takes (``AuditParams``); what a section is lives in ``fairviz.core.checks``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from fairviz.calibration import CalibrationParams
from fairviz.core.checks import Section  # noqa: F401  (the sections' type, re-exported)
from fairviz.core.focus import Focus
from fairviz.findings import FindingsParams, OutcomeWords
from fairviz.residuals import RDFParams
from fairviz.sample_size.analysis import MatchParams


@dataclass(frozen=True)
class AuditParams:
    attribute: str | None = None
    threshold: float = 0.5
    rdf: RDFParams = field(default_factory=RDFParams)
    calibration: CalibrationParams = field(default_factory=CalibrationParams)
    progress: Callable[[float, str], None] | None = None
    benefit: str = "positive"            # which prediction is the benefit for parity/MATCH ("negative": COMPAS-style)
    match: MatchParams = field(default_factory=MatchParams)
    cps_lambda: float = 5.0
    findings: FindingsParams = field(default_factory=FindingsParams)   # the Summary's policy (reference group too)
    words: OutcomeWords | None = None    # how label and decision read for people (None: from the mapping)
    explain: Any = None          # fairviz.explain.display.ExplainAuditParams: adds the explanation-disparity section
    focus: str | None = None     # the group the readings compare with the reference (the Summary's top finding)
    sections: tuple[str, ...] | None = None   # run only these sections (the Summary's quick audit); None: all
    compare: bool = False        # with several models: compare the first with each other (``comparison`` in the JSON)
    units: str | None = None     # regression: the target's units, stated in the sentences and the JSON

    def focus_of(self) -> Focus:
        """Which pair the sections' readings name first: the reference against ``focus``, never a group under the
        Summary's size floor."""
        return Focus(self.findings.reference, self.findings.min_group_size, self.focus)
