"""`fairviz audit` asks the upload's meaning (issue 28): a score that runs the other way exits 2 with a sentence naming
the real label values unless --score-direction says which way it runs; --score-scale converts percentages and logits,
an unambiguous guess is converted and stated; the JSON, the terminal line and the HTML state scale and direction."""
from __future__ import annotations

import json

import numpy as np
import pytest

from fairviz.cli.main import main
from tests.data.meaning_files import write

QUICK = ["--label", "approved", "--group", "sex", "--positive-label", "yes", "--resamples", "20",
         "--knee-resamples", "0"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write(tmp_path_factory.mktemp("cli_meaning"))


def _audit(path, *extra, folder):
    out = folder / "audit.json"
    code = main(["audit", str(path), *QUICK, *extra, "--json", str(out)])
    return code, (json.loads(out.read_text()) if code == 0 else None)


def _ofi(data) -> tuple[str, float]:
    """The favoured group and its OFI (the pair's OFI oriented so that it is positive)."""
    pair = data["parity"]["pairs"][0]
    return (pair["group_i"], pair["ofi"]) if pair["ofi"] > 0 else (pair["group_j"], -pair["ofi"])


def test_a_reversed_score_exits_2_with_the_label_values_named(files, tmp_path, capsys):
    code, _ = _audit(files["inverted"], "--score", "p_default", folder=tmp_path)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "The score 'p_default' runs the other way: higher scores go with approved = no, not with approved = yes" in err
    assert "--score-direction reversed" in err and "--score-direction as-is" in err


def test_score_direction_reversed_gives_the_right_auroc_and_ofi_sign(files, tmp_path, capsys):
    code, flipped = _audit(files["inverted"], "--score", "p_default", "--score-direction", "reversed",
                           "--html", str(tmp_path / "r.html"), folder=tmp_path)
    terminal = capsys.readouterr().out
    assert code == 0
    _, right = _audit(files["prob"], "--score", "score", folder=tmp_path)
    record = flipped["calibration"]
    aurocs = {g: v["auroc"] for g, v in {**record["groups"], "overall": record["overall"]}.items()}
    favoured, ofi = _ofi(flipped)
    assert (favoured, ofi) == (_ofi(right)[0], pytest.approx(_ofi(right)[1], abs=1e-12))
    assert favoured == "male" and ofi > 0                # the data's own bias: women are approved less
    assert flipped["mapping"]["score_direction"] == "reversed" and flipped["mapping"]["direction_confirmed"]
    assert "score 'p_default' read as a probability, reversed (1 − p)" in terminal.splitlines()[0]
    assert "reversed (1 − p)" in (tmp_path / "r.html").read_text()
    assert set(aurocs) == {"male", "female", "overall"} and all(v > 0.5 for v in aurocs.values())
    assert aurocs["overall"] == pytest.approx(right["calibration"]["overall"]["auroc"], abs=1e-12)


def test_score_direction_as_is_audits_the_reversed_score_and_says_so(files, tmp_path):
    code, data = _audit(files["inverted"], "--score", "p_default", "--score-direction", "as-is", folder=tmp_path)
    assert code == 0 and data["mapping"]["score_direction"] == "as-is"
    assert any(n.startswith("Audited as it is, as asked, although the score 'p_default' runs the other way")
               for n in data["notes"])
    assert _ofi(data)[0] == "female"                    # the reversed conclusion, audited because it was asked


@pytest.mark.parametrize("name, scale", [("pct", "percent"), ("logit", "logit")])
def test_percent_and_logit_files_audit_as_their_probability_files(files, tmp_path, name, scale, capsys):
    code, given = _audit(files[name], "--score", "score", "--score-scale", scale, folder=tmp_path)
    assert code == 0 and given["mapping"]["score_scale"] == scale
    code, guessed = _audit(files[name], "--score", "score", folder=tmp_path)
    assert code == 0 and guessed["mapping"]["score_scale"] == scale        # unambiguous: converted and stated
    assert any("and converted to a probability" in n for n in guessed["notes"])
    _, reference = _audit(files[f"prob_of_{name}"], "--score", "score", folder=tmp_path)
    for data in (given, guessed):
        assert _ofi(data)[0] == _ofi(reference)[0] and _ofi(data)[1] == pytest.approx(_ofi(reference)[1], abs=1e-12)
        for mine, theirs in zip(data["groups"].values(), reference["groups"].values()):
            for key, value in theirs.items():
                if isinstance(value, float):
                    assert mine[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key


def test_dstar_of_a_reversed_percent_score_reads_the_converted_score(files, tmp_path):
    pct = tmp_path / "pct_default.csv"
    import pandas as pd
    frame = pd.read_csv(files["inverted"])
    frame.assign(p_default=frame["p_default"] * 100).to_csv(pct, index=False, float_format="%.17g")
    dstar = tmp_path / "dstar.csv"
    code, data = _audit(pct, "--score", "p_default", "--score-scale", "percent", "--score-direction", "reversed",
                        "--dstar", str(dstar), folder=tmp_path)
    rows = pd.read_csv(dstar)
    assert code == 0 and len(rows) > 0 and data["mapping"]["score_scale"] == "percent"
    expected = (1 - rows["p_default"] / 100) - (rows["approved"] == "yes")
    assert np.abs(rows["residual D"] - expected).max() < 1e-12
