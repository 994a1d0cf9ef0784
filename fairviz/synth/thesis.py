"""The thesis's own results for Conditional HydraGAN on CASAS smart-home data (J. Briscoe, "The Art of Fairness:
Building AI Accountability Through Objective Bias Analyses", §3.5, Tables 3.4 and 3.5), shown as reference.

The CASAS data is not public, so these are printed values, not recomputed ones; the "Improves" row is recomputed
from the printed Synthetic and Real rows by ``improves`` (it matches the printed row to ±0.001, rounding).
"""
from __future__ import annotations

IDEAL = {"ofi": 0.0, "dppl": 0.0, "di": 1.0, "dca": 0.0}
TABLE_34_GROUPS = ("Ages 63–90", "Ages 90–95", "Female", "Male")
# metric → (synthetic, real, printed improves), one value per group of TABLE_34_GROUPS
TABLE_34 = {
    "ofi": ((0.002, 0.026, -0.001, 0.026), (0.004, 0.030, -0.001, 0.033), (0.002, 0.005, -0.000, 0.007)),
    "dppl": ((-0.056, 0.165, 0.012, -0.043), (-0.055, 0.170, 0.012, -0.036), (-0.002, 0.005, 0.000, -0.007)),
    "di": ((1.060, 1.778, 1.280, 1.103), (1.109, 1.891, 1.340, 1.174), (0.049, 0.113, 0.060, 0.071)),
    "dca": ((0.003, -0.100, 0.046, -0.172), (0.012, -0.151, 0.061, -0.219), (0.009, 0.051, 0.014, 0.048)),
}
# distance → (activities: synthetic, real, printed improvement %), (individuals: synthetic, real, printed %)
TABLE_35 = {
    "ks": ((0.863, 0.900, 4.11), (0.000, 0.733, 100.0)),
    "kl": ((1.822, 2.302, 20.9), (0.000, 0.252, 100.0)),
    "js": ((0.652, 0.725, 10.1), (0.000, 0.250, 100.0)),
}


def improves(metric: str, real: float | None, synthetic: float | None) -> float | None:
    """|real − ideal| − |synthetic − ideal| (ideal 0; 1 for DI): > 0 when synthetic training data moves the metric
    towards no bias."""
    if real is None or synthetic is None:
        return None
    ideal = IDEAL[metric]
    return abs(real - ideal) - abs(synthetic - ideal)


def improvement(real: float | None, synthetic: float | None) -> float | None:
    """Table 3.5's relative improvement (real − synthetic)/real; undefined when the real distance is 0."""
    if real is None or synthetic is None or real == 0:
        return None
    return (real - synthetic) / real


def table_34_rows() -> list[dict]:
    rows = []
    for metric, (synthetic, real, printed) in TABLE_34.items():
        for kind, values in (("Synthetic", synthetic), ("Real", real), ("Improves (printed)", printed)):
            rows.append({"metric": metric.upper(), "data": kind, **dict(zip(TABLE_34_GROUPS, values))})
        rows.append({"metric": metric.upper(), "data": "Improves (recomputed)",
                     **{g: round(improves(metric, r, s), 3) for g, s, r in zip(TABLE_34_GROUPS, synthetic, real)}})
    return rows


def table_35_rows() -> list[dict]:
    names = {"ks": "KS statistic", "kl": "KL divergence", "js": "JS distance"}
    return [{"metric": names[k], "activities: synthetic": a[0], "activities: real": a[1],
             "activities: improvement": f"{a[2]:.3g}%", "individuals: synthetic": i[0], "individuals: real": i[1],
             "individuals: improvement": f"{i[2]:.3g}%"} for k, (a, i) in TABLE_35.items()]
