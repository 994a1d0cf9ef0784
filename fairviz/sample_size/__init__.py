"""Sample-size significance ([3] ch. 4): is a small group's score real, or what its size alone would give?

Inside: ``results`` (what the audit holds), ``analysis`` (MATCH and CPS composed once), ``match`` (the MATCH
test), ``nulls`` (its null distributions), ``cps`` (Cross-Prior Smoothing, expected-error curves),
``jaggedness`` (subsample bands), ``holes`` (undefined metrics), ``readings`` (the sentences), ``figures``;
``class_match`` (MATCH per class, one vs rest); ``display`` (JSON and display lists, and the check: ``CHECK``).
"""
from fairviz.sample_size.analysis import analyse, analyse_match, from_counts, with_cps_lambda
from fairviz.sample_size.cps import (CURVE_LIMIT, cps, cps_cells, cps_groups, curve_reference, expected_errors,
                                     own_value, population_counts)
from fairviz.sample_size.holes import (cell_value_count, configuration_count, configurations, hole_counts,
                                       multinomial_log_weights, printed_hole_count, te_pair_holes,
                                       undefined_probability)
from fairviz.sample_size.jaggedness import jaggedness
from fairviz.sample_size.match import match, match_groups, monte_carlo_draws, null_distribution, reference_counts
from fairviz.sample_size.class_match import CLASS_MATCH, ClassMatch, analyse_class_match, match_by_class
from fairviz.sample_size.nulls import (BenefitNull, BinomialNull, EmpiricalNull, JRMNull, Null, binom_cdf, binom_pmf,
                                       binom_sf, peizer_pratt_cdf, plot_data)
from fairviz.sample_size.readings import verdict
from fairviz.sample_size.results import (CPS_LAMBDA, ENUMERATION_LIMIT, LEVELS, MATCH_METRICS, METRIC_LABELS, CPSRow,
                                         ErrorCurves, Jaggedness, MatchAudit, MatchParams, MatchResult, NullPlot,
                                         SignificanceAudit, SignificanceParams, on_the_benefit)

__all__ = ["CPS_LAMBDA", "CURVE_LIMIT", "ENUMERATION_LIMIT", "LEVELS", "MATCH_METRICS", "METRIC_LABELS",
           "BenefitNull", "BinomialNull", "CPSRow", "EmpiricalNull", "ErrorCurves", "JRMNull", "Jaggedness",
           "MatchAudit", "MatchParams", "MatchResult", "Null", "NullPlot", "SignificanceAudit", "SignificanceParams",
           "analyse", "analyse_match", "binom_cdf", "binom_pmf", "binom_sf", "cell_value_count",
           "configuration_count", "configurations", "cps", "cps_cells", "cps_groups", "curve_reference", "expected_errors",
           "on_the_benefit",
           "from_counts", "hole_counts", "jaggedness", "match", "match_groups", "monte_carlo_draws",
           "multinomial_log_weights", "null_distribution", "own_value", "peizer_pratt_cdf", "plot_data", "population_counts",
           "printed_hole_count",
           "reference_counts", "te_pair_holes", "undefined_probability", "verdict", "with_cps_lambda",
           "CLASS_MATCH", "ClassMatch", "analyse_class_match", "match_by_class"]
