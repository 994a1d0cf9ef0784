"""A Conditional HydraGAN run as a display list ([3] §3.5): the 'Synthetic data (HydraGAN)' page draws it one group
per tab, ``fairviz synth train`` prints its ``summary``. The JSON is ``SynthAudit.to_dict()``."""
from __future__ import annotations

import pandas as pd

from fairviz.core.display import Bullets, Figure, Group, Item, Metric, Metrics, Table, text
from fairviz.synth import SynthAudit, figures, readings, thesis


def summary(result: SynthAudit, source: str, out) -> list[Item]:
    """What the terminal prints: the run, then one sentence per finding."""
    return [readings.run_line(result, source, out), Bullets(tuple(readings.summary(result)))]


def display(result: SynthAudit, key: tuple | None = None) -> list[Item]:
    """The findings, then one group per view (``key`` identifies the run; figures are kept per key)."""
    return [Bullets(tuple(readings.summary(result))),
            Group("Distributions (Table 3.5)", (
                Table(result.table_35(), "synth_table_35", _numbers(result.table_35(), "metric")),
                text(readings.DISTANCES_NOTE, "note"),
                Figure(lambda: figures.distribution_figure(result), _key(key, "distribution"))), key="distributions"),
            Group("Fairness (Table 3.4)", (
                Table(result.table_34(), "synth_table_34", _numbers(result.table_34(), "metric", "data")),
                readings.fairness_note(result), readings.accuracy(result)), key="fairness"),
            Group("Boxplots (Fig. 3.4)", (Figure(lambda: figures.boxplot_figure(result), _key(key, "boxplots")),
                                          text(readings.BOXPLOT_NOTE, "note")), key="boxplots"),
            Group("Realism & privacy", (realism(result), readings.realism_verdict(result),
                                        Table(pd.DataFrame(result.marginals), "synth_marginals"),
                                        text(readings.MARGINALS_NOTE, "note")), key="realism"),
            Group("Training", (Figure(lambda: figures.loss_figure(result), _key(key, "losses")),
                               readings.training_note(result),
                               Table(result.synthetic.head(20), "synth_rows")), key="training"),
            Group("The thesis's results", thesis_reference(), key="thesis")]


def realism(result: SynthAudit) -> Metrics:
    p = result.privacy
    return Metrics((
        Metric(text("Real-vs-synthetic AUC"), f"{result.realism_auc:.3f}", readings.REALISM_AUC_HELP),
        Metric(text("Median distance to nearest real row"), f"{p['synthetic_median']:.3f}",
               f"Unseen real hold-out rows: {p['holdout_median']:.3f} (standardised numbers, one-hot categories)."),
        Metric(text("Exact copies of training rows"), f"{p['exact_copies']:,} of {p['checked_rows']:,}",
               f"Unseen real rows that equal a training row: {p['holdout_exact_matches']:,} of "
               f"{p['holdout_checked_rows']:,} (the rate a fresh real sample would show).")))


def thesis_reference() -> tuple[Item, ...]:
    """The thesis's own Tables 3.4 and 3.5, as printed (CASAS data is not public)."""
    table_34, table_35 = pd.DataFrame(thesis.table_34_rows()), pd.DataFrame(thesis.table_35_rows())
    return (text(readings.THESIS_34), Table(table_34, "thesis_table_34", _numbers(table_34, "metric", "data")),
            text(readings.THESIS_35), Table(table_35, "thesis_table_35", _numbers(table_35, "metric")),
            text(readings.THESIS_DATA, "note"))


def _numbers(frame: pd.DataFrame, *text_columns: str) -> dict:
    """Text for the named columns and for columns holding words; three decimals for the numbers (a column of
    numbers with undefined cells is an object column of floats and None)."""
    def words(column: str) -> bool:
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values):
            return False
        return values.map(lambda v: isinstance(v, str)).any()
    return {c: "text" if c in text_columns or words(c) else "num" for c in frame.columns}


def _key(key: tuple | None, *what) -> tuple | None:
    return None if key is None else ("synth", *key, *what)
