"""What two audits of the same rows from different sources must share: every number. The source's name differs, and
so do the Summary's words (a bundled file's own, "defendants who did not reoffend", against the label's values)."""
from __future__ import annotations


def shared(audit: dict, drop: tuple[str, ...] = ("source",)) -> dict:
    out = {k: v for k, v in audit.items() if k not in drop}
    if "findings" in out:
        findings = dict(out["findings"])
        for key in ("top", "candidates", "too_small"):
            findings[key] = [{k: v for k, v in row.items() if k != "sentence"} for row in findings[key]]
        out["findings"] = findings
    return out
