"""Multiclass classification: a label of C ≥ 3 classes and either one probability column per class or a predicted
class (with an optional confidence)."""
from fairviz.data.tasks.spec import MetricSpec, TaskSpec

MULTICLASS = TaskSpec(
    name="multiclass", title="multiclass classification",
    roles=("label", "groups", "class_scores", "classes", "predicted", "score", "normalise"),
    per_class=True,
    metrics=(MetricSpec("error_rate", "error rate"), MetricSpec("accuracy", "accuracy", better="higher"),
             MetricSpec("macro_f1", "macro-F1", better="higher")),
    error_metric="error_rate",
    overview=("accuracy", "mean confidence"), overview_labels=("Accuracy", "Mean confidence"),
)

from fairviz.data.tasks import register  # noqa: E402

register(MULTICLASS)
