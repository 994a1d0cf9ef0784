"""The page view that shows a finding: which page, which groups, which of the page's metrics, at which τ.

A link to it opens that page with the view preselected (the app's address holds these keys), on the finding's own
quantity: an FPR finding (on the label, as every page names FPR) opens Group parity's FPR gap on the label, whichever
prediction is the benefit — never a Table 3.2 metric taken on the benefit, which is the same gap only up to its sign
or another rate (COMPAS: the label's FPR gap is −PP, the TPR gap on the benefit)."""
from __future__ import annotations

# finding kind → (the parity page's metric, the significance page's MATCH metric): the same quantity for any benefit
_PAGE_METRICS = {"fpr": ("fpr_gap", "fpr"), "fnr": ("fnr_gap", "fnr"), "selection_rate": ("ppr_gap", "ppr"),
                 "ofi": ("ofi", "ofi")}
_PAGES = {"residual_distance": ("residuals", "f_dist"), "calibration": ("calibration", "ece"),
          "bias_gap": ("parity", "bias_gap"), "mae_gap": ("parity", "mae_gap"), "prediction_w1": ("parity", "w1"),
          "class_tpr": ("parity", "tpr"), "class_ofi": ("parity", "ofi"), "gap_tpr": ("parity", "gap_tpr")}


def page_metric(kind: str, benefit: str, page: str) -> str | None:
    """The metric of ``page`` ("parity" or "significance") that shows a finding of ``kind`` (None: none does); the
    same for either ``benefit`` (kept for the callers that name it)."""
    metrics = _PAGE_METRICS.get(kind)
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
