"""The explainers and the explanation-quality metrics by key: the one list that the pipeline, the tests, the
figures, the page, the HTML report and the JSON iterate ([4] §3–4).

``METRICS`` is built like ``fairviz.core.confusion_metrics.METRICS``: each entry carries its name, the short name of
the heatmap's columns, its direction (which way is better), the property it measures, a description and the
function that computes it (``fairviz.explain.metrics``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from fairviz.explain import metrics as m

# Method keys in the paper's order ([4] §3.2), with the names the page and the JSON show.
METHODS = {"grad": "Grad", "gxi": "GxI", "ig": "IG", "igxi": "IGxI", "lime": "LIME", "shap": "SHAP"}
RANDOM = "random"                                  # U(0, 1) scores: the floor every real method should beat
METHOD_NAMES = {**METHODS, RANDOM: "Random"}


@dataclass(frozen=True)
class ExplanationMetric:
    """One explanation-quality metric. ``direction``: +1 higher is better, −1 lower is better. ``function``
    computes it: from the normalised scores alone (``needs == "scores"``), from the model's probabilities of edited
    inputs (``"model"``, one batched call for the pair ``(comprehensiveness, sufficiency)``; ``output`` picks this
    metric's element), or from the scores re-computed under an attack (``"attack"``)."""
    key: str
    label: str
    short: str
    direction: int
    property: str                      # faithfulness, complexity or robustness
    description: str
    function: Callable
    needs: str = "scores"
    output: int | None = None

    @property
    def arrow(self) -> str:
        return "↑ better" if self.direction > 0 else "↓ better"


# Directions follow [4] §4.2, except soft sufficiency, which follows its formula ([4] eq. 2), not the paper's "↓":
# a higher value means less probability is lost when only the important tokens are kept.
METRICS: dict[str, ExplanationMetric] = {x.key: x for x in [
    ExplanationMetric("aopc_comp", "AOPC comprehensiveness", "AOPC-C", 1, "faithfulness",
                      "mean drop of p(gold) when the top-q tokens are deleted, q = 0.1…1.0", m.aopc_many, "model", 0),
    ExplanationMetric("aopc_suff", "AOPC sufficiency", "AOPC-S", -1, "faithfulness",
                      "mean drop of p(gold) when only the top-q tokens are kept", m.aopc_many, "model", 1),
    ExplanationMetric("soft_comp", "Soft comprehensiveness", "Soft-C", 1, "faithfulness",
                      "drop of p(gold) when embeddings are erased in proportion to their scores", m.soft_many,
                      "model", 0),
    ExplanationMetric("soft_suff", "Soft sufficiency", "Soft-S", 1, "faithfulness",
                      "1 − drop of p(gold) when embeddings are kept in proportion to their scores", m.soft_many,
                      "model", 1),
    ExplanationMetric("gini", "Gini index", "Gini", 1, "complexity",
                      "how concentrated the scores are (0 uniform, 1 − 1/n one token)", m.gini),
    ExplanationMetric("sparsity", "Sparsity", "Sparsity", -1, "complexity",
                      f"share of tokens whose normalised score is at least {m.SPARSITY_TAU}", m.sparsity),
    ExplanationMetric("sensitivity", "Sensitivity", "Sens.", -1, "robustness",
                      "relative change of the scores under a small adversarial embedding perturbation",
                      m.sensitivity, "attack"),
]}


def metric_label(key: str) -> str:
    return METRICS[key].label


def method_label(key: str) -> str:
    return METHOD_NAMES.get(key, key)
