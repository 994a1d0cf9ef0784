"""One headline policy: the Summary's size floor (``FindingsParams.min_group_size``) decides which groups a parity
section may headline, for every task's method, so a section and the Summary never disagree about a small group."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairviz.data import ColumnMapping, build_predictions
from fairviz.findings import FindingsParams
from fairviz.parity import ClassGroup, RegressionPair
from fairviz.report import plan
from fairviz.report.options import AuditParams
from fairviz.residuals import RDFParams

SMALL = 60                       # rows of the group with the planted gap: under the default floor, over 30
CLASSES = np.array(["cat", "dog", "bird"])


def regression_pred():
    """Groups a and b alike; ``small`` (60 rows) is over-predicted by two noise SDs."""
    rng = np.random.default_rng(3)
    group = np.array(["a"] * 800 + ["b"] * 600 + ["small"] * SMALL, dtype=object)
    target = rng.normal(50, 10, group.size)
    prediction = target + rng.normal(0, 5, group.size) + 10.0 * (group == "small")
    frame = pd.DataFrame({"price": target, "y_pred": prediction, "group": group})
    return build_predictions(frame, ColumnMapping("price", "y_pred", ("group",), task="regression"))


def multiclass_pred():
    """Groups x and y alike (80% right); in ``small`` (60 rows) every cat is predicted a dog, the rest right."""
    rng = np.random.default_rng(4)
    group = np.array(["x"] * 900 + ["y"] * 700 + ["small"] * SMALL)
    labels = rng.integers(0, 3, group.size)
    predicted = np.where(rng.random(group.size) < 0.8, labels, rng.integers(0, 3, group.size))
    small = group == "small"
    predicted[small] = np.where(labels[small] == 0, 1, labels[small])
    scores = np.full((group.size, 3), 0.1)
    scores[np.arange(group.size), predicted] = 0.8
    frame = pd.DataFrame({"label": CLASSES[labels], "p_cat": scores[:, 0], "p_dog": scores[:, 1],
                          "p_bird": scores[:, 2], "group": group})
    mapping = ColumnMapping("label", "", ("group",), task="multiclass", class_scores=("p_cat", "p_dog", "p_bird"))
    return build_predictions(frame, mapping)


def _audit(pred, floor: int):
    options = AuditParams(rdf=RDFParams(resamples=400, knee_resamples=0),
                          findings=FindingsParams(min_group_size=floor),
                          sections=plan.quick_sections(pred.task)[:1])          # the parity section only
    return plan.audit(pred, options)


def _section_headline_groups(result) -> set[str]:
    """The groups the parity section's headline may name: those of the tests it flags beyond noise."""
    groups = set()
    for _, subject, _ in result.flagged():
        if isinstance(subject, RegressionPair):
            groups |= {subject.group, subject.other}
        elif isinstance(subject, ClassGroup):
            groups |= {subject.group, result.reference}
        elif hasattr(subject, "group"):                 # the worst-served group (bounded loss)
            groups.add(subject.group)
    return groups


def _summary_headline_groups(audit) -> set[str]:
    return {g for f in audit.findings.findings if f.headline for g in (f.candidate.group, f.candidate.reference)}


@pytest.mark.parametrize("make", [regression_pred, multiclass_pred], ids=["regression", "multiclass"])
def test_the_summary_floor_decides_what_the_parity_section_headlines(make):
    pred = make()
    default, lowered = _audit(pred, 100), _audit(pred, 30)
    section = plan.check("parity").section(pred.task).name
    for audit, headlines_small in ((default, False), (lowered, True)):
        result = audit.results[section]
        assert result.params.min_group_size == audit.params.findings.min_group_size
        assert ("small" in _section_headline_groups(result)) is headlines_small
        assert ("small" in _summary_headline_groups(audit)) is headlines_small
    # the same data, the same tests: only the floor moved
    assert {s.group for s in default.findings.small_groups} == {"small"}
    assert not lowered.findings.small_groups


def test_the_regression_section_warns_with_the_policy_floor():
    pred = regression_pred()
    warnings = {floor: _audit(pred, floor).results["parity_regression"].warnings for floor in (100, 30)}
    assert any("fewer than 100 rows (small)" in w for w in warnings[100])
    assert not any("fewer than" in w for w in warnings[30])
