"""`fairviz audit --group a --group b`: every attribute audited in one run (issue 26, item 1), the Summary across
attributes as one Benjamini–Hochberg family, a failing attribute recorded while the others carry on, and
`--slices` adding the top significant slices to the Summary's findings."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from fairviz.cli.main import main

ARGS = ["--label", "y", "--score", "score", "--resamples", "60", "--knee-resamples", "0"]
RECORD_KEYS = ("groups", "pairs", "calibration", "parity", "findings", "knee_concentration")


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """6,000 rows; race (three groups) is fair, sex is not: men's scores are shifted up by 0.15. 'one' has a single
    value."""
    rng = np.random.default_rng(11)
    n = 6000
    race = rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2])
    sex = rng.choice(["F", "M"], n)
    p = rng.uniform(0.02, 0.9, n)
    y = rng.binomial(1, p)
    score = np.clip(p + np.where(sex == "M", 0.15, 0.0), 0, 1)
    path = tmp_path_factory.mktemp("people") / "people.csv"
    pd.DataFrame({"y": y, "score": score, "race": race, "sex": sex, "one": "x"}).to_csv(path, index=False)
    return path


def audit_json(path, tmp_path, *extra) -> tuple[int, dict]:
    out = tmp_path / f"audit_{abs(hash(extra))}.json"
    code = main(["audit", str(path), *ARGS, *extra, "--json", str(out)])
    return code, json.loads(out.read_text())


@pytest.fixture(scope="module")
def both(people, tmp_path_factory):
    return audit_json(people, tmp_path_factory.mktemp("both"), "--group", "race", "--group", "sex")[1]


def assert_same(a, b, path=""):
    """Equal JSON values, numbers to 1e-9 relative."""
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for key in a:
            assert_same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12), path
    else:
        assert a == b, path


def test_two_groups_give_each_attribute_the_numbers_of_its_own_run(people, tmp_path, both):
    assert set(both["attributes"]) == {"race", "sex"}
    for name in ("race", "sex"):
        _, alone = audit_json(people, tmp_path, "--group", name)
        record = both["attributes"][name]
        assert record["attribute"] == name
        for key in RECORD_KEYS:
            assert_same(record[key], alone[key], f"{name}.{key}")
        assert sum(g["n"] for g in record["groups"].values()) == 6000
    # the first attribute's keys stay at the top level, as a one-attribute audit writes them
    assert both["attribute"] == "race"
    for key in RECORD_KEYS:
        assert_same(both[key], both["attributes"]["race"][key], key)
    # sex is where the planted gap is: its own Summary finds it
    assert both["attributes"]["sex"]["findings"]["top"][0]["attribute"] == "sex"
    assert not both["attributes"]["race"]["findings"]["top"]


def test_the_summary_across_attributes_is_one_bh_family(both):
    summary = both["summary"]
    assert summary["attributes"] == ["race", "sex"] and summary["references"] == {"race": "A", "sex": "F"}
    raw = [c for name in ("race", "sex") for c in both["attributes"][name]["findings"]["candidates"]]
    tested = [c for c in raw if c["p_value"] is not None]
    _, expected, _, _ = multipletests([c["p_value"] for c in tested], alpha=0.05, method="fdr_bh")
    by_key = {(c["attribute"], c["kind"], c["group"]): c for c in summary["candidates"]}
    assert len(by_key) == len(raw)
    for candidate, p in zip(tested, expected):
        got = by_key[(candidate["attribute"], candidate["kind"], candidate["group"])]
        assert got["p_adjusted"] == pytest.approx(p, rel=1e-12)
    # a larger family than either attribute's own: the union's adjustment is not sex's alone
    sex_only = {(c["kind"], c["group"]): c["p_adjusted"] for c in both["attributes"]["sex"]["findings"]["candidates"]}
    assert any(by_key[("sex", k, g)]["p_adjusted"] > p for (k, g), p in sex_only.items() if p is not None)
    top = summary["top"]
    assert top and all(f["attribute"] == "sex" for f in top)
    assert top[0]["sentence"].startswith("sex: ")
    assert [f["strength"] for f in top] == sorted((f["strength"] for f in top), reverse=True)
    assert summary["material_count"] == sum(c["headline"] for c in summary["candidates"])
    assert summary["policy"]["family"] == "every comparison of every attribute"


def test_the_terminal_and_html_cover_every_attribute(people, tmp_path, capsys):
    html = tmp_path / "r.html"
    assert main(["audit", str(people), *ARGS, "--group", "race", "--group", "sex", "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert out.index("Summary across attributes") < out.index("Summary of 'race'") < out.index("Attribute 'sex'")
    assert "all 18 comparisons of all 2 attributes together" in out.replace("\n    ", " ")
    page = html.read_text()
    assert page.index("<h2>Summary across attributes</h2>") < page.index("<h2>Summary</h2>") < \
        page.index("<h2>Calibration</h2>") < page.index("<h2>sex · Summary</h2>") < page.index("<h2>sex · Calibration</h2>")


def test_an_attribute_that_fails_is_recorded_and_the_other_is_audited(people, tmp_path, both):
    code, data = audit_json(people, tmp_path, "--group", "one", "--group", "sex")
    assert code == 0
    assert data["attributes"]["one"] == {
        "attribute": "one", "error": "The group column 'one' has a single value ('x'): fairness compares groups, "
                                     "so it needs at least two."}
    assert data["attribute"] == "sex"
    assert_same(data["attributes"]["sex"]["groups"], both["attributes"]["sex"]["groups"])
    assert "one" in data["summary"]["failed"] and data["summary"]["attributes"] == ["sex"]


def test_an_intersection_over_the_group_cap_is_recorded_and_the_columns_are_audited(people, tmp_path):
    code, data = audit_json(people, tmp_path, "--group", "race", "--group", "sex", "--intersect", "--max-groups", "5")
    assert code == 0
    assert "has 6 groups; the limit is 5" in data["attributes"]["race × sex"]["error"]
    assert data["attribute"] == "race" and "groups" in data["attributes"]["sex"]


def test_the_intersection_is_audited_with_intersect(people, tmp_path):
    _, data = audit_json(people, tmp_path, "--group", "race", "--group", "sex", "--intersect")
    assert data["attribute"] == "race × sex" and list(data["attributes"]) == ["race", "sex", "race × sex"]
    assert data["attributes"]["race × sex"]["groups"]["A × M"]["n"] == data["groups"]["A × M"]["n"]


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Each attribute alone is fair (every race and every sex has the same FPR), but the intersections are not:
    negatives of (A, F) and (B, M) are flagged at 0.4, those of (A, M) and (B, F) at 0.2."""
    rng = np.random.default_rng(5)
    n = 8000
    race = rng.choice(["A", "B"], n)
    sex = rng.choice(["F", "M"], n)
    y = rng.binomial(1, 0.5, n)
    high = (race == "A") == (sex == "F")
    flagged = rng.random(n) < np.where(y == 1, 0.7, np.where(high, 0.4, 0.2))
    score = np.where(flagged, rng.uniform(0.5, 1.0, n), rng.uniform(0.0, 0.5, n))
    path = tmp_path_factory.mktemp("planted") / "planted.csv"
    pd.DataFrame({"y": y, "score": score, "race": race, "sex": sex}).to_csv(path, index=False)
    return path


def test_a_planted_slice_joins_the_summarys_findings(planted, tmp_path, capsys):
    html = tmp_path / "slices.html"
    code, data = audit_json(planted, tmp_path, "--group", "race", "--group", "sex", "--slices", "--html", str(html))
    assert code == 0
    listed = data["summary"]["slices"]
    assert listed, "the planted slices are significant"
    first = listed[0]
    assert " ∧ " in first["slice"] and first["slice"] in {"race=A ∧ sex=F", "race=B ∧ sex=M", "race=A ∧ sex=M",
                                                          "race=B ∧ sex=F"}
    assert first["p_adjusted"] < 0.05 and abs(first["difference"]) > 0.05
    assert first["ci"][0] <= first["difference"] <= first["ci"][1]
    assert first["metric"] == "false positive rate" and first["correction"] == "Benjamini–Yekutieli"
    # every slice in the JSON, as the slice search writes it; the Summary's entries are its significant ones
    rows = {r["slice"]: r for r in data["slices"]["slices"]}
    assert data["slices"]["max_depth"] == 2 and data["slices"]["min_support"] == 100
    assert rows[first["slice"]]["p_adjusted"] == pytest.approx(first["p_adjusted"])
    assert rows[first["slice"]]["n"] == first["n"]
    # each attribute alone is fair: no attribute finding is a headline
    assert not data["summary"]["top"]
    out = capsys.readouterr().out
    assert f"Slice {first['slice']}" in out
    assert "Slices: where the false positive rate differs" in html.read_text()


def test_a_regressions_slices_join_its_summary(tmp_path):
    """A regression's slices compare mean residuals (Welch's t-test): a planted over-prediction in one intersection
    is found and joins the Summary; a binary-only slice metric is refused plainly."""
    rng = np.random.default_rng(0)
    n = 4000
    g, h = rng.choice(["a", "b"], n), rng.choice(["x", "y"], n)
    target = rng.normal(50, 5, n)
    prediction = target + rng.normal(0, 2, n) + np.where((g == "b") & (h == "y"), 3.0, 0.0)
    path = tmp_path / "r.csv"
    pd.DataFrame({"target": target, "prediction": prediction, "g": g, "h": h}).to_csv(path, index=False)
    out = tmp_path / "r.json"
    code = main(["audit", str(path), "--task", "regression", "--label", "target", "--score", "prediction",
                 "--group", "g", "--group", "h", "--slices", "--json", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    assert data["slices"]["metric"] == "mean_residual"
    planted = next(s for s in data["slices"]["slices"] if s["slice"] == "g=b ∧ h=y")
    inside = (g == "b") & (h == "y")
    assert planted["metric"] == pytest.approx(np.mean(prediction[inside] - target[inside]), rel=1e-9)
    assert planted["significant"]
    assert any(s["slice"] == "g=b ∧ h=y" for s in data["summary"]["slices"])
    code = main(["audit", str(path), "--task", "regression", "--label", "target", "--score", "prediction",
                 "--group", "g", "--slices", "--slice-metric", "fpr"])
    assert code == 2


def test_the_python_api_audits_every_attribute(people, both):
    from fairviz.report.api import audit
    result = audit(str(people), label="y", score="score", group=["race", "sex", "one"], resamples=60,
                   knee_resamples=0).to_dict()
    assert list(result["attributes"]) == ["race", "sex", "one"]
    assert "single value" in result["attributes"]["one"]["error"]
    for key in ("groups", "pairs", "findings"):
        assert_same(result["attributes"]["sex"][key], both["attributes"]["sex"][key], key)
    assert result["summary"]["top"][0]["sentence"].startswith("sex: ")


def test_an_intersection_of_a_failing_column_is_recorded_not_replaced(people, tmp_path):
    code, data = audit_json(people, tmp_path, "--group", "one", "--group", "sex", "--group", "race", "--intersect")
    assert code == 0
    assert data["attributes"]["one × sex"] == {"attribute": "one × sex",
                                               "error": "it needs 'one', which could not be audited."}
    assert "sex × race" not in data["attributes"] and data["attribute"] == "sex"


def test_the_gate_reads_the_summary_across_attributes(people, tmp_path):
    """race is fair and first; sex is not: the gate fails on sex's findings, each JUnit case naming its attribute."""
    junit = tmp_path / "audit.xml"
    code = main(["audit", str(people), *ARGS, "--group", "race", "--group", "sex", "--fail-on", "material",
                 "--junit", str(junit)])
    assert code == 1
    xml = junit.read_text()
    assert 'name="fairviz audit: race, sex"' in xml and 'name="sex: M vs F"' in xml and 'name="race: B vs A"' in xml
    assert 'message="sex: M rows' in xml
