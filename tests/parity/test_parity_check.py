"""The parity and sample-size checks: one method per task they serve, under the section names the JSON has always
used, found through the task's spec rather than its name."""
from fairviz.data.tasks import BINARY, MULTICLASS, REGRESSION
from fairviz.parity import display as parity
from fairviz.sample_size import display as sample_size


def test_parity_serves_every_task_with_its_own_section():
    assert parity.CHECK.name == "parity"
    assert {task.name: parity.CHECK.section(task).name for task in (BINARY, REGRESSION, MULTICLASS)} == {
        BINARY.name: "parity", REGRESSION.name: "parity_regression", MULTICLASS.name: "parity_multiclass"}
    assert parity.CHECK.section(REGRESSION.name) is parity.REGRESSION_PARITY
    assert parity.CHECK.section(MULTICLASS.name) is parity.MULTICLASS_PARITY


def test_sample_size_serves_a_decision_and_classes():
    assert sample_size.CHECK.name == "sample_size"
    assert sample_size.CHECK.section(BINARY).name == "significance"
    assert sample_size.CHECK.section(MULTICLASS).name == "class_match"
    assert not sample_size.CHECK.serves(REGRESSION)
