"""What the Summary reads of one attribute's audit: the typed results its checks computed, by check name, and the
settings its sentences name. The audit's JSON is an output of those results, never the Summary's input."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from fairviz.data.tasks import BINARY
from fairviz.parity.results import ParityAudit


@dataclass(frozen=True)
class AuditResults:
    """One attribute's audit as the Summary reads it. ``results``: check name ("parity", "residuals",
    "calibration", "sample_size") → the typed result its method for this task computed, for the checks that ran;
    ``skipped``: the checks the quick audit did not run (their kinds are "not tested here")."""
    attribute: str
    threshold: float
    results: Mapping[str, Any] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()
    task: str = BINARY.name
    label: str | None = "label"               # the label (target) column
    positive_label: Any = 1
    units: str | None = None                  # a numeric target's units

    def result(self, check: str, kind: type | tuple[type, ...] = object):
        """The result of ``check`` when it ran and is of ``kind`` (the method that computes what is read), else
        None."""
        found = self.results.get(check)
        return found if isinstance(found, kind) else None

    @property
    def benefit(self) -> str:
        """Which prediction is the benefit: the benefit method's setting; "positive" for a method without one."""
        parity = self.result("parity", ParityAudit)
        return parity.params.benefit if parity is not None else "positive"


def number(value) -> float | None:
    """A float, or None where it is undefined (None, NaN, ±inf): undefined is never a number to compare."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def interval(values) -> list | None:
    """An interval's two ends, each a number or None (undefined)."""
    if values is None:
        return None
    ends = values.to_list() if hasattr(values, "to_list") else list(values)
    return [number(v) for v in ends]
