"""Environment settings: bounded, a bad value named once and replaced by the default."""
import logging

import pytest

from fairviz.core.settings import env_float, env_int


@pytest.mark.parametrize("raw", ["abc", "1.5", "-3", "100000", " "])
def test_bad_integers_fall_back_to_the_default(monkeypatch, caplog, raw):
    monkeypatch.setenv("FAIRVIZ_TEST_INT", raw)
    with caplog.at_level(logging.WARNING, "fairviz.settings"):
        assert env_int("FAIRVIZ_TEST_INT", 2, 1, 64) == 2
    assert len(caplog.records) == (0 if raw.strip() == "" else 1)
    if caplog.records:
        assert "FAIRVIZ_TEST_INT" in caplog.text and "default 2" in caplog.text


@pytest.mark.parametrize("raw", ["nan", "inf", "-1", "x", "1e9"])
def test_bad_floats_fall_back_to_the_default(monkeypatch, caplog, raw):
    monkeypatch.setenv("FAIRVIZ_TEST_FLOAT", raw)
    with caplog.at_level(logging.WARNING, "fairviz.settings"):
        assert env_float("FAIRVIZ_TEST_FLOAT", 600.0, 1.0, 86_400.0) == 600.0
    assert "FAIRVIZ_TEST_FLOAT" in caplog.text


def test_good_values_are_read(monkeypatch):
    monkeypatch.setenv("FAIRVIZ_TEST_INT", " 8 ")
    monkeypatch.setenv("FAIRVIZ_TEST_FLOAT", "30")
    assert env_int("FAIRVIZ_TEST_INT", 2, 1, 64) == 8
    assert env_float("FAIRVIZ_TEST_FLOAT", 600.0, 1.0, 86_400.0) == 30.0


def test_the_server_reads_its_limits_through_the_bounded_parser(monkeypatch):
    """FAIRVIZ_MAX_HEAVY_RUNS=abc or FAIRVIZ_QUEUE_TIMEOUT_S=nan once broke every job page or disabled the timeout."""
    import importlib
    import subprocess
    import sys
    code = ("import app_pages._jobs as j, fairviz.data.limits as l; "
            "print(j.MAX_HEAVY_RUNS, j.QUEUE_TIMEOUT_S, l.MAX_GROUPS)")
    env = {"FAIRVIZ_MAX_HEAVY_RUNS": "abc", "FAIRVIZ_QUEUE_TIMEOUT_S": "nan", "FAIRVIZ_MAX_GROUPS": "-4",
           "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                         cwd=importlib.import_module("tests.conftest").ROOT)
    assert out.stdout.split() == ["2", "600.0", "200"], out.stderr
    assert "FAIRVIZ_MAX_HEAVY_RUNS" in out.stderr and "FAIRVIZ_QUEUE_TIMEOUT_S" in out.stderr
