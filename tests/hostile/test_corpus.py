"""Every file of the hostile corpus (tests/hostile/corpus.py) through every path: the row path, `fairviz audit`
(DuckDB; Spark for a few, marked slow) and the app's upload on Home. Each gives the case's outcome — a correct audit
(the same groups on every path) or one plain line matching the case's pattern — and never a traceback."""
from __future__ import annotations

import json
import re

import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from fairviz.cli.main import main
from fairviz.data import DataError, build_predictions, guess_mapping, read_table
from tests.conftest import ROOT
from tests.hostile.corpus import AUDIT, Case, cases, write_corpus

PATHS = ("row", "cli", "app")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return {case.name: path for case, path in write_corpus(tmp_path_factory.mktemp("hostile"))}


def _params():
    params = []
    for case in cases():
        for where in PATHS + (("spark",) if case.spark else ()):
            marks = [pytest.mark.slow] if where == "spark" or where != "row" and not case.quick else []
            if where == "app":
                marks.append(pytest.mark.app)
            if where in case.fixed_by:
                helper = case.fixed_by[where]
                marks.append(pytest.mark.xfail(strict=False, reason=f"fixed by {helper}'s branch"))
            params.append(pytest.param(case, where, id=f"{case.name}-{where}", marks=marks))
    return params


def _outcome(case: Case, message: str | None, groups, expect: str | None = None) -> None:
    """A correct audit with the expected groups, or one plain line that matches the case's pattern."""
    expect = expect or case.expect
    if expect == AUDIT:
        assert message is None, f"{case.name}: expected an audit, got: {message}"
        if case.groups is not None:
            assert sorted(groups) == sorted(case.groups)
        return
    assert message is not None, f"{case.name}: expected a message matching {expect!r}, got an audit"
    assert "Traceback" not in message and "\n" not in message.strip(), message
    assert re.search(expect, message), f"{case.name}: {message!r} does not match {expect!r}"


def _row(case: Case, path) -> None:
    try:
        frame, digest = read_table(path)
        pred = build_predictions(frame, guess_mapping(frame), source=path.name, file_fingerprint=digest)
    except DataError as err:
        return _outcome(case, " ".join(err.problems), None)
    _outcome(case, None, pred.groups().names)


def _cli(case: Case, path, tmp_path, capsys, engine: str) -> None:
    out = tmp_path / "audit.json"
    code = main(["audit", str(path), "--engine", engine, "--resamples", "0", "--knee-resamples", "0",
                 "--json", str(out)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert code in (0, 2), captured.err
    if code == 2:
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1, captured.err
        return _outcome(case, lines[0], None, case.expect_on.get("cli"))
    data = json.loads(out.read_text())
    _outcome(case, None, list(data["groups"]), case.expect_on.get("cli"))


class _Upload:
    """What st.file_uploader hands the page: an id, a name and the bytes."""

    def __init__(self, path):
        self.name, self._raw, self.file_id = path.name, path.read_bytes(), f"hostile-{path.name}"

    def getvalue(self) -> bytes:
        return self._raw


def _app(case: Case, path, monkeypatch) -> None:
    upload = _Upload(path)
    monkeypatch.setattr(streamlit, "file_uploader", lambda *a, **k: upload if k.get("key") == "upload" else None)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.radio(key="home_source").set_value("Upload a file").run()
    assert not at.exception, at.exception
    if not at.error:
        submit = next(b for b in at.button if b.label == "Use these columns")
        submit.click().run()
        assert not at.exception, at.exception
    expect = case.expect_on.get("app", case.expect)
    stopped = [w.value for w in at.warning if "Nothing was loaded" in str(w.value)]   # the direction check's stop
    if at.error or stopped:
        shown = str(at.error[-1].value) if at.error else str(stopped[-1])
        assert "Traceback" not in shown and "File \"" not in shown, shown
        lines = [line.lstrip("- ") for line in shown.splitlines() if line.strip()]
        return _outcome(case, re.sub(r"\\(.)", r"\1", lines[-1]), None, expect)      # the page escapes Markdown
    assert any("Loaded" in s.value for s in at.success), [m.value for m in at.markdown][:5]
    _outcome(case, None, at.session_state["predictions"].groups().names, expect)


@pytest.mark.parametrize("case, where", _params())
def test_hostile_file(case, where, corpus, tmp_path, capsys, monkeypatch):
    path = corpus[case.name]
    if where == "row":
        _row(case, path)
    elif where == "app":
        _app(case, path, monkeypatch)
    else:
        _cli(case, path, tmp_path, capsys, "duckdb" if where == "cli" else "spark")
