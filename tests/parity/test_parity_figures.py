"""Figures of the parity and significance pages: colour meaning, undefined cells, size caps, null plots."""
from __future__ import annotations

import numpy as np
import pytest

import fairviz.parity as P
import fairviz.sample_size as S
from fairviz.core.counts import ConfusionCounts as CM
from fairviz.parity import figures as FP
from fairviz.sample_size import figures as FS

NAMES = ("a", "b", "c")
COUNTS = [CM(5, 5, 0, 10), CM(30, 10, 12, 48), CM(3, 6, 2, 9)]


@pytest.fixture(scope="module")
def audit():
    return P.from_counts("g", NAMES, COUNTS)


def test_colour_means_favours_row_group_on_every_metric(audit):
    for key, metric in P.PAIR_METRICS.items():
        matrix = audit.matrices[key]
        z = FP.colour_values(matrix)
        for (r, c), value in np.ndenumerate(matrix.values):
            favours = metric.favours_i(value)
            if favours is None or not np.isfinite(z[r, c]):
                continue
            assert (z[r, c] > 0) == favours, (key, r, c)
    di = audit.matrices["di"]
    assert FP.colour_values(di)[1, 2] == pytest.approx(np.log(di.values[1, 2]))


def test_undefined_cells_say_undefined_and_why(audit):
    fig = FP.heatmap(audit.matrices["te"])                # 'a' has FP = 0: its row and column are undefined
    trace = fig.data[0]
    assert trace.text[0][1] == "undefined"
    assert "FP = 0" in trace.customdata[0][1]
    assert np.isnan(np.array(trace.z, dtype=float)[0, 1])
    assert fig.layout.plot_bgcolor == FP.UNDEFINED_FILL


def test_heatmap_caps_the_number_of_groups():
    rng = np.random.default_rng(0)
    names = [f"g{k:02d}" for k in range(80)]
    counts = [CM(*map(int, rng.multinomial(200, [0.3, 0.1, 0.2, 0.4]))) for _ in names]
    fig = FP.heatmap(P.from_counts("g", names, counts).matrices["ofi"])
    assert np.array(fig.data[0].z).shape == (60, 60)
    assert fig.data[0].text is None                       # too many groups to print numbers in cells
    assert "the 60 largest of 80 groups" in fig.layout.title.text


def test_benefit_figure_shows_b_and_expected_b(audit):
    fig = FP.benefit_figure(audit)
    assert list(fig.data[0].y) == pytest.approx([g.benefit_rate for g in audit.groups])
    assert list(fig.data[1].y) == pytest.approx([g.expected_benefit for g in audit.groups])


@pytest.mark.parametrize("metric, n", [("acc", 40), ("acc", 5000), ("benefit", 30), ("benefit", 20000),
                                       ("tpr", 25), ("mcc", 30), ("mcc", 400)])
def test_null_plot_data_is_small_and_sums_to_one(metric, n):
    reference = CM(3000, 1000, 2000, 4000)
    plot = S.plot_data(S.null_distribution(metric, n, reference))
    assert plot.values.size <= 150
    assert plot.mass.sum() == pytest.approx(1.0, abs=1e-6)
    assert np.all(plot.mass >= 0)


def test_null_figure_marks_the_observed_score_and_shades_the_tail():
    reference = CM(3000, 1000, 2000, 4000)
    result = S.match(CM(30, 2, 3, 5), reference, "acc")
    plot = S.plot_data(S.null_distribution("acc", result.n, reference))
    fig = FS.null_figure(plot, result, "all other rows")
    assert any(s.x0 == result.score for s in fig.layout.shapes)
    colours = np.array(fig.data[0].marker.color)
    shaded = plot.values[colours == FS.OBSERVED]
    assert shaded.size and shaded.min() >= result.score - 1e-12          # an upper-tail result: the upper tail


def test_match_map_cells():
    audit = S.match_groups("g", NAMES, COUNTS, S.MatchParams(metrics=("acc", "tpr", "ofi")))
    fig = FS.match_map(audit)
    z = np.array(fig.data[0].z, dtype=float)
    assert z.shape == (3, 3)
    for r, name in enumerate(NAMES):
        for c, metric in enumerate(("acc", "tpr", "ofi")):
            res = audit.get(name, metric)
            assert abs(z[r, c]) == pytest.approx(min(-np.log10(max(res.p_adjusted, 1e-12)), 4.0))
            assert fig.data[0].text[r][c].endswith("*") == (res.p_adjusted < 0.05)
