"""How numbers read on screen, in the JSON's readings, the HTML report and the terminal: one formatter each.

Undefined values say "undefined" instead of showing 0 or NaN; p-values below 0.001 read "< 0.001"."""
from __future__ import annotations

import math


def fmt(value, digits: int = 3) -> str:
    """A number as people read it; undefined values say so instead of showing 0 or NaN."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "undefined"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def fmt_p(p) -> str:
    if p is None or not math.isfinite(p):
        return "undefined"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def fmt_interval(interval, digits: int = 3) -> str:
    if interval is None or not (math.isfinite(interval.low) and math.isfinite(interval.high)):
        return "—"
    return f"[{interval.low:.{digits}f}, {interval.high:.{digits}f}]"


def significance_words(p: float, alpha: float = 0.05) -> str:
    """Plain wording for a p-value (never a bare pass/fail)."""
    if p is None or not math.isfinite(p):
        return "cannot be tested"
    if p < alpha:
        return f"unlikely to be sampling noise (p {fmt_p(p)})"
    return f"not distinguishable from sampling noise (p {fmt_p(p)})"
