"""A bundled sample's settings (threshold, benefit) apply wherever its file is audited: the CLI orients COMPAS as
the app and the thesis (§3.4: the benefit is 'not a recidivist', i.e. the low-risk prediction) do."""
from __future__ import annotations

import json
import shutil

import pytest

from fairviz.cli.main import main
from fairviz.data.samples import load_sample, match_sample, sample_path, samples
from fairviz.parity.analysis import ParityParams, analyse as parity_analyse

FAST = ["--resamples", "20", "--knee-resamples", "0"]


def _audit(tmp_path, path, *extra) -> dict:
    out = tmp_path / "a.json"
    assert main(["audit", str(path), *FAST, *extra, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def _app_ofi() -> dict:
    """What the Group parity page computes for the COMPAS sample: its threshold, the page's default benefit."""
    from app_pages._parity_common import NEGATIVE_BY_DEFAULT
    sample = samples()["compas"]
    benefit = "negative" if "compas" in NEGATIVE_BY_DEFAULT else "positive"
    audit = parity_analyse(load_sample("compas"), "race", ParityParams(threshold=sample.threshold, benefit=benefit))
    return {(p["group_i"], p["group_j"]): p["ofi"] for p in audit.pair_table()}


@pytest.fixture(scope="module")
def compas_cli(tmp_path_factory) -> dict:
    return _audit(tmp_path_factory.mktemp("compas"), sample_path("compas"))


def test_sample_definition_carries_threshold_and_benefit():
    assert (samples()["compas"].threshold, samples()["compas"].benefit) == (0.4, "negative")
    assert {s.benefit for k, s in samples().items() if k != "compas"} == {"positive"}


def test_cli_on_bundled_compas_gives_the_apps_ofi_signs(compas_cli):
    assert compas_cli["parity"]["settings"]["benefit"] == "negative"
    assert compas_cli["threshold"] == 0.4
    app = _app_ofi()
    cli = {(p["group_i"], p["group_j"]): p["ofi"] for p in compas_cli["parity"]["pairs"]}
    assert cli.keys() == app.keys()
    for pair, value in app.items():
        assert cli[pair] == pytest.approx(value, abs=1e-12), pair
    # thesis §3.4 / Fig. 3.2: with the benefit 'not a recidivist', COMPAS is biased against African-Americans
    black_white = cli.get(("African-American", "Caucasian"))
    if black_white is None:
        black_white = -cli[("Caucasian", "African-American")]
    assert black_white < 0
    assert any("bundled sample" in note for note in compas_cli["notes"])


def test_a_byte_identical_copy_is_the_sample_and_explicit_flags_win(tmp_path):
    copy = tmp_path / "my_compas.csv"
    shutil.copyfile(sample_path("compas"), copy)
    assert match_sample(copy).key == "compas"
    data = _audit(tmp_path, copy, "--benefit", "positive")
    assert data["parity"]["settings"]["benefit"] == "positive" and data["threshold"] == 0.4


def test_other_files_keep_the_plain_defaults(tmp_path):
    frame = load_sample("synthetic").frame.head(600)
    path = tmp_path / "other.csv"
    frame.to_csv(path, index=False)
    assert match_sample(path) is None
    data = _audit(tmp_path, path)
    assert data["parity"]["settings"]["benefit"] == "positive" and data["threshold"] == 0.5
    assert not any("bundled sample" in note for note in data["notes"])
