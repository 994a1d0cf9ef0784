"""Regression: a numeric target and, per model, a numeric prediction ŷ (residual D = ŷ − y in the target's units)."""
from fairviz.data.tasks.spec import MetricSpec, TaskSpec

REGRESSION = TaskSpec(
    name="regression", title="regression",
    roles=("label", "score", "groups", "more_scores", "quantiles"),
    numeric_target=True,
    metrics=(MetricSpec("mean_residual", "mean residual (bias)", unit="target", better="zero"),
             MetricSpec("mae", "mean absolute error", unit="target"),
             MetricSpec("rmse", "root mean squared error", unit="target")),
    error_metric="mean_residual",
    overview=("mean target", "mean prediction"), overview_labels=("Mean target", "Mean prediction"),
)

from fairviz.data.tasks import register  # noqa: E402

register(REGRESSION)
