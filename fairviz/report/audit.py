"""The headless audit: one JSON-able dict from validated predictions, the same numbers the pages show.

Each concept contributes a ``Section`` (run → result object; to_dict → its JSON keys; to_html → report parts),
listed in order in ``SECTIONS``. The CLI, the page downloads, the HTML report and the terminal summary all render
the same results, so they never disagree.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from fairviz import __version__
from fairviz.core.data import Predictions
from fairviz.core.serialize import clean
from fairviz.report import calibration, explain, parity, residuals, sample_size
from fairviz.report.html import render_html
from fairviz.report.options import AuditOptions, Section

SECTIONS: list[Section] = [residuals.SECTION, residuals.THRESHOLD_SECTION, calibration.SECTION, parity.SECTION, sample_size.SECTION, explain.SECTION]


@dataclass
class Audit:
    data: dict                                  # the JSON
    results: dict = field(default_factory=dict)  # section name → result object (for figures)
    pred: Predictions | None = None

    def to_html(self) -> str:
        sections = []
        for section in SECTIONS:
            if section.name in self.results:
                given = section.given(self.pred)
                sections += section.to_html(given, self.results[section.name], self.data)
        return render_html(self.data, sections)


def run_audit(pred: Predictions, options: AuditOptions = AuditOptions()) -> Audit:
    attribute = options.attribute or pred.attribute_names[0]
    options = replace(options, attribute=attribute)
    data = {
        "fairviz_version": __version__,
        "source": pred.source,
        "n_rows": pred.n,
        "threshold": options.threshold,
        "attribute": attribute,
        "mapping": pred.mapping.to_dict(),
        "notes": list(pred.notes),
    }
    results = {}
    for section in SECTIONS:
        given = section.given(pred)
        results[section.name] = section.run(given, options)
        merge_section(data, section.to_dict(given, results[section.name], options))
    return Audit(clean(data), results, pred)


def merge_section(data: dict, part: dict) -> None:
    """Add one section's keys to the audit: ``pairs`` entries are merged by (group_i, group_j) and ``groups``
    entries by group name, so every section extends the same pair and group records instead of replacing them."""
    for key, value in part.items():
        if key == "pairs" and "pairs" in data:
            index = {(p["group_i"], p["group_j"]): p for p in data["pairs"]}
            for entry in value:
                existing = index.get((entry["group_i"], entry["group_j"]))
                if existing is None:
                    data["pairs"].append(entry)
                else:
                    existing.update(entry)
        elif key == "groups" and isinstance(data.get("groups"), dict):
            for name, fields in value.items():
                data["groups"].setdefault(name, {}).update(fields)
        else:
            data[key] = value
