"""MATCH, CPS, jaggedness and holes: the spec's derived numbers, brute-force enumeration and Monte Carlo checks."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats as sps

import fairviz.sample_size as S
from fairviz.core.confusion_metrics import METRICS, Cells, probabilities
from fairviz.core.counts import ConfusionCounts as CM
from fairviz.data.samples import load_sample
from fairviz.core.stats import benjamini_hochberg

# Spec 002 Appendix A.3: Folktables income (>$50k), random forest, (TP, FN, FP, TN); the groups sum to "All".
FOLKTABLES = {
    "AI and AN": CM(13, 26, 31, 275), "Amer. Indian": CM(82, 113, 149, 810), "Asian": CM(4679, 2817, 3624, 13928),
    "Black": CM(755, 730, 1028, 5574), "Multiracial": CM(757, 609, 724, 3866), "Other": CM(746, 930, 1700, 14713),
    "Pacific Islander": CM(40, 31, 74, 341), "White": CM(19246, 10933, 12741, 54347),
}
FOLKTABLES_ALL = CM(26318, 16189, 20071, 93854)
VIOLENT_WHITE, VIOLENT_ALL = CM(77, 129, 380, 1679), CM(389, 347, 1597, 4121)
VIOLENT_REF = CM(312, 218, 1217, 2442)            # All − White


@pytest.fixture(scope="module")
def folktables():
    return S.match_groups("race", list(FOLKTABLES), list(FOLKTABLES.values()))


# ----------------------------------------------------------------------------------------------- combinatorics, holes

def test_configuration_counts():
    assert [S.configuration_count(n) for n in (1, 2, 3, 4, 5, 6, 10, 100)] == [4, 10, 20, 35, 56, 84, 286, 176_851]
    for n in (0, 1, 2, 10, 30):
        cells = S.configurations(n)
        assert cells.tp.size == S.configuration_count(n)
        assert np.all(cells.n == n) and min(c.min() for c in cells) >= 0
        assert len(set(zip(*(c.tolist() for c in cells)))) == cells.tp.size          # all distinct


def test_cell_value_counts_are_triangular():
    assert [S.cell_value_count(x, 2) for x in (2, 1, 0)] == [1, 3, 6]
    for n in range(1, 8):
        cells = S.configurations(n)
        for x in range(n + 1):
            for cell in cells:
                assert np.count_nonzero(cell == x) == S.cell_value_count(x, n) == (n - x + 1) * (n - x + 2) // 2


def test_hole_counts_n_1_to_12():
    pt = []
    for n in range(1, 13):
        holes = S.hole_counts(n)
        assert holes["acc"] == holes["prev"] == holes["ppr"] == holes["benefit"] == 0
        assert holes["f1"] == 1
        for jrm in ("tpr", "fnr", "tnr", "fpr", "ppv", "fdr", "npv", "for"):
            assert holes[jrm] == n + 1
        assert holes["mcc"] == 4 * n
        pt.append(holes["pt"])
        assert holes["pt"] >= 4 * n                     # every MCC hole is a PT hole
    assert pt == [4, 8, 12, 17, 20, 28, 28, 37, 40, 48, 44, 65]
    # Theorem 4.3's PT upper bound fails from n = 4 on (17 > 10.3): shown, not asserted as true
    assert "10.3" in S.printed_hole_count("pt", 4)


def test_te_pair_holes_by_brute_force():
    for n1, n2 in [(1, 1), (2, 1), (2, 3)]:
        a, b = S.configurations(n1), S.configurations(n2)
        fp_a, fp_b = np.asarray(a.fp)[:, None], np.asarray(b.fp)[None, :]
        brute = int(np.count_nonzero((fp_a == 0) | (fp_b == 0)))
        correct, printed = S.te_pair_holes(n1, n2)
        assert correct == brute
    assert S.te_pair_holes(1, 1) == (15, 5)


def test_undefined_probability_closed_forms_match_enumeration():
    p = np.array([0.3, 0.1, 0.2, 0.4])
    for n in (1, 3, 8):
        cells = S.configurations(n)
        weights = np.exp(S.multinomial_log_weights(cells, p))
        assert weights.sum() == pytest.approx(1.0, abs=1e-12)
        for metric in ("tpr", "ppv", "for", "mcc", "f1", "acc"):
            mass = weights[~np.isfinite(METRICS[metric](cells))].sum()
            assert S.undefined_probability(metric, n, p) == pytest.approx(mass, abs=1e-12), (metric, n)


# ----------------------------------------------------------------------------------------------- binomial family

def test_binomial_example_exact_normal_and_peizer_pratt():
    null = S.BinomialNull(100, 0.75)
    exact = float(null.cdf(0.80)[0])
    assert exact == pytest.approx(0.900470, abs=1e-6)
    assert exact == pytest.approx(sum(math.comb(100, f) * 0.75 ** f * 0.25 ** (100 - f) for f in range(81)), abs=1e-12)
    z = (80 + 0.5 - 75) / math.sqrt(100 * 0.75 * 0.25)
    assert z == pytest.approx(1.270171, abs=1e-6)
    assert float(null.normal_cdf(0.80)[0]) == pytest.approx(0.897988, abs=1e-6)
    pp = S.peizer_pratt_cdf(80, 100, 0.75)
    assert pp == pytest.approx(0.900479, abs=1e-6) and abs(pp - exact) < 1e-4
    assert S.peizer_pratt_cdf(0, 100, 0.75) is None                  # min(x + 1, n − x) < 2: not valid


def test_peizer_pratt_error_below_a_tenth_of_a_percent():
    for n, p in [(20, 0.3), (50, 0.75), (200, 0.05), (500, 0.5)]:
        for x in range(1, n - 1):
            approx = S.peizer_pratt_cdf(x, n, p)
            if approx is not None and sps.binom.cdf(x, n, p) > 1e-3:
                assert abs(approx - sps.binom.cdf(x, n, p)) < 1e-3


def test_folktables_pacific_islander_accuracy(folktables):
    r = folktables.get("Pacific Islander", "acc")
    assert r.score == pytest.approx(0.783951, abs=1e-6) and r.method == "exact binomial"
    assert r.cdf == pytest.approx(0.809658, abs=1e-6)
    assert r.p_upper == pytest.approx(0.221427, abs=1e-6)
    assert r.p_value == pytest.approx(0.442855, abs=1e-6)
    assert r.undefined_probability == 0.0
    ai = folktables.get("AI and AN", "acc")
    assert (ai.cdf, ai.p_upper, ai.p_value) == pytest.approx((0.999059, 0.001490, 0.002980), abs=1e-6)
    multi = folktables.get("Multiracial", "acc")
    assert (multi.cdf, multi.p_upper) == pytest.approx((0.937827, 0.066055), abs=1e-6)


def test_normal_method_where_valid():
    audit = S.match_groups("race", list(FOLKTABLES), list(FOLKTABLES.values()), S.MatchParams(method="normal"))
    acc, b = audit.get("Pacific Islander", "acc"), audit.get("Pacific Islander", "benefit")
    assert acc.p_lower == pytest.approx(0.810243, abs=1e-6) and acc.method.startswith("normal")
    assert 0 < acc.error_bound < 0.1                                   # Berry–Esseen bound is reported
    assert b.p_lower == pytest.approx(0.998534, abs=1e-6)
    assert acc.cdf == pytest.approx(0.809658, abs=1e-6)               # the CDF column stays exact
    tiny = S.match(CM(1, 0, 1, 1), FOLKTABLES_ALL, "acc", S.MatchParams(method="normal"))
    assert "not valid" in tiny.method and tiny.p_lower == pytest.approx(float(S.BinomialNull(3, 0.768).cdf(2 / 3)[0]),
                                                                        abs=1e-3)


# ----------------------------------------------------------------------------------------------- marginal benefit

def test_benefit_exact_pmf_moments_and_cdf():
    for n in (10, 50):
        null = S.BenefitNull(n, p_plus=0.2, p_minus=0.1)          # p = (TP .3, FP .2, FN .1, TN .4)
        values, pmf = null.pmf()
        assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
        assert (values * pmf).sum() == pytest.approx(0.1, abs=1e-12)
        assert ((values - 0.1) ** 2 * pmf).sum() == pytest.approx(0.29 / n, abs=1e-12)
    assert float(S.BenefitNull(10, 0.2, 0.1).cdf(0.0)[0]) == pytest.approx(0.384321, abs=1e-6)
    null50 = S.BenefitNull(50, 0.2, 0.1)
    assert float(null50.cdf(0.0)[0]) == pytest.approx(0.117700, abs=1e-6)
    assert float(null50.normal_cdf(0.0)[0]) == pytest.approx(0.118651, abs=1e-6)     # corrected Eq. 4.29
    # [3] Eq. 4.29 as printed (a count minus a per-row mean, no n) gives 0.426: documented, not used
    printed = sps.norm.cdf((0 - 0.1) / math.sqrt(0.3 - 0.01))
    assert printed == pytest.approx(0.426342, abs=1e-6)


def test_benefit_cdf_equals_brute_force_enumeration():
    p = np.array([0.3, 0.1, 0.2, 0.4])
    for n in (1, 7, 20):
        cells = S.configurations(n)
        weights = np.exp(S.multinomial_log_weights(cells, p))
        benefit = (np.asarray(cells.fp) - np.asarray(cells.fn)) / n
        null = S.BenefitNull(n, 0.2, 0.1)
        for b in (-0.5, -0.05, 0.0, 0.1, 0.35):
            assert float(null.cdf(b)[0]) == pytest.approx(weights[benefit <= b + 1e-12].sum(), abs=1e-12)
            assert float(null.sf(b)[0]) == pytest.approx(weights[benefit >= b - 1e-12].sum(), abs=1e-12)


def test_folktables_benefit_rows(folktables):
    pi = folktables.get("Pacific Islander", "benefit")
    assert pi.score == pytest.approx(43 / 486, abs=1e-12)
    assert pi.p_upper == pytest.approx(0.002013, abs=1e-6) and pi.cdf == pytest.approx(0.998511, abs=1e-6)
    ai = folktables.get("AI and AN", "benefit")
    assert (ai.cdf, ai.p_upper) == pytest.approx((0.365659, 0.675614), abs=1e-6)
    multi = folktables.get("Multiracial", "benefit")
    assert (multi.cdf, multi.p_upper) == pytest.approx((0.182740, 0.824309), abs=1e-6)


# ----------------------------------------------------------------------------------------------- joint-ratio metrics

def test_tpr_example_conditioned_literal_and_undefined():
    conditioned = S.JRMNull(20, p_pair=0.4, theta=0.75)
    literal = S.JRMNull(20, p_pair=0.4, theta=0.75, condition=False)
    assert float(conditioned.cdf(0.5)[0]) == pytest.approx(0.095433, abs=1e-6)
    assert float(literal.cdf(0.5)[0]) == pytest.approx(0.095430, abs=1e-6)
    assert conditioned.undefined == pytest.approx(0.6 ** 20, rel=1e-12)
    # Monte Carlo, 200k draws, seed 1
    draws = Cells.from_draws(np.random.default_rng(1).multinomial(20, [0.3, 0.1, 0.2, 0.4], size=200_000))
    tpr = METRICS["tpr"](draws)
    ok = np.isfinite(tpr)
    assert np.mean(tpr[ok] <= 0.5) == pytest.approx(0.095433, abs=0.003)
    # [3] Eq. 4.44 evaluates the observed group's own posterior at its own estimate: ≈ 0.5 by construction
    assert special.betainc(4 + 1, 8 - 4 + 1, 0.5) == pytest.approx(0.5, abs=1e-12)


def test_folktables_pacific_islander_tpr(folktables):
    r = folktables.get("Pacific Islander", "tpr")
    assert r.score == pytest.approx(0.563380, abs=1e-6)
    assert r.cdf == pytest.approx(0.094426, abs=1e-6) and r.method == "exact joint-ratio"


def test_jrm_cdf_equals_brute_force_enumeration():
    reference = CM(30, 10, 20, 40)
    for metric in ("tpr", "ppv", "for"):
        for n in (3, 12):
            cells = S.configurations(n)
            weights = np.exp(S.multinomial_log_weights(cells, probabilities(reference)))
            values = METRICS[metric](cells)
            ok = np.isfinite(values)
            null = S.null_distribution(metric, n, reference)
            for s in (0.0, 1 / 3, 0.5, 0.75, 1.0):
                brute = weights[ok & (values <= s + 1e-12)].sum() / weights[ok].sum()
                assert float(null.cdf(s)[0]) == pytest.approx(brute, abs=1e-12), (metric, n, s)


# ----------------------------------------------------------------------------------------------- other metrics

def test_exact_enumeration_agrees_with_monte_carlo():
    reference = CM(300, 100, 150, 450)
    for metric in ("mcc", "f1", "pt"):
        exact = S.null_distribution(metric, 40, reference)
        assert exact.method == "exact enumeration"
        mc = S.null_distribution(metric, 40, reference, S.MatchParams(enumeration_limit=0, draws=100_000, seed=3))
        assert mc.method == "Monte Carlo"
        for s in np.quantile(exact.values, [0.1, 0.5, 0.9]):
            assert float(mc.cdf(s)[0]) == pytest.approx(float(exact.cdf(s)[0]), abs=0.006)
        assert mc.undefined == pytest.approx(exact.undefined, abs=0.003)


def test_ofi_match_is_seeded_and_two_sample():
    group, reference = FOLKTABLES["Pacific Islander"], CM(*(getattr(FOLKTABLES_ALL, f) - getattr(
        FOLKTABLES["Pacific Islander"], f) for f in ("tp", "fn", "fp", "tn")))
    a = S.match(group, reference, "ofi", S.MatchParams(seed=7))
    b = S.match(group, reference, "ofi", S.MatchParams(seed=7))
    assert a == b and a.method == "Monte Carlo (two-sample)"
    assert a.score == pytest.approx(43 / 486 - (reference.fp - reference.fn) / reference.n)
    benefit = S.match(group, reference, "benefit")
    assert a.p_upper == pytest.approx(benefit.p_upper, abs=0.003)      # a huge reference adds almost no noise
    small_ref = CM(8, 3, 6, 30)                                         # a small reference adds its own noise
    assert S.match(group, small_ref, "ofi").p_value > S.match(group, small_ref, "benefit").p_value


def test_p_values_are_valid_under_the_null():
    """Groups drawn from the reference itself: a level-0.05 test rejects at most about 5% of them."""
    rng = np.random.default_rng(11)
    reference = CM(3000, 1000, 2000, 4000)
    rejected = {"acc": 0, "benefit": 0, "tpr": 0}
    trials = 300
    for _ in range(trials):
        group = CM(*map(int, rng.multinomial(60, probabilities(reference))))
        for metric in rejected:
            r = S.match(group, reference, metric)
            rejected[metric] += r.p_value is not None and r.p_value < 0.05
    for metric, count in rejected.items():
        assert count / trials < 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / trials), metric


def test_match_groups_bh_reference_modes_and_verdicts(folktables):
    raw = [r.p_value for r in folktables.results]
    assert [r.p_adjusted for r in folktables.results] == pytest.approx(benjamini_hochberg(raw).tolist())
    assert all(r.p_adjusted >= r.p_value - 1e-15 for r in folktables.results if r.p_value is not None)
    assert len(folktables.results) == len(FOLKTABLES) * len(S.MATCH_METRICS)
    words = S.verdict(folktables.get("Pacific Islander", "acc"), reference="all other rows")
    assert "Not distinguishable from sampling noise at n = 486" in words
    words = S.verdict(folktables.get("Pacific Islander", "benefit"), reference="all other rows")
    assert "Unlikely to be sampling noise at n = 486: higher than all other rows" in words
    chosen = S.match_groups("race", list(FOLKTABLES), list(FOLKTABLES.values()), S.MatchParams(reference="White"))
    assert chosen.get("White", "acc").note == "it is the reference" and chosen.get("White", "acc").p_value is None
    assert chosen.references["Black"] == FOLKTABLES["White"]
    population = S.match_groups("race", list(FOLKTABLES), list(FOLKTABLES.values()),
                                S.MatchParams(reference="population", metrics=("acc",)))
    assert population.references["Asian"] == FOLKTABLES_ALL
    with pytest.raises(ValueError):
        S.match_groups("race", list(FOLKTABLES), list(FOLKTABLES.values()), S.MatchParams(reference="Martian"))


def test_undefined_observed_scores_are_reported_not_zero():
    r = S.match(CM(0, 0, 3, 9), CM(30, 10, 20, 40), "tpr")
    assert r.score is None and r.p_value is None and "no actual positives" in r.note
    assert r.undefined_probability == pytest.approx(0.6 ** 12)
    assert "undefined" in S.verdict(r)


def test_match_on_the_compas_sample_is_fast_enough_and_complete():
    audit = S.analyse_match(load_sample("compas"), "race", 0.4, "negative")
    assert set(audit.names) == {"African-American", "Caucasian", "Hispanic", "Other", "Asian", "Native American"}
    nat = audit.get("Native American", "mcc")
    assert nat.n == 18 and nat.method == "exact enumeration"
    assert audit.get("African-American", "mcc").method == "Monte Carlo"


# ----------------------------------------------------------------------------------------------- CPS

def test_cps_worked_example():
    smooth = S.cps(CM(2, 0, 1, 2), VIOLENT_REF, 5)
    assert (smooth.tp, smooth.fn, smooth.fp, smooth.tn) == pytest.approx((1.186202, 0.130103, 1.226307, 2.457388),
                                                                          abs=1e-6)
    assert smooth.n == pytest.approx(5.0, abs=1e-12)
    expected = {1: (1.728734, 0.043368, 1.075436, 2.152463), 10: (0.914936, 0.173470, 1.301743, 2.609851),
                20: (0.697923, 0.208164, 1.362091, 2.731821)}
    for lam, cells in expected.items():
        s = S.cps(CM(2, 0, 1, 2), VIOLENT_REF, lam)
        assert (s.tp, s.fn, s.fp, s.tn) == pytest.approx(cells, abs=1e-6)
    assert S.cps(CM(2, 0, 1, 2), VIOLENT_REF, 0) == CM(2.0, 0.0, 1.0, 2.0)
    smoothed = S.cps_groups(["White", "rest"], [CM(2, 0, 1, 2), VIOLENT_REF], 5)[0]
    assert smoothed.smoothed_metrics["acc"] == pytest.approx(0.728718, abs=1e-6)
    assert smoothed.smoothed_metrics["tpr"] == pytest.approx(0.901161, abs=1e-6)
    assert smoothed.smoothed_metrics["benefit"] == pytest.approx(0.219241, abs=1e-6)
    assert smoothed.smoothed_metrics["mcc"] == pytest.approx(0.500833, abs=1e-6)
    assert smoothed.raw_metrics["mcc"] == pytest.approx(2 / 3, abs=1e-6)
    with pytest.raises(ValueError):
        S.cps(CM(2, 0, 1, 2), VIOLENT_REF, -1)


def test_cps_fills_holes():
    r = S.cps_groups(["tiny", "big"], [CM(0, 0, 1, 3), CM(40, 10, 20, 30)], 5)[0]
    assert r.raw_metrics["tpr"] is None and r.smoothed_metrics["tpr"] is not None


EXACT_MSE = {   # [3] ch. 4, CPS for small samples: n → metric → (raw, raw defined mass, CPS λ=5, CPS λ=20)
    5: {"acc": (0.034845, 1.0, 0.012183, 0.010281), "tpr": (0.212187, 0.3792, 0.062808, 0.044391),
        "benefit": (0.042489, 1.0, 0.014697, 0.012130), "mcc": (0.307533, 0.2788, 0.028352, 0.006743)},
    10: {"acc": (0.017422, 1.0, 0.009286, 0.008107), "tpr": (0.186618, 0.6146, 0.069446, 0.042416),
         "benefit": (0.021244, 1.0, 0.011253, 0.009604), "mcc": (0.155396, 0.5597, 0.033545, 0.009341)},
    20: {"acc": (0.008711, 1.0, 0.006131, 0.005649), "tpr": (0.142589, 0.8515, 0.068404, 0.038375),
         "benefit": (0.010622, 1.0, 0.007450, 0.006730), "mcc": (0.076622, 0.8430, 0.032274, 0.011417)},
}


def test_exact_expected_mse_table():
    curves = S.expected_errors(VIOLENT_WHITE, VIOLENT_REF, ["acc", "tpr", "benefit", "mcc"], [5, 10, 20],
                               lams=(5, 20), epsilons=())
    for s, n in enumerate((5, 10, 20)):
        for metric, (raw, mass, lam5, lam20) in EXACT_MSE[n].items():
            c = curves[metric]
            assert c.mse["raw"][s] == pytest.approx(raw, abs=1e-5), (n, metric)
            assert c.defined_mass["raw"][s] == pytest.approx(mass, abs=1e-4)
            assert c.mse["CPS λ = 5"][s] == pytest.approx(lam5, abs=1e-5)
            assert c.mse["CPS λ = 20"][s] == pytest.approx(lam20, abs=1e-5)


def test_cps_beats_raw_for_all_fifteen_metrics():
    curves = S.expected_errors(VIOLENT_WHITE, VIOLENT_REF, list(METRICS), [5, 10, 20], lams=(5,), epsilons=(1,))
    assert len(curves) == 15
    for metric, c in curves.items():
        assert np.all(c.mse["CPS λ = 5"] < c.mse["raw"]), metric
        assert np.all(c.defined_mass["CPS λ = 5"] > 0.999), metric


def test_expected_errors_rejects_sizes_beyond_enumeration():
    with pytest.raises(ValueError):
        S.expected_errors(VIOLENT_WHITE, VIOLENT_REF, ["acc"], [5, 500])


# ----------------------------------------------------------------------------------------------- jaggedness

def test_jaggedness_bands():
    group = FOLKTABLES["Multiracial"]
    j = S.jaggedness(group, "ppr", range(5, 50), draws=1000, seed=0)
    again = S.jaggedness(group, "ppr", range(5, 50), draws=1000, seed=0)                # seeded
    assert all(np.array_equal(j.quantiles[k], again.quantiles[k], equal_nan=True) for k in S.LEVELS)
    assert j.full_value == pytest.approx(1481 / 5956)
    q = j.quantiles
    for a, b in zip(S.LEVELS, S.LEVELS[1:]):
        assert np.all(q[a] <= q[b] + 1e-12)
    assert (q[90] - q[10])[-1] < (q[90] - q[10])[0]                                   # bands narrow as n grows
    assert abs(np.nanmedian(q[50][-10:]) - j.full_value) < 0.05
    assert np.all(j.undefined_share == 0)                                              # PPR has no holes


def test_jaggedness_undefined_share_matches_the_hypergeometric():
    group = CM(3, 2, 40, 155)                           # 5 actual positives in 200 rows
    j = S.jaggedness(group, "tpr", [5, 20], draws=4000, seed=2)
    for s, n in enumerate(j.sizes):
        exact = math.comb(195, int(n)) / math.comb(200, int(n))       # P(no actual positive in the subsample)
        assert j.undefined_share[s] == pytest.approx(exact, abs=0.025)
    with pytest.raises(ValueError):
        S.jaggedness(group, "tpr", [500])
