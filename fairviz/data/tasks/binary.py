"""Binary classification: a two-valued label and, per model, a score read as the probability of the positive one."""
from fairviz.data.tasks.spec import MetricSpec, TaskSpec

BINARY = TaskSpec(
    name="binary", title="binary classification",
    roles=("label", "score", "groups", "positive_label", "score_scale", "score_direction", "more_scores"),
    thresholded=True, probability_scores=True,
    metrics=(MetricSpec("fpr", "false-positive rate"), MetricSpec("fnr", "false-negative rate"),
             MetricSpec("ppr", "positive prediction rate", better="zero"), MetricSpec("error_rate", "error rate")),
    error_metric="fpr",
    overview=("base rate", "mean score"), overview_labels=("Positive rate (label)", "Mean score"),
)

from fairviz.data.tasks import register  # noqa: E402

register(BINARY)
