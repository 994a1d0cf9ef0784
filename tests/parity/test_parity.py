"""OFI, DI and the Table 3.2 metrics: the thesis's worked tables, the COMPAS reproductions, properties, fairlearn."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fairviz.parity as P
from fairviz.data.groups import group_counts
from fairviz.core.confusion_metrics import flip
from fairviz.core.counts import ConfusionCounts as CM
from fairviz.data import ColumnMapping, build_predictions
from fairviz.data.samples import load_sample

# ----------------------------------------------------------------------------------------------- Tables 3.1 and 3.3


def test_table_3_1_scenarios_exactly():
    a = P.SCENARIOS["A"]
    assert P.ofi(a.group_i, a.group_j) == pytest.approx(-1 / 18, abs=1e-12)
    assert round(P.ofi(a.group_i, a.group_j), 2) == -0.06
    assert P.di(a.group_i, a.group_j) == pytest.approx(0.375, abs=1e-12)
    b = P.SCENARIOS["B"]
    assert P.ofi(b.group_i, b.group_j) == pytest.approx(2 / 9, abs=1e-12)
    assert P.di(b.group_i, b.group_j) is None                      # 0/0: undefined, never 0
    assert P.di(b.group_i, b.group_j, zero_convention=True) == 1.0
    alpha = P.SCENARIOS["alpha"]
    assert P.ofi(alpha.group_i, alpha.group_j) == pytest.approx(30 / 133, abs=1e-12)
    assert P.di(alpha.group_i, alpha.group_j) == pytest.approx(19 / 7, abs=1e-12)
    # the benefits printed in the table
    assert P.marginal_benefit(a.group_j) == pytest.approx(1 / 18)
    assert P.marginal_benefit(b.group_j) == pytest.approx(-7 / 18)
    assert P.marginal_benefit(alpha.group_i) == pytest.approx(-1 / 7)


def test_table_3_3_te_and_dca_blind_to_correct_predictions():
    c, d = P.SCENARIOS["C"], P.SCENARIOS["D"]
    rc, rd = P.scenario(c.group_i, c.group_j), P.scenario(d.group_i, d.group_j)
    assert rc.te == pytest.approx(1.5) and rd.te == pytest.approx(1.5)
    assert rc.dca == pytest.approx(5 / 6) and rd.dca == pytest.approx(5 / 6)
    assert rc.ofi == pytest.approx(-11 / 30, abs=1e-12)
    assert rd.ofi == pytest.approx(-0.325, abs=1e-12)
    assert rc.ofi != rd.ofi
    # every metric reads "bias against i" here: TE > 0 and DCA > 0 (orientation −1), OFI < 0 (orientation +1)
    for key, value in (("te", rc.te), ("dca", rc.dca), ("ofi", rc.ofi)):
        assert P.PAIR_METRICS[key].favours_i(value) is False


def test_scenario_rejects_an_empty_group():
    with pytest.raises(ValueError):
        P.scenario(CM(0, 0, 0, 0), CM(1, 0, 0, 1))


# ------------------------------------------------------------------------------------------ COMPAS (thesis Fig. 3.2)

# Gursoy & Kakadiaris Table 8B percentages, positive = recidivism, laid out (TP, FN, FP, TN); flipped before use.
FIG32 = {"AfAm": (13, 8, 24, 55), "Asian": (12, 0, 4, 85), "Cauc": (4, 8, 14, 75), "Hisp": (3, 7, 17, 73),
         "NatAm": (14, 0, 14, 71), "Other": (7, 7, 13, 74)}
FIG32_SIZES = {"AfAm": 1918, "Asian": 26, "Cauc": 1459, "Hisp": 355, "NatAm": 7, "Other": 255}


def _fig32(scale_by_size: bool = False, variant: str = "def31") -> P.ParityAudit:
    counts = []
    for name, cells in FIG32.items():
        factor = FIG32_SIZES[name] / 100 if scale_by_size else 1
        counts.append(flip(CM(*(c * factor for c in cells))))
    return P.from_counts("race", list(FIG32), counts, P.ParityParams(di_variant=variant))


def test_thesis_figure_3_2_reproduction():
    audit, cikm = _fig32(), _fig32(variant="cikm")
    ofi, di31, dic = audit.matrices["ofi"], audit.matrices["di"], cikm.matrices["di"]
    assert ofi.value("AfAm", "Cauc") == pytest.approx(-254 / 2525, abs=1e-12)
    assert ofi.value("AfAm", "Asian") == pytest.approx(-0.1204, abs=1e-4)
    assert ofi.value("AfAm", "NatAm") == pytest.approx(-0.0186, abs=1e-4)
    assert ofi.value("Cauc", "Other") == 0.0                       # exactly (the figure shows a float32 −7.5e−9)
    assert dic.value("AfAm", "Asian") == pytest.approx(0.8350, abs=1e-4)
    assert di31.value("AfAm", "Cauc") == pytest.approx(0.7666, abs=1e-4)
    assert audit.matrices["pp"].value("AfAm", "Asian") == pytest.approx(-0.2589, abs=1e-4)
    te = audit.matrices["te"]
    assert te.value("AfAm", "Cauc") == pytest.approx(1.25, abs=1e-12)
    for other in FIG32:
        for undefined in ("Asian", "NatAm"):
            assert te.value(undefined, other) is None and te.value(other, undefined) is None
            assert "FP = 0" in te.reason(undefined, other)


def test_fig32_full_tables():
    expected_ofi = [[0, -0.1204, -0.1006, -0.0600, -0.0186, -0.1006],
                    [0.1204, 0, 0.0198, 0.0604, 0.1018, 0.0198],
                    [0.1006, -0.0198, 0, 0.0406, 0.0820, 0],
                    [0.0600, -0.0604, -0.0406, 0, 0.0414, -0.0406],
                    [0.0186, -0.1018, -0.0820, -0.0414, 0, -0.0820],
                    [0.1006, -0.0198, 0, 0.0406, 0.0820, 0]]
    expected_cikm_row = [1.0000, 0.8350, 0.8551, 0.8972, 0.9547, 0.8565]
    assert np.allclose(_fig32().matrices["ofi"].values, expected_ofi, atol=5e-5)
    assert np.allclose(_fig32(variant="cikm").matrices["di"].values[0], expected_cikm_row, atol=5e-5)


def test_ofi_does_not_depend_on_group_sizes():
    assert np.allclose(_fig32().matrices["ofi"].values, _fig32(scale_by_size=True).matrices["ofi"].values,
                       atol=1e-12)


# ------------------------------------------------------------------------------------------ ProPublica truth tables

BLACK, WHITE = CM(990, 805, 532, 1369), CM(1139, 349, 461, 505)      # flipped: positive = no recidivism, Low risk


def test_propublica_black_white_flipped():
    assert P.marginal_benefit(BLACK) == pytest.approx(-13 / 176, abs=1e-12)
    assert P.marginal_benefit(WHITE) == pytest.approx(56 / 1227, abs=1e-12)
    assert P.ofi(BLACK, WHITE) == pytest.approx(-25807 / 215952, abs=1e-12)
    assert P.di(BLACK, WHITE) == pytest.approx(0.631593, abs=1e-6)
    assert P.four_fifths(P.di(BLACK, WHITE)) == "for j"
    prev_gap = BLACK.positives / BLACK.n - WHITE.positives / WHITE.n
    assert P.ofi(BLACK, WHITE) == pytest.approx(P.dppl(BLACK, WHITE) - prev_gap, abs=1e-12)
    # the raw orientation (positive = recidivism) negates OFI and changes DI non-trivially
    assert P.ofi(flip(BLACK), flip(WHITE)) == pytest.approx(0.119503, abs=1e-6)
    assert P.di(flip(BLACK), flip(WHITE)) == pytest.approx(1.690224, abs=1e-6)


def test_reading_of_black_white_is_algorithmic_bias_for_white():
    reading = P.read_pair("Black", "White", BLACK, WHITE)
    assert reading.kind == "algorithmic" and reading.box == "bad"
    assert "in favour of White" in reading.headline
    assert reading.test.p_value < 1e-6
    assert reading.test.ci[0] < reading.values["ofi"] < reading.test.ci[1]
    assert "four-fifths rule flags bias for White" in reading.text
    assert "-0.121 from different base rates" in reading.text


def test_reading_kinds():
    # a perfect model on groups with different base rates: OFI = 0 exactly, DI = 2.5 → disparity outside the model
    systemic = P.read_pair("i", "j", CM(50, 0, 0, 50), CM(20, 0, 0, 80))
    assert systemic.values["ofi"] == 0 and systemic.kind == "systemic" and systemic.di_rule == "for i"
    assert P.read_pair("i", "j", CM(30, 10, 10, 50), CM(30, 10, 10, 50)).kind == "none"
    # a big OFI in tiny groups cannot be told from noise
    possible = P.read_pair("i", "j", CM(1, 0, 1, 1), CM(1, 1, 0, 1))
    assert abs(possible.values["ofi"]) > 0.5 and possible.kind == "possible"
    # a real but tiny OFI in huge groups
    small = P.read_pair("i", "j", CM(300_000, 100_000, 110_000, 490_000), CM(300_000, 100_000, 100_000, 500_000))
    assert abs(small.values["ofi"]) < 0.02 and small.kind == "small"


def test_four_fifths_boundaries():
    assert P.four_fifths(0.8) == "none" and P.four_fifths(1.25) == "none"
    assert P.four_fifths(0.79) == "for j" and P.four_fifths(1.26) == "for i"
    assert P.four_fifths(None) == "undefined"


# ----------------------------------------------------------------------------------------------- OFI properties

def _random_counts(rng, size):
    n = int(rng.integers(1, 201))
    return CM(*map(int, rng.multinomial(n, rng.dirichlet(np.ones(4)))))


def test_ofi_properties_on_random_matrices():
    rng = np.random.default_rng(42)
    for _ in range(400):
        a, b = _random_counts(rng, 4), _random_counts(rng, 4)
        value = P.ofi(a, b)
        assert value is not None and np.isfinite(value)                 # defined everywhere (ALL)
        assert -2 <= value <= 2                                          # bounded (BND)
        assert P.ofi(b, a) == pytest.approx(-value, abs=1e-12)           # antisymmetric (SYM, DIR)
        assert P.ofi(flip(a), flip(b)) == pytest.approx(-value, abs=1e-12)
        prev_gap = a.positives / a.n - b.positives / b.n
        assert value == pytest.approx(P.dppl(a, b) - prev_gap, abs=1e-12)
        with_tn = CM(a.tp, a.fn, a.fp, a.tn + 1)                        # a correct prediction moves 𝓑 toward 0
        assert abs(P.marginal_benefit(with_tn)) <= abs(P.marginal_benefit(a)) + 1e-15
        d = P.di(a, b)
        if d is not None and d > 0:
            assert P.di(b, a) == pytest.approx(1 / d)


def test_ofi_extremes():
    assert P.ofi(CM(0, 0, 7, 0), CM(0, 3, 0, 0)) == 2.0
    assert P.ofi(CM(0, 3, 0, 0), CM(0, 0, 7, 0)) == -2.0


# ----------------------------------------------------------------------------------------------- the COMPAS sample

SPEC_OFI_7214 = {   # [3] §3.4 (COMPAS): OFI(i, j) on the 7,214-row counts, flipped
    ("African-American", "Asian"): -0.1051, ("African-American", "Caucasian"): -0.1195,
    ("African-American", "Hispanic"): -0.1398, ("African-American", "Native American"): 0.0372,
    ("African-American", "Other"): -0.2171, ("Asian", "Caucasian"): -0.0144, ("Asian", "Hispanic"): -0.0347,
    ("Asian", "Native American"): 0.1424, ("Asian", "Other"): -0.1120, ("Caucasian", "Hispanic"): -0.0203,
    ("Caucasian", "Native American"): 0.1568, ("Caucasian", "Other"): -0.0976,
    ("Hispanic", "Native American"): 0.1770, ("Hispanic", "Other"): -0.0773, ("Native American", "Other"): -0.2543,
}
SPEC_DI_7214_ROW = {"Asian": 0.5491, "Caucasian": 0.6316, "Hispanic": 0.5868, "Native American": 1.2354,
                    "Other": 0.5210}


@pytest.fixture(scope="module")
def compas_audit():
    return P.analyse(load_sample("compas"), "race", P.ParityParams(threshold=0.4, benefit="negative"))


def test_compas_sample_reproduces_the_race_ofi_table(compas_audit):
    ofi = compas_audit.matrices["ofi"]
    assert set(ofi.groups) == {"African-American", "Asian", "Caucasian", "Hispanic", "Native American", "Other"}
    for (i, j), expected in SPEC_OFI_7214.items():
        assert ofi.value(i, j) == pytest.approx(expected, abs=5e-5), (i, j)
        assert ofi.value(j, i) == pytest.approx(-expected, abs=5e-5)
    for j, expected in SPEC_DI_7214_ROW.items():
        assert compas_audit.matrices["di"].value("African-American", j) == pytest.approx(expected, abs=5e-5)
    assert compas_audit.group("African-American").counts == CM(990, 805, 532, 1369)
    assert compas_audit.most_disparate() == ("Other", "Native American")
    assert any("Native American" in w for w in compas_audit.warnings)          # n = 18 and 32 are flagged


def test_benefit_switch_swaps_the_classes():
    pred = load_sample("compas")
    raw = P.analyse(pred, "race", P.ParityParams(threshold=0.4))
    flipped = P.analyse(pred, "race", P.ParityParams(threshold=0.4, benefit="negative"))
    for g_raw, g_flip in zip(raw.groups, flipped.groups):
        assert flip(g_raw.counts) == g_flip.counts
    assert np.allclose(raw.matrices["ofi"].values, -flipped.matrices["ofi"].values)
    with pytest.raises(ValueError):
        group_counts(pred, pred.groups("race"), 0.4, "sideways")


def test_intersections_of_two_group_columns():
    pred = load_sample("compas")
    audit = P.analyse(pred, "race × sex", P.ParityParams(threshold=0.4, benefit="negative"))
    assert audit.attribute == "race × sex"
    frame = pred.frame
    sizes = frame.groupby(["race", "sex"]).size()
    assert sum(g.n for g in audit.groups) == pred.n
    for g in audit.groups:
        race, sex = g.name.split(" × ")
        assert g.n == sizes[(race, sex)]
    assert [g.n for g in audit.groups] == sorted((g.n for g in audit.groups), reverse=True)
    aa_male = audit.group("African-American × Male").counts
    rows = frame[(frame.race == "African-American") & (frame.sex == "Male")]
    low, no_recid = rows.score < 0.4, rows.two_year_recid == 0
    assert aa_male == CM(int((no_recid & low).sum()), int((no_recid & ~low).sum()), int((~no_recid & low).sum()),
                         int((~no_recid & ~low).sum()))
    with pytest.raises(KeyError):
        pred.groups("race × shoe size")


# ----------------------------------------------------------------------------------------------- undefined cells

def test_undefined_cells_say_why():
    names, counts = ("a", "b", "c"), [CM(5, 5, 0, 10), CM(0, 0, 4, 6), CM(0, 6, 0, 6)]
    audit = P.from_counts("g", names, counts)
    assert audit.matrices["te"].value("a", "b") is None
    assert "'a': FP = 0" in audit.matrices["te"].reason("a", "b")
    assert audit.matrices["pp"].value("a", "b") is None
    assert "no actual positives" in audit.matrices["pp"].reason("a", "b")
    assert audit.matrices["di"].value("a", "c") is None
    assert "P̂_j = 0" in audit.matrices["di"].reason("a", "c")
    assert audit.matrices["ofi"].reasons[np.isfinite(audit.matrices["ofi"].values)].tolist() == [""] * 9
    assert not np.isnan(audit.matrices["ofi"].values).any()


def test_dcr_is_j_first_and_orientations():
    i, j = CM(3, 1, 2, 4), CM(2, 2, 1, 5)
    expected = (j.fp + j.tn) / (j.fn + j.tn) - (i.fp + i.tn) / (i.fn + i.tn)
    assert P.dcr(i, j) == pytest.approx(expected)
    # more false negatives on the label withhold the benefit when the benefit is the positive prediction
    assert {k for k, m in P.PAIR_METRICS.items() if m.orientation == -1} == {"te", "dca", "dcr", "ppv_diff", "fnr_gap"}
    assert set(P.TABLE_32) <= set(P.PAIR_METRICS)


# ----------------------------------------------------------------------------------------------- reference library

def test_against_fairlearn_on_two_groups(two_group_frame):
    from fairlearn.metrics import demographic_parity_difference, demographic_parity_ratio, equalized_odds_difference

    frame = two_group_frame
    pred = build_predictions(frame, ColumnMapping(label="y", score="score", groups=("group",)))
    audit = P.analyse(pred, "group", P.ParityParams(threshold=0.5))
    y_pred = (frame["score"] >= 0.5).astype(int)
    kwargs = dict(y_true=frame["y"], y_pred=y_pred, sensitive_features=frame["group"])
    dppl, di = audit.matrices["dppl"].value("A", "B"), audit.matrices["di"].value("A", "B")
    assert abs(dppl) == pytest.approx(demographic_parity_difference(**kwargs), abs=1e-12)
    assert min(di, 1 / di) == pytest.approx(demographic_parity_ratio(**kwargs), abs=1e-12)
    assert audit.matrices["eo_max_gap"].value("A", "B") == pytest.approx(equalized_odds_difference(**kwargs), abs=1e-12)


def test_pairwise_on_many_groups_matches_scalar_definitions():
    rng = np.random.default_rng(5)
    names = [f"g{k}" for k in range(12)]
    counts = [_random_counts(rng, 4) for _ in names]
    audit = P.from_counts("g", names, counts)
    for i, j in [(0, 1), (3, 7), (11, 2)]:
        a, b = counts[i], counts[j]
        tpr = lambda c: c.tp / c.positives if c.positives else np.nan           # noqa: E731
        fpr = lambda c: c.fp / (c.fp + c.tn) if c.fp + c.tn else np.nan        # noqa: E731
        expected = {
            "accd": (a.tp + a.tn) / a.n - (b.tp + b.tn) / b.n,
            "aaod": 0.5 * (abs(fpr(a) - fpr(b)) + abs(tpr(a) - tpr(b))),
            "eo_fpr_gap": fpr(a) - fpr(b),
        }
        for key, value in expected.items():
            got = audit.matrices[key].value(names[i], names[j])
            assert (got is None and np.isnan(value)) or got == pytest.approx(value, abs=1e-12)


def test_csv_round_trip_of_ofi_with_text_labels(tmp_path):
    frame = pd.DataFrame({"outcome": ["yes", "no"] * 50, "p": np.linspace(0.01, 0.99, 100),
                          "team": ["red"] * 60 + ["blue"] * 40})
    pred = build_predictions(frame, ColumnMapping(label="outcome", score="p", groups=("team",), positive_label="yes"))
    audit = P.analyse(pred, "team")
    assert audit.names == ("red", "blue")
    red = audit.group("red").counts
    assert red.n == 60 and audit.matrices["ofi"].value("red", "red") == 0.0


def test_pair_table_agrees_with_the_pair_reading():
    audit = P.analyse(load_sample("compas"), "race × sex", P.ParityParams(threshold=0.4, benefit="negative"))
    table = audit.pair_table()
    assert len(table) == 12 * 11 // 2
    assert [(r["group_i"], r["group_j"]) for r in table] == audit.pairs()
    for record in table:
        reading = P.read_audit_pair(audit, record["group_i"], record["group_j"])
        assert record["parity_reading"] == reading.kind
        assert record["ofi_p_value"] == pytest.approx(reading.test.p_value, rel=1e-9, abs=1e-300)
        assert record["ofi_ci"] == pytest.approx(list(reading.test.ci), abs=1e-9)
        assert record["four_fifths"] == reading.di_rule
        for key in P.PAIR_METRICS:
            assert record[key] == (None if reading.values[key] is None else pytest.approx(reading.values[key]))
    top = audit.pair_table(limit=5)
    assert [abs(r["ofi"]) for r in top] == sorted((abs(r["ofi"]) for r in table), reverse=True)[:5]


def test_classify_grid():
    assert P.classify(0.10, 0.001, "none") == "algorithmic"
    assert P.classify(-0.10, 0.30, "for j") == "possible"
    assert P.classify(0.01, 0.001, "none") == "small"
    assert P.classify(0.01, 0.40, "for i") == "systemic"
    assert P.classify(0.0, 1.0, "none") == "none"
