"""The calibration checks: which method serves each task (the methods' JSON and display lists live in their own
modules, named after what they compute).

``CHECK`` ("calibration") serves each task with its own method:
- probabilities of one positive outcome ([2]): reliability (``reliability_display``);
- a numeric target: calibration in the mean (``mincer_zarnowitz_display``);
- class probabilities: top-label and class-wise calibration (``top_label_display``).
``PER_CLASS_CHECK`` ("per_class") reads each class one vs rest (``per_class_display``). The audit settings
(``options``) are passed in, never imported: these modules sit below the report.
"""
from __future__ import annotations

from fairviz.calibration import mincer_zarnowitz_display, per_class_display, reliability_display, top_label_display
from fairviz.core.checks import Check
from fairviz.data.tasks import BINARY, MULTICLASS, REGRESSION

CHECK = Check("calibration", {BINARY.name: reliability_display.SECTION,
                              REGRESSION.name: mincer_zarnowitz_display.SECTION,
                              MULTICLASS.name: top_label_display.SECTION})
PER_CLASS_CHECK = Check("per_class", {MULTICLASS.name: per_class_display.SECTION})
