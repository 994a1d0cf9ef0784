"""The display lists of regression and multiclass calibration (issue 25): tables are the result's records, every
figure builds, HTML and terminal render, names are escaped, and a group under 100 rows never headlines."""
from __future__ import annotations

import numpy as np

from fairviz.calibration.mincer_zarnowitz_display import mean_calibration_display, mean_calibration_to_dict
from fairviz.calibration.top_label_display import top_label_calibration_display, top_label_calibration_to_dict
from fairviz.calibration.mincer_zarnowitz import regression_calibration
from fairviz.calibration.top_label_ece import MulticlassParams, multiclass_calibration
from fairviz.core.display import Figure, Metrics, Text, group, tables, walk
from fairviz.report.render import to_html, to_terminal

ODD = "<b>**odd**</b>"


def same(table, records: list[dict]) -> bool:
    """A table's rows are the records, in the columns it shows (a missing value reads NaN in the frame, None in the
    records)."""
    def plain(v):
        return None if isinstance(v, float) and v != v else v
    shown = list(table.frame.columns)
    return [{k: plain(v) for k, v in row.items()} for row in table.records()] == \
        [{k: row[k] for k in shown} for row in records]


def regression_result(small_worst: bool = False):
    rng = np.random.default_rng(0)
    n = 1200
    codes = rng.integers(0, 2, n)
    if small_worst:
        codes[:40] = 2                                   # a small group, badly miscalibrated
    y_hat = rng.normal(50, 10, n)
    y = y_hat + rng.normal(0, 5, n) + np.where(codes == 2, 30.0, 0.0) + np.where(codes == 1, 4.0, 0.0)
    q = y_hat[:, None] + 5 * np.array([-1.645, 1.645])[None, :]
    return regression_calibration(y, y_hat, codes, ["a", ODD, "tiny"][:3 if small_worst else 2], quantiles=q,
                                  quantile_levels=[0.05, 0.95])


def multiclass_result(small_worst: bool = False):
    rng = np.random.default_rng(1)
    n = 1500
    codes = rng.integers(0, 2, n)
    if small_worst:
        codes[:50] = 2
    p = np.exp(rng.normal(0, 1, (n, 3)))
    p /= p.sum(1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(p, 1)).sum(1)
    sharp = codes == 2 if small_worst else codes == 1
    p[sharp] = p[sharp] ** 4
    p /= p.sum(1, keepdims=True)
    return multiclass_calibration(y, p, ["x", ODD, "z"], codes, ["a", ODD, "tiny"][:3 if small_worst else 2],
                                  params=MulticlassParams(resamples=100))


def test_regression_display_tables_are_the_records_and_everything_renders():
    result = regression_result()
    items = mean_calibration_display(result, target="income")
    drawn = tables(items)
    assert same(drawn["regression_calibration"], result.group_rows())
    assert same(drawn["regression_bins"], result.bin_rows())
    assert same(drawn["regression_coverage"], result.coverage_rows())
    for key in ("reg_means", "reg_bins", "reg_mz", "reg_coverage"):
        group(items, key)
    for figure in (i for i in walk(items) if isinstance(i, Figure)):
        assert figure.figure().data                       # every figure builds with traces
    html = to_html(items)
    assert ODD not in html and "&lt;b&gt;**odd**&lt;/b&gt;" in html
    terminal = to_terminal(items)
    assert "Does calibration in the mean differ by group?" in terminal
    words = " ".join(i.plain() for i in walk(items) if isinstance(i, Text))
    assert "under-predicts income by" in words            # the planted +4 of the second group, in the target's units
    json = mean_calibration_to_dict(result)
    assert json["same_line"]["p"] == result.same_line.p and json["settings"]["strategy"] == "quantile"


def test_a_small_group_never_headlines_in_regression():
    result = regression_result(small_worst=True)
    assert result.group("tiny").mz.joint.statistic > result.group(ODD).mz.joint.statistic
    items = mean_calibration_display(result)
    headline = next(i for i in items if isinstance(i, Metrics))
    assert "tiny" not in " ".join(m.label.plain() for m in headline.items)
    verdicts = [i.plain() for i in walk(items) if isinstance(i, Text) and i.plain().startswith("tiny")]
    assert verdicts and "small: read with care" in verdicts[0]


def test_multiclass_display_tables_are_the_records_and_everything_renders():
    result = multiclass_result()
    items = top_label_calibration_display(result)
    drawn = tables(items)
    assert same(drawn["multiclass_calibration"], result.group_rows())
    assert same(drawn["multiclass_classes"], result.class_rows())
    assert same(drawn["multiclass_gaps"], result.gap_rows())
    for key in ("mc_top", "mc_classes", "mc_errors", "mc_bins"):
        group(items, key)
    for figure in (i for i in walk(items) if isinstance(i, Figure)):
        assert figure.figure().data
    html = to_html(items)
    assert ODD not in html
    finding = next(i for i in items if isinstance(i, Text) and i.level == "finding")
    assert ODD in finding.plain()                         # the sharpened group is flagged
    json = top_label_calibration_to_dict(result)
    assert json["classes"] == ["x", ODD, "z"] and json["classwise_available"]


def test_a_small_group_never_headlines_in_multiclass():
    result = multiclass_result(small_worst=True)
    assert result.group("tiny").top_ece == max(g.top_ece for g in result.groups)
    items = top_label_calibration_display(result)
    headline = next(i for i in items if isinstance(i, Metrics))
    labels = " ".join(m.label.plain() for m in headline.items)
    assert "Worst group" in labels and "tiny" not in labels
    finding = next(i for i in items if isinstance(i, Text) and i.level == "finding").plain()
    assert result.group("tiny").top_p_bh < 0.01
    head, _, rest = finding.partition("Also flagged")
    assert "tiny" not in head and "tiny" in rest and "read with care" in rest
