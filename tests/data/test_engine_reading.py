"""The engine path reads like the row path and keeps the file's names out of SQL: columns renamed by position at
registration (hostile names audited correctly, no name in any SQL text), internal names that cannot collide,
CSV encodings, delimiters and decimal commas, group codes compared as text, a preview bounded in bytes, and every
failure one plain line."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fairviz.cli.main import main
from fairviz.data.engine import Engine, reduce_path
from fairviz.data.model import ColumnMapping, DataError
from fairviz.data.sniff import sniff_bytes
from fairviz.data.sources import locate, resolve

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--resamples", "20", "--knee-resamples", "0"]
CANARY = "fvcanary_7f3a9"          # an environment value and a file's content that must never reach the output

# names that close a quoted identifier in one dialect or another and call a function that reads the environment or
# a file; each carries 'zq' so that a test can look for any of them in SQL text
HOSTILE = {"label": "zq1\") , reflect('java.lang.System','getenv','FAIRVIZ_CANARY') AS `x` --",
           "score": "zq2` , text.`{secret}` AS \"y\" --",
           "group": "zq3\\\" , getenv('FAIRVIZ_CANARY') , \\\"",
           "id": "zq4'); SELECT 1; --"}


def _frame(n: int = 600, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = np.round(rng.beta(2, 3, n), 2)
    return pd.DataFrame({"label": rng.binomial(1, p), "score": p,
                         "group": rng.choice(["Männer", "Frauen", "divers"], n), "id": np.arange(n)})


def _hostile_names(secret: Path) -> dict[str, str]:
    return {k: v.format(secret=secret) for k, v in HOSTILE.items()}


def _table(stats) -> pd.DataFrame:
    """The reduction's table with the roles' names replaced by 'group', 'label', 'score' (to compare files)."""
    m = stats.mapping
    table = stats.table.rename(columns={m.groups[0]: "group", m.label: "label", m.score: "score", stats.count: "n"})
    return table[["group", "label", "score", "n"]].astype({"group": str}).reset_index(drop=True)


class _Recorder:
    """A DuckDB connection that records every SQL text it is given."""

    def __init__(self, con):
        self.con, self.texts = con, []

    def execute(self, text, *args, **kwargs):
        self.texts.append(text)
        return self.con.execute(text, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.con, name)


# ----------------------------------------------------------------------------------------------- names out of SQL

def test_no_file_column_name_enters_the_sql_text(tmp_path):
    names = _hostile_names(tmp_path / "secret.txt")
    path = tmp_path / "hostile.parquet"
    _frame().rename(columns=names).to_parquet(path)
    engine = Engine("duckdb")
    recorder = _Recorder(engine._duckdb())
    engine._con = recorder
    source = locate(path, "duckdb")
    preview = engine.preview(source)
    assert list(preview.columns) == list(names.values())
    mapping = ColumnMapping(label=names["label"], score=names["score"], groups=(names["group"],))
    stats = engine.reduce(source, mapping)
    picks = pd.DataFrame({"entry": [0, 1], "skip": [0, 0], "take": [1, 1]})
    rows = engine.rows_of_entries(source, stats, picks)
    assert list(rows.columns) == list(names.values())        # the file's names come back for display
    assert recorder.texts and not [t for t in recorder.texts if "zq" in t]


def test_hostile_names_audit_like_plain_ones_on_duckdb(tmp_path, capsys, monkeypatch):
    secret = tmp_path / "secret.txt"
    secret.write_text(CANARY)
    monkeypatch.setenv("FAIRVIZ_CANARY", CANARY)
    names = _hostile_names(secret)
    _frame().to_parquet(tmp_path / "plain.parquet")
    _frame().rename(columns=names).to_parquet(tmp_path / "hostile.parquet")
    plain = reduce_path(tmp_path / "plain.parquet", label="label", score="score", groups=("group",))
    hostile = reduce_path(tmp_path / "hostile.parquet", label=names["label"], score=names["score"],
                          groups=(names["group"],))
    pd.testing.assert_frame_equal(_table(plain), _table(hostile))
    assert main(["audit", str(tmp_path / "hostile.parquet"), "--label", names["label"], "--score", names["score"],
                 "--group", names["group"], *FAST, "--json", "-"]) == 0
    out = capsys.readouterr()
    assert CANARY not in out.out + out.err
    audit = json.loads(out.out)
    assert audit["mapping"]["groups"] == [names["group"]]
    assert sorted(audit["groups"]) == ["Frauen", "Männer", "divers"]
    assert sum(g["n"] for g in audit["groups"].values()) == 600


# ----------------------------------------------------------------------------------------------- internal names

def test_columns_named_like_the_engines_own_names_audit_correctly(tmp_path):
    frame = _frame()
    plain = tmp_path / "plain.csv"
    frame.to_csv(plain, index=False)
    clashing = frame.rename(columns={"group": "__fairviz_n", "label": "y", "score": "s"})
    clashing["g0"], clashing["__fairviz_cell"], clashing["n"], clashing["cell"] = "zz", 3.5, 7, -1
    path = tmp_path / "clashing.csv"
    clashing.to_csv(path, index=False)
    expected = reduce_path(plain, label="label", score="score", groups=("group",))
    stats = reduce_path(path, label="y", score="s", groups=("__fairviz_n",))
    assert stats.count != "__fairviz_n" and list(stats.table.columns) == ["__fairviz_n", "y", "s", stats.count]
    pd.testing.assert_frame_equal(_table(expected), _table(stats))
    pred = stats.predictions()
    assert sorted(pred.groups("__fairviz_n").names) == ["Frauen", "Männer", "divers"]
    assert int(pred.weight.sum()) == len(frame)


# ----------------------------------------------------------------------------------------------- CSV dialects

def _variants(frame: pd.DataFrame) -> dict[str, bytes]:
    text = frame.to_csv(index=False)
    quoted = frame.rename(columns={"label": "label, y", "score": 'score "p"', "group": "group, g"})
    return {"latin-1": text.encode("latin-1"), "cp1252": text.encode("cp1252"),
            "utf-8 with BOM": text.encode("utf-8-sig"), "utf-16": text.encode("utf-16"),
            "semicolon, decimal comma": frame.to_csv(index=False, sep=";", decimal=",").encode("utf-8"),
            "tab": frame.to_csv(index=False, sep="\t").encode("utf-8"),
            "pipe": frame.to_csv(index=False, sep="|").encode("utf-8"),
            "quoted header": quoted.to_csv(index=False).encode("utf-8")}


ROLES = {"quoted header": dict(label="label, y", score='score "p"', groups=("group, g",))}


@pytest.mark.parametrize("variant", list(_variants(_frame(5))))
def test_csv_encodings_delimiters_and_decimal_commas_read_as_the_plain_file(tmp_path, variant):
    frame = _frame()
    (tmp_path / "plain.csv").write_text(frame.to_csv(index=False), encoding="utf-8")
    path = tmp_path / "variant.csv"
    path.write_bytes(_variants(frame)[variant])
    expected = reduce_path(tmp_path / "plain.csv", label="label", score="score", groups=("group",))
    stats = reduce_path(path, **ROLES.get(variant, dict(label="label", score="score", groups=("group",))))
    pd.testing.assert_frame_equal(_table(expected), _table(stats))
    assert sorted(set(stats.table[stats.mapping.groups[0]])) == ["Frauen", "Männer", "divers"]


def test_the_cli_audits_a_latin1_csv(tmp_path, capsys):
    path = tmp_path / "latin1.csv"
    path.write_bytes(_frame().to_csv(index=False).encode("latin-1"))
    assert main(["audit", str(path), "--label", "label", "--score", "score", "--group", "group", *FAST,
                 "--json", str(tmp_path / "audit.json")]) == 0
    assert sorted(json.loads((tmp_path / "audit.json").read_text())["groups"]) == ["Frauen", "Männer", "divers"]
    assert "Männer" in capsys.readouterr().out


def test_sniffing_names_the_format():
    sniffed = sniff_bytes('"a;b";c;d\n"x";0,5;1\n"y";0,25;2\n'.encode("cp1252"), "f.csv", complete=True)
    assert (sniffed.encoding, sniffed.delimiter, sniffed.names, sniffed.decimal_columns) == \
        ("utf-8", ";", ("a;b", "c", "d"), (1,))
    # the row path's rule: Windows-1252 before Latin-1 (the same bytes for é; the engines transcode cp1252)
    assert sniff_bytes("é,b\n1,2\n".encode("latin-1"), "f.csv", complete=True).encoding == "cp1252"
    assert sniff_bytes("\ufeffa,b\n1,2\n".encode("utf-8"), "f.csv", complete=True).names == ("a", "b")


@pytest.mark.parametrize("codes", [["01", "1"], ["1", "1.0", "2"]])
def test_group_codes_stay_distinct_as_written(tmp_path, codes):
    frame = _frame()
    frame["group"] = np.resize(codes, len(frame))
    frame.to_csv(tmp_path / "codes.csv", index=False)
    stats = reduce_path(tmp_path / "codes.csv", label="label", score="score", groups=("group",))
    assert sorted(stats.predictions().groups("group").names) == codes


# ----------------------------------------------------------------------------------------------- bounded preview

def _peak_rss_mb(args: list[str], limit_mb: int = 1500) -> tuple[int, int, str]:
    """Run the CLI in a child, watching its resident memory; killed past ``limit_mb``. (exit code, peak MB, stderr)"""
    child = subprocess.Popen([sys.executable, "-m", "fairviz.cli", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    peak = 0
    while child.poll() is None:
        try:
            status = Path(f"/proc/{child.pid}/status").read_text()
            peak = max(peak, int(next(line.split()[1] for line in status.splitlines()
                                      if line.startswith("VmRSS"))) // 1024)
        except (OSError, StopIteration):
            pass
        if peak > limit_mb:
            child.kill()
            child.wait()
            return -9, peak, ""
        time.sleep(0.05)
    return child.returncode, peak, child.stderr.read()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the child's memory from /proc")
def test_the_cli_preview_never_decodes_a_huge_dictionary_or_list_column(tmp_path):
    n = 10_000
    base = {k: pa.array(v) for k, v in _frame(n).drop(columns="id").items()}
    huge = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array(["x" * (1 << 20)]))
    pq.write_table(pa.table({**base, "note": huge}), tmp_path / "dictionary.parquet")
    nulls = pa.LargeListArray.from_arrays(pa.array(np.arange(n + 1, dtype=np.int64) * 100_000),
                                          pa.nulls(n * 100_000, pa.null()))      # 1e9 nulls in 100 KB
    pq.write_table(pa.table({**base, "tags": nulls}), tmp_path / "list.parquet")
    baseline = None
    for name in ("plain", "dictionary", "list"):
        path = tmp_path / f"{name}.parquet"
        if name == "plain":
            pq.write_table(pa.table(base), path)
        code, peak, err = _peak_rss_mb(["audit", str(path), *FAST, "--json", str(tmp_path / f"{name}.json")])
        assert code == 0, (name, peak, err)
        baseline = peak if baseline is None else baseline
        assert peak < baseline + 300, (name, peak, baseline)
        groups = json.loads((tmp_path / f"{name}.json").read_text())["mapping"]["groups"]
        assert groups == ["group"]


def test_the_preview_names_the_columns_it_does_not_decode(tmp_path):
    n = 50
    table = pa.table({**{k: pa.array(v) for k, v in _frame(n).items()},
                      "tags": pa.array([[1, 2]] * n), "raw": pa.array([b"\x00\x01"] * n),
                      "long": pa.array(["y" * 5000] * n)})
    pq.write_table(table, tmp_path / "mixed.parquet")
    frame = Engine().preview(locate(tmp_path / "mixed.parquet", "duckdb"))
    assert list(frame.columns) == ["label", "score", "group", "id", "long"]
    assert frame.attrs["unread"] == ["tags", "raw"]
    assert frame["long"].str.len().max() <= 1000


# ----------------------------------------------------------------------------------------------- one-line failures

def test_damaged_files_and_bad_spark_masters_fail_in_one_line(tmp_path, capsys):
    _frame().to_parquet(tmp_path / "ok.parquet")
    raw = (tmp_path / "ok.parquet").read_bytes()
    (tmp_path / "truncated.parquet").write_bytes(raw[:len(raw) // 2])
    (tmp_path / "footer.parquet").write_bytes(raw[:-12] + b"\x00" * 8 + b"PAR1")
    (tmp_path / "header.csv").write_text("a" * 10_000_000 + ",label,score\n1,0,0.5\n")
    for name in ("truncated.parquet", "footer.parquet", "header.csv"):
        assert main(["audit", str(tmp_path / name), *FAST]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return
    for master in ("junk", "yarn", "local[-1]", "spark://127.0.0.1:1"):
        started = time.monotonic()
        env = {k: v for k, v in os.environ.items() if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR")}
        done = subprocess.run([sys.executable, "-m", "fairviz.cli", "audit", str(tmp_path / "ok.parquet"), *FAST,
                               "--engine", "spark", "--spark-master", master], cwd=ROOT, capture_output=True,
                              text=True, timeout=120, env={**env, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, (master, done.stderr[-500:])
        assert time.monotonic() - started < 60, master


def test_a_local_folder_named_like_a_scheme_never_makes_a_url_exist(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "http:" / "example.com").mkdir(parents=True)
    _frame().to_csv(tmp_path / "http:" / "example.com" / "x.csv", index=False)
    (tmp_path / "http:" / "example.com" / "x.duckdb").write_bytes(b"")
    with pytest.raises(DataError, match="is a URL"):
        resolve("http://example.com/x.csv")
    with pytest.raises(DataError, match="not found"):
        Engine("duckdb", database="http://example.com/x.duckdb")._duckdb()
