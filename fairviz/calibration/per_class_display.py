"""Each class read one vs rest over all rows (the ``per_class`` check): its prevalence, how often it is predicted,
and the AUROC of its probability overall and per group."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairviz.calibration.performance import auroc_from_counts
from fairviz.core.checks import Section
from fairviz.core.display import Item, Table, text
from fairviz.data import Predictions

NO_SCORES = "No class probabilities were mapped, so no AUROC: a predicted class ranks nothing."
MAX_AUROC_COLUMNS = 12          # per-group AUROC columns in the per-class table (the JSON keeps every group)


@dataclass(frozen=True)
class ClassSummary:
    """One class read one vs rest over all rows: how common it is, how often it is predicted, and (with class
    probabilities) how well its probability ranks its rows, overall and per group."""
    name: str
    n_true: int
    n_predicted: int
    prevalence: float
    predicted_share: float
    auroc: float | None                     # None without class probabilities, or with one outcome only
    auroc_groups: dict                      # group → AUROC (None where undefined)

    def to_dict(self) -> dict:
        return {"n_true": self.n_true, "n_predicted": self.n_predicted, "prevalence": self.prevalence,
                "predicted_share": self.predicted_share, "auroc": self.auroc, "auroc_groups": dict(self.auroc_groups)}


def _auroc(y: np.ndarray, score: np.ndarray, w: np.ndarray) -> float | None:
    """Weighted AUROC (ties ½) of a binary ``y`` and a score, from counts per distinct score."""
    distinct, inverse = np.unique(score, return_inverse=True)
    neg = np.bincount(inverse, weights=w * (y == 0), minlength=distinct.size)
    pos = np.bincount(inverse, weights=w * (y == 1), minlength=distinct.size)
    value = float(auroc_from_counts(neg, pos)[0])
    return value if np.isfinite(value) else None


def per_class_run(pred: Predictions, options) -> list[ClassSummary]:
    view = pred.groups(options.attribute)
    w = np.ones(len(pred.y)) if pred.weight is None else np.asarray(pred.weight, dtype=float)
    total = float(w.sum())
    out = []
    for k, name in enumerate(pred.classes):
        truth = (pred.y == k).astype(np.int8)
        predicted = pred.predicted == k
        auroc, by_group = None, {}
        if pred.class_scores is not None:
            score = pred.class_scores[:, k]
            auroc = _auroc(truth, score, w)
            by_group = {g: _auroc(truth[view.codes == i], score[view.codes == i], w[view.codes == i])
                        for i, g in enumerate(view.names)}
        n_true, n_predicted = float(w @ truth), float(w[predicted].sum())
        out.append(ClassSummary(name, int(round(n_true)), int(round(n_predicted)), n_true / total,
                                n_predicted / total, auroc, by_group))
    return out


def per_class_display(pred: Predictions, result: list[ClassSummary], options) -> list[Item]:
    groups = list(result[0].auroc_groups)[:MAX_AUROC_COLUMNS] if result else []    # the largest groups first
    rows = [{"class": c.name, "n_true": c.n_true, "prevalence": c.prevalence, "n_predicted": c.n_predicted,
             "predicted_share": c.predicted_share, "auroc": c.auroc,
             **{f"auroc|{g}": c.auroc_groups[g] for g in groups}}
            for c in result]
    labels = {"class": "class", "n_true": "rows of the class", "prevalence": "prevalence",
              "n_predicted": "rows predicted", "predicted_share": "share predicted", "auroc": "AUROC (all rows)",
              **{f"auroc|{g}": f"AUROC {g}" for g in groups}}
    formats = {k: "num" for k in labels} | {"class": "text", "n_true": "int", "n_predicted": "int"}
    items: list[Item] = [Table(pd.DataFrame(rows, columns=list(labels)), "per_class", formats, labels)]
    if pred.class_scores is None:
        items.append(text(NO_SCORES, "note"))
    else:
        items.append(text("AUROC: how well a class's probability ranks that class's rows above the others' (one vs "
                          "rest; ½: no better than chance), over all rows and within each group.", "note"))
    return items


def per_class_to_dict(pred: Predictions, result: list[ClassSummary], options) -> dict:
    """``per_class`` in the sections' one shape: the method, the attribute of the per-group AUROCs, each class's
    record under ``classes``, settings (none) and notes."""
    return {"per_class": {"method": "one_vs_rest", "attribute": pred.groups(options.attribute).attribute,
                          "classes": {c.name: c.to_dict() for c in result}, "settings": {},
                          "notes": [NO_SCORES] if pred.class_scores is None else []}}


SECTION = Section("per_class", per_class_run, per_class_to_dict,
                  title="Each class, one vs rest", weighted=True, display=per_class_display)
