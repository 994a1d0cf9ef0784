"""The page view that shows a finding: which page, which groups, which of the page's metrics, at which τ.

A link to it opens that page with the view preselected (the app's address holds these keys). The parity and
significance pages count in the benefit's orientation, so a label-oriented rate gap is a different metric there when
the benefit is the negative prediction (COMPAS: "flagged high risk without reoffending", the label FPR, is the
benefit's TPR gap: deserved the benefit and were denied it)."""
from __future__ import annotations

# finding kind → (the parity page's metric, the significance page's MATCH metric), for each benefit
_PAGE_METRICS = {
    "positive": {"fpr": ("eo_fpr_gap", "fpr"), "fnr": ("pp", "fnr"), "selection_rate": ("dppl", "ppr"),
                 "ofi": ("ofi", "ofi")},
    "negative": {"fpr": ("pp", "fnr"), "fnr": ("eo_fpr_gap", "fpr"), "selection_rate": ("dppl", "ppr"),
                 "ofi": ("ofi", "ofi")},
}
_PAGES = {"residual_distance": ("residuals", "f_dist"), "calibration": ("calibration", "ece"),
          "bias_gap": ("parity", "bias_gap"), "mae_gap": ("parity", "mae_gap"), "prediction_w1": ("parity", "w1"),
          "class_tpr": ("parity", "tpr"), "class_ofi": ("parity", "ofi"), "gap_tpr": ("parity", "gap_tpr")}


def page_metric(kind: str, benefit: str, page: str) -> str | None:
    """The metric of ``page`` ("parity" or "significance") that shows a finding of ``kind`` (None: none does)."""
    metrics = _PAGE_METRICS["negative" if benefit == "negative" else "positive"].get(kind)
    if metrics is None:
        return None
    return metrics[0] if page == "parity" else metrics[1] if page == "significance" else None


def finding_view(kind: str, attribute: str, group: str, reference: str, threshold: float,
                 benefit: str) -> tuple[tuple[str, str], ...]:
    """The view as (key, value) pairs: page, attribute, reference, group, the page's metric, τ; ``pair`` and
    ``kind`` name the comparison as the JSON always did."""
    page, metric = _PAGES.get(kind) or ("parity", page_metric(kind, benefit, "parity"))
    return (("page", page), ("attribute", attribute), ("reference", reference), ("group", group),
            ("metric", metric), ("tau", f"{threshold:.2f}"), ("pair", f"{group}\u241f{reference}"), ("kind", kind))
