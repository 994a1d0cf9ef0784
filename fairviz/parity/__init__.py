"""Group parity ([3] ch. 3): does each group get the benefit its labels warrant? The Objective Fairness Index,
Disparate Impact and the Table 3.2 metrics by group pair.

Inside: ``results`` (what an audit holds), ``analysis`` (counts → audit), ``pair_metrics`` (Table 3.2 as group ×
group matrices), ``ofi`` (OFI, its noise test and the reading grid), ``di`` (DI and the four-fifths rule),
``scenarios`` (Tables 3.1 and 3.3), ``readings`` (the sentences), ``figures`` (heatmaps and benefit bars).
A numeric target: ``error_parity`` (error and prediction parity, bounded group loss, proxy-class GAP); classes:
``one_vs_rest`` (one-vs-rest parity per class, GAP, per-group confusion); ``entry_stats`` (their shared counts and
permutations), ``method_readings`` and ``method_figures``. ``display`` turns every result into JSON and a display list
and holds the check (``CHECK``: one method per task).
"""
from fairviz.parity.analysis import SMALL_GROUP, analyse, from_counts
from fairviz.parity.di import FOUR_FIFTHS, di, four_fifths
from fairviz.parity.ofi import OFI_TOLERANCE, OFITest, classify, marginal_benefit, ofi, ofi_test
from fairviz.parity.pair_metrics import (LABEL_GAPS, PAIR_METRICS, TABLE_32, PairMetric, PairwiseMatrix, dca, dcr,
                                         dppl, metric_label, pair_value, pairwise, te)
from fairviz.parity.readings import read_audit_pair, read_pair
from fairviz.parity.results import GroupParity, PairReading, ParityAudit, ParityParams
from fairviz.parity.scenarios import SCENARIOS, Scenario, ScenarioResult, scenario

from fairviz.parity.one_vs_rest import (ClassGroup, GroupPerformance, MulticlassParity, MulticlassParityParams,
                                        RateGap, analyse_multiclass, multiclass_parity)
from fairviz.parity.error_parity import (BoundedLoss, ProxyGap, RegressionGroup, RegressionPair, RegressionParity,
                                         RegressionParityParams, analyse_regression, regression_parity)

__all__ = ["FOUR_FIFTHS", "OFI_TOLERANCE", "PAIR_METRICS", "SCENARIOS", "SMALL_GROUP", "TABLE_32", "GroupParity",
           "LABEL_GAPS", "metric_label", "read_audit_pair",
           "OFITest", "PairMetric", "PairReading", "PairwiseMatrix", "ParityAudit", "ParityParams", "Scenario",
           "ScenarioResult", "analyse", "classify", "dca", "dcr", "di", "dppl", "four_fifths", "from_counts",
           "marginal_benefit", "ofi", "ofi_test", "pair_value", "pairwise", "read_pair", "scenario", "te",
           "BoundedLoss", "ClassGroup", "GroupPerformance", "MulticlassParity", "MulticlassParityParams", "ProxyGap",
           "RateGap", "RegressionGroup", "RegressionPair", "RegressionParity", "RegressionParityParams",
           "analyse_multiclass", "analyse_regression", "multiclass_parity", "regression_parity"]
