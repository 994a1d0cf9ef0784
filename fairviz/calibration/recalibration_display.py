"""What only the calibration page shows beyond the audit, as display items: recalibration on held-out rows ([2] §5)
and Pearson residuals over features ([2] §3.2–3.3)."""
from __future__ import annotations

from fairviz.calibration import readings
from fairviz.calibration.feature_residuals import FeatureResiduals, ResidualModel
from fairviz.calibration.record_table import record_table as _table
from fairviz.calibration.recalibration import RecalibrationResult
from fairviz.core.display import Item, Metric, Metrics, text
from fairviz.core.wording import fmt, significance_words

RECALIBRATION_METRICS = {"ece": "ECE", "smooth_ece": "smooth ECE", "log_loss": "log-loss", "brier": "Brier"}


def recalibration_items(result: RecalibrationResult, method: str) -> list[Item]:
    """Recalibration ([2] §5) on the evaluation rows: every method's metrics, the chosen map and its reading."""
    table = _table(result.rows(), "recalibration", {
        "method": ("method", "text"), "group": ("group", "text"), "n": ("n (evaluation)", "int"),
        "ece": ("ECE", "num4"), "smooth_ece": ("smooth ECE", "num4"), "log_loss": ("log-loss", "num4"),
        "brier": ("Brier", "num4")})
    chosen = result.method(method)
    items: list[Item] = [table]
    items += [text("{label} — {name}: {description}", "note", label=chosen.label, name=name, description=description)
              for name, description in chosen.descriptions.items()]
    items += [text("{name}: {problem}", "caveat", name=name, problem=problem)
              for name, problem in chosen.problems.items()]
    return [*items, readings.recalibration_reading(result, method)]


def feature_items(result: FeatureResiduals, shown: list[str]) -> list[Item]:
    """The reading beside the residual plot of one feature ([2] §3.2)."""
    items: list[Item] = [readings.feature_reading(result, shown)]
    if result.large:
        items.append(text("{large:,} rows have |r| > 3: positives scored very low or negatives scored very high.",
                          "note", large=result.large))
    return items


def residual_model_items(model: ResidualModel) -> list[Item]:
    """The model-based test of residuals over features ([2] §3.3): Wald tests, R², and the verdict."""
    rows = [{**row, "reading": significance_words(row["p"])} for row in model.rows()]
    table = _table(rows, "residual_model", {
        "term": ("term", "text"), "df": ("df", "int"), "statistic": ("robust Wald χ²", "num"), "p": ("p", "p"),
        "reading": ("reading", "text")})
    metrics = Metrics((
        Metric(text("In-sample R²"), fmt(model.r2, 4)),
        Metric(text("CV R², spline OLS"), fmt(model.cv_r2_linear, 4), help=f"± {model.cv_r2_linear_sd:.4f} across folds"),
        Metric(text("CV R², boosted trees"), fmt(model.cv_r2_boosting, 4),
               help=f"± {model.cv_r2_boosting_sd:.4f} across folds"),
    ))
    return [table, metrics, readings.residual_model_verdict(model), *[text("{note}", "note", note=n) for n in model.notes]]

