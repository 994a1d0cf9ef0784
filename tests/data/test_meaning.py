"""The upload's meaning, asked and checked (issue 28): a score that runs the other way stops the audit with a sentence
naming the label values, on the row path and the engine path alike; percentages and logits convert to the very
probabilities a pre-converted file holds; the JSON and the data line state the scale and the direction."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy.special import expit
from sklearn.metrics import roc_auc_score

from fairviz.data import ColumnMapping, DataError, build_predictions, read_table
from fairviz.data.checks import ScoreDirectionError
from fairviz.data.engine import Engine, reduce_path
from fairviz.data.sources import Frame
from fairviz.report.api import audit as api_audit
from fairviz.report.plan import AuditParams, audit as run_audit
from fairviz.residuals import RDFParams
from tests.data.meaning_files import write

MAPPING = ColumnMapping("approved", "score", ("sex",), positive_label="yes")
INVERTED = replace(MAPPING, score="p_default")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write(tmp_path_factory.mktemp("meaning"))


def _rows(path, mapping):
    frame, digest = read_table(path)
    return build_predictions(frame, mapping, source=path.name, file_fingerprint=digest)


def _reduced(path, mapping):
    return reduce_path(path, mapping).predictions()


def _auroc(pred) -> float:
    return roc_auc_score(pred.y, pred.score, sample_weight=pred.weight)


@pytest.mark.parametrize("build", [_rows, _reduced], ids=["rows", "engine"])
def test_a_reversed_score_stops_with_the_label_values_named(files, build):
    with pytest.raises(ScoreDirectionError) as stopped:
        build(files["inverted"], INVERTED)
    message = str(stopped.value)
    assert "'p_default' runs the other way" in message
    assert "higher scores go with approved = no, not with approved = yes" in message
    assert stopped.value.check.auroc < 0.5 and stopped.value.check.auroc_ci[1] < 0.5
    assert isinstance(stopped.value, DataError)                     # every front end shows it as a plain message


@pytest.mark.parametrize("build", [_rows, _reduced], ids=["rows", "engine"])
def test_reversed_uses_one_minus_the_score_and_as_is_audits_anyway_with_a_note(files, build):
    flipped = build(files["inverted"], replace(INVERTED, score_direction="reversed"))
    right = build(files["prob"], MAPPING)
    assert _auroc(flipped) > 0.5 and _auroc(flipped) == pytest.approx(_auroc(right), abs=1e-12)
    np.testing.assert_allclose(np.sort(flipped.score), np.sort(right.score), rtol=0, atol=1e-12)
    as_is = build(files["inverted"], replace(INVERTED, score_direction="as-is"))
    assert _auroc(as_is) < 0.5
    assert any(note.startswith("Audited as it is, as asked, although the score 'p_default' runs the other way")
               for note in as_is.notes)
    assert as_is.mapping.to_dict()["score_direction"] == "as-is" and as_is.mapping.to_dict()["direction_confirmed"]


@pytest.mark.parametrize("scale", ["pct", "logit"])
@pytest.mark.parametrize("build", [_rows, _reduced], ids=["rows", "engine"])
def test_percent_and_logit_scores_give_the_audit_of_the_converted_file(files, scale, build):
    name = {"pct": "percent", "logit": "logit"}[scale]
    converted = build(files[scale], replace(MAPPING, score_scale=name))
    reference = build(files[f"prob_of_{scale}"], MAPPING)
    assert converted.resolution == reference.resolution == 0            # exact stays exact
    assert converted.n == reference.n and converted.y.size == reference.y.size
    np.testing.assert_array_equal(converted.y, reference.y)
    np.testing.assert_allclose(converted.score, reference.score, rtol=0, atol=1e-12)
    if converted.weight is not None:
        np.testing.assert_array_equal(converted.weight, reference.weight)
    assert converted.mapping.score_scale == name and converted.mapping.to_dict()["score_scale"] == name


def _same_numbers(a, b, path=""):
    if isinstance(b, dict):
        assert set(a) >= set(b) - {"mapping", "source", "notes"}, path
        for key in b:
            if key not in ("mapping", "source", "notes"):
                _same_numbers(a[key], b[key], f"{path}.{key}")
    elif isinstance(b, list):
        assert len(a) == len(b), path
        for k, (x, y) in enumerate(zip(a, b)):
            _same_numbers(x, y, f"{path}[{k}]")
    elif isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12), path
    else:
        assert a == b, path


def test_a_percent_file_audits_as_its_probability_file_on_the_engine_path(files):
    params = AuditParams(threshold=0.5, rdf=RDFParams(resamples=20, knee_resamples=0, seed=1))
    converted = run_audit(_reduced(files["pct"], replace(MAPPING, score_scale="percent")), params).data
    reference = run_audit(_reduced(files["prob_of_pct"], MAPPING), params).data
    _same_numbers(converted, reference)
    assert converted["mapping"]["score_scale"] == "percent"


def test_the_api_guesses_an_unambiguous_percent_file_and_says_so(files):
    result = api_audit(str(files["pct"]), label="approved", score="score", group="sex", positive_label="yes",
                       resamples=20, knee_resamples=0)
    assert result.to_dict()["mapping"]["score_scale"] == "percent"
    assert any("read as a percentage in [0, 100]" in note for note in result.to_dict()["notes"])
    assert "score 'score' read as a percentage (÷ 100)" in result.to_terminal().splitlines()[0]
    with pytest.raises(ScoreDirectionError, match="approved = no"):
        api_audit(str(files["inverted"]), label="approved", score="p_default", group="sex", positive_label="yes",
                  resamples=20, knee_resamples=0)
    flipped = api_audit(str(files["inverted"]), label="approved", score="p_default", group="sex",
                        positive_label="yes", score_direction="reversed", resamples=20, knee_resamples=0)
    assert flipped.to_dict()["mapping"]["score_direction"] == "reversed"


def test_an_ambiguous_range_is_not_converted_and_is_named(tmp_path):
    deciles = pd.DataFrame({"y": [0, 1] * 20, "score": np.tile(np.arange(1, 11), 4), "g": ["a", "b"] * 20})
    path = tmp_path / "deciles.csv"
    deciles.to_csv(path, index=False)
    with pytest.raises(DataError, match="look like percentages"):
        result = api_audit(str(path), label="y", score="score", group="g", resamples=20, knee_resamples=0)
        result.to_dict()


def test_the_logit_conversion_keeps_missing_nan_and_extremes_apart_in_sql():
    frame = pd.DataFrame({"y": [1, 0, 1, 0, 1, 0], "score": [800.0, -800.0, np.nan, 0.0, 2.0, -2.0],
                          "g": ["a", "a", "a", "b", "b", "b"]})
    engine = Engine("duckdb")
    try:
        stats = engine.reduce(Frame(pa.Table.from_pandas(frame), "logits"),
                              ColumnMapping("y", "score", ("g",), score_scale="logit", score_direction="as-is"))
    finally:
        engine.close()
    values = np.sort(stats.table["score"].dropna().to_numpy())
    np.testing.assert_allclose(values, expit([-800.0, -2.0, 0.0, 2.0, 800.0]), rtol=1e-15, atol=1e-300)
    assert stats.table["score"].isna().sum() == 1                      # a missing score stays missing, never 0 or 1


def test_postgres_converts_extreme_logits_without_overflow():
    """PostgreSQL raises on exp() overflow and underflow: the conversion clamps, and NULL stays NULL."""
    pytest.importorskip("psycopg")
    from tests.data.servers import load_frame, postgres_bin, postgres_server
    if postgres_bin() is None:
        pytest.skip("no PostgreSQL server")
    from fairviz.data.sources import Table
    logits = np.array([800.0, -800.0, 0.0, 2.0, -2.0, 35.0] * 4)
    frame = pd.DataFrame({"y": [1, 0] * 12, "score": logits, "g": ["a", "b", "c"] * 8})
    mapping = ColumnMapping("y", "score", ("g",), score_scale="logit", score_direction="reversed")
    with postgres_server() as url:
        load_frame(url, "logits", frame)
        engine = Engine("postgres", dsn=url)
        try:
            stats = engine.reduce(Table("logits"), mapping)
        finally:
            engine.close()
    np.testing.assert_allclose(np.unique(stats.table["score"].to_numpy(dtype=float)), np.unique(1 - expit(logits)),
                               rtol=1e-15, atol=1e-300)
