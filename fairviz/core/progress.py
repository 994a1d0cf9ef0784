"""Stop keeps what finished: how a long run that is stopped hands back the units (conditions, trials, examples)
it completed.

A page's Stop interrupts a run at its next progress report (Streamlit raises there). The page's progress callback
turns that interrupt into ``Stopped`` (fairviz never imports Streamlit); a compute loop that can use what it has
finished catches ``Stopped`` between two units, attaches a result built from the finished units only (marked
with a ``Completion``), and raises it on. The page keeps that partial result apart from the finished results (a
rerun with the same settings computes afresh) and shows it with its note.

``Stopped`` is a BaseException like Streamlit's own interrupts, so a loop's ``except Exception`` lets it pass.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fairviz.core.display import Text, text


class Stopped(BaseException):
    """A Stop reached a progress report. ``partial``: the result of the units that finished (None until a compute
    loop attaches one); ``interrupt``: the host's own interrupt, raised again once the partial result is kept."""

    def __init__(self, interrupt: BaseException | None = None, partial: Any = None):
        super().__init__("stopped")
        self.interrupt, self.partial = interrupt, partial

    def keeping(self, partial: Any) -> "Stopped":
        """This stop, carrying ``partial`` (raise the result: ``raise stop.keeping(result)``)."""
        self.partial = partial
        return self


@dataclass(frozen=True)
class Completion:
    """How much of a run finished: ``done`` of ``total`` units (``unit``: their plural name) before a Stop."""

    done: int
    total: int
    unit: str

    @property
    def complete(self) -> bool:
        return self.done >= self.total

    def note(self) -> Text:
        return text("Partial: {done} of {total} {unit} finished before Stop; the results below are those {unit} "
                    "only. Press Run to compute them all.", "note", done=self.done, total=self.total, unit=self.unit)

    def to_dict(self) -> dict:
        return {"complete": self.complete, "done": self.done, "total": self.total, "unit": self.unit}
