"""``fairviz slices``: the ranked table on the terminal, every slice in the JSON, exit 2 with one line on bad input."""
from __future__ import annotations

import json

from fairviz.cli.main import main
from tests.slices.data import frame


def test_slices_command_prints_the_ranked_table_and_writes_every_slice(tmp_path, capsys):
    path = tmp_path / "d.csv"
    frame(8_000, seed=8, planted=True).to_csv(path, index=False)
    out = tmp_path / "s.json"
    code = main(["slices", str(path), "--label", "label", "--score", "score", "--group", "sex", "--group", "age",
                 "--group", "region", "--max-depth", "2", "--min-support", "150", "--metric", "fpr",
                 "--threshold", "0.5", "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    payload = json.loads(out.read_text())
    assert payload["max_depth"] == 2 and payload["min_support"] == 150 and payload["metric"] == "fpr"
    assert len(payload["slices"]) == 2 + 3 + 4 + 6 + 8 + 12
    top = payload["slices"][0]
    assert top["significant"] and top["slice"] in ("sex=F ∧ age=18-25", "sex=M ∧ age=18-25")
    assert top["p_adjusted"] < 0.05 and top["ci_low"] <= top["difference"] <= top["ci_high"]
    assert "sex=F ∧ age=18-25" in printed and "adj. p" in printed and "difference 95% CI" in printed


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    path = tmp_path / "d.csv"
    frame(500, seed=9).to_csv(path, index=False)
    base = ["slices", str(path), "--label", "label", "--score", "score"]
    for extra, words in ((["--group", "nope"], "'nope' is not a column"),
                         (["--group", "sex", "--max-depth", "4"], "depth must be 1…3"),
                         (["--group", "sex", "--min-support", "0"], "minimum support"),
                         (["--group", "sex", "--threshold", "2"], "--threshold")):
        assert main(base + extra) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and len(err.splitlines()) == 1


def test_rows_without_a_numeric_label_or_score_are_counted_and_left_out(tmp_path, capsys):
    path = tmp_path / "d.csv"
    path.write_text("label,score,g\n1,high,a\n0,0.6,b\n1,0.7,a\n0,1.5,b\n")
    out = tmp_path / "s.json"
    assert main(["slices", str(path), "--label", "label", "--score", "score", "--group", "g", "--json",
                 str(out)]) == 0
    payload = json.loads(out.read_text())
    assert payload["rows"] == 2 and payload["max_depth"] == 1
    assert payload["notes"] == ["2 rows without a 0/1 label or a score in [0, 1] were left out."]
    assert sorted(s["n"] for s in payload["slices"]) == [1, 1]


def test_regression_slices_on_the_engine_with_the_pruned_search(tmp_path, capsys):
    from tests.slices.data import regression_frame
    path = tmp_path / "r.parquet"
    regression_frame(8_000, seed=35, planted=True).to_parquet(path)
    out = tmp_path / "r.json"
    code = main(["slices", str(path), "--label", "target", "--score", "prediction", "--task", "regression",
                 "--group", "sex", "--group", "age", "--group", "region", "--metric", "mean_residual",
                 "--top-k", "3", "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    payload = json.loads(out.read_text())
    assert payload["task"] == "regression" and payload["metric"] == "mean_residual"
    assert payload["search"]["top_k"] == 3 and payload["search"]["queries"] >= 2
    assert payload["family"] == payload["tested"] + payload["search"]["pruned"]
    top = payload["slices"][0]
    assert top["significant"] and top["slice"].startswith("sex=F ∧ age=18-25") and top["mae"] > 0
    assert "Welch's t-test" in printed and "Pruned search" in printed
    assert main(["slices", str(path), "--label", "target", "--score", "prediction", "--task", "regression",
                 "--group", "sex", "--metric", "fpr"]) == 2
    assert "does not apply to regression" in capsys.readouterr().err


def test_seven_attributes_are_pruned_by_default_and_top_k_0_searches_every_slice(tmp_path):
    from tests.slices.data import WIDE
    wide = {**WIDE, "tier": ("1", "2", "3")}
    path = tmp_path / "w.parquet"
    frame(6_000, seed=40, planted=True, attributes=wide).to_parquet(path)
    base = ["slices", str(path), "--label", "label", "--score", "score", *[x for a in wide for x in ("--group", a)]]
    assert main(base + ["--json", str(tmp_path / "a.json")]) == 0
    pruned = json.loads((tmp_path / "a.json").read_text())
    assert pruned["search"]["top_k"] == 20 and pruned["search"]["lattice_grouping_sets"] == 7 + 21 + 35
    assert main(base + ["--top-k", "0", "--json", str(tmp_path / "b.json")]) == 0
    every = json.loads((tmp_path / "b.json").read_text())
    assert every["search"]["top_k"] is None and every["search"]["grouping_sets"] == 63
    assert every["search"]["pruned"] == 0 and every["family"] == every["tested"]
    assert len(every["slices"]) >= len(pruned["slices"])
