"""`fairviz audit --engine postgres`: the reduction runs inside a real PostgreSQL server (started here on 127.0.0.1)
and its audit equals DuckDB's on the same rows; only the reduced table comes back; bad input is one sentence."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fairviz.cli.main import main
from fairviz.data import ColumnMapping, DataError
from fairviz.data.engine import Engine
from fairviz.data.sources import Query, Table

psycopg = pytest.importorskip("psycopg", reason="the postgres engine needs psycopg (pip install 'psycopg[binary]')")
from tests.data.compare import shared  # noqa: E402
from tests.data.servers import load_frame, postgres_bin, postgres_server  # noqa: E402

DIFFER = ("source", "engine")     # what names the source; every number is shared

from tests.data.test_engine import numbers_differ  # noqa: E402

pytestmark = pytest.mark.skipif(postgres_bin() is None, reason="no PostgreSQL server (make test installs Debian's "
                                                                "'postgresql' package when run as root)")
FAST = ["--resamples", "100", "--knee-resamples", "10"]
COMPAS = ["--group", "race", "--threshold", "0.4", "--benefit", "negative", "--positive-label", "1",
          "--reference", "Caucasian"]      # the bundled file's own settings, given to every source


@pytest.fixture(scope="module")
def dsn():
    with postgres_server() as url:
        compas = pd.read_csv("assets/compas.csv")
        load_frame(url, "compas", compas)
        load_frame(url, "compas_scores", compas.drop(columns=["race"]).assign(id=np.arange(len(compas))))
        load_frame(url, "demographics", pd.DataFrame({"id": np.arange(len(compas)), "race": compas["race"]}))
        with psycopg.connect(url, autocommit=True) as con:
            con.execute("CREATE SEQUENCE counter")
        yield url


def _audit(capsys, *args) -> dict:
    assert main(["audit", *map(str, args), *FAST, "--json", "-"]) == 0
    return json.loads(capsys.readouterr().out)


def test_postgres_gives_the_duckdb_json_and_the_same_dstar(dsn, tmp_path, capsys):
    duck = _audit(capsys, "assets/compas.csv", *COMPAS, "--dstar", tmp_path / "duck.csv")
    pg = _audit(capsys, "--engine", "postgres", "--dsn", dsn, "--table", "compas", *COMPAS,
                "--dstar", tmp_path / "pg.csv")
    assert pg["engine"] == duck["engine"] | {"engine": "postgres"} and pg["source"] == "compas"
    duck["notes"], pg["notes"] = duck["notes"][:-1], pg["notes"][:-1]          # the D* file names differ
    assert numbers_differ(shared(duck, DIFFER), shared(pg, DIFFER), 1e-9) == []
    d_duck, d_pg = (pd.read_csv(tmp_path / f"{e}.csv") for e in ("duck", "pg"))
    order = list(d_duck.columns)
    assert len(d_duck) > 0 and list(d_pg.columns) == order and d_duck.sort_values(order, ignore_index=True).equals(
        d_pg.sort_values(order, ignore_index=True))


def test_a_join_by_id_as_a_query_gives_the_table_audit(dsn, capsys, monkeypatch):
    """The DSN from the PG* variables (no --dsn): what a user with credentials in ~/.pgpass or PGPASSWORD does."""
    table = _audit(capsys, "--engine", "postgres", "--dsn", dsn, "--table", "compas", *COMPAS)
    parts = dsn.split("@")[1].split("/")
    host, port = parts[0].split(":")
    for key, value in {"PGHOST": host, "PGPORT": port, "PGUSER": "fairviz", "PGDATABASE": parts[1]}.items():
        monkeypatch.setenv(key, value)
    joined = _audit(capsys, "--engine", "postgres", "--query",
                    "SELECT s.*, d.race FROM compas_scores s JOIN demographics d ON d.id = s.id", *COMPAS)
    assert joined["source"] == "query"
    assert numbers_differ(shared(table, DIFFER), shared(joined, DIFFER), 1e-12) == []


def test_only_the_reduced_table_crosses_the_wire(dsn):
    engine = Engine("postgres", dsn=dsn)
    stats = engine.reduce(Table("compas"), ColumnMapping("two_year_recid", "score", ("race",)))
    assert stats.exact and stats.rows == 7214 and engine.fetched_rows == len(stats.table) < 200
    engine.close()


def test_a_continuous_score_in_binned_mode_equals_duckdb(dsn):
    rng = np.random.default_rng(3)
    n = 210_000                                      # above the exact limit: 1/300,000-wide cells
    frame = pd.DataFrame({"y": rng.integers(0, 2, n), "score": rng.random(n), "group": rng.choice(["a", "b"], n)})
    frame.loc[:2, "score"] = [np.nan, 1.5, -0.25]    # missing and outside [0, 1]: the odd cells, named alike
    load_frame(dsn, "continuous", frame)
    mapping = ColumnMapping("y", "score", ("group",))
    pg, duck = Engine("postgres", dsn=dsn), Engine()
    import pyarrow as pa
    from fairviz.data.sources import Frame
    a = pg.reduce(Table("continuous"), mapping)
    b = duck.reduce(Frame(pa.Table.from_pandas(frame)), mapping)
    assert not a.exact and a.rows == b.rows == n and pg.fetched_rows == len(b.table) - 0
    cols = ["group", "y", "score", "__fairviz_n"]
    pd.testing.assert_frame_equal(a.table[cols].reset_index(drop=True), b.table[cols].reset_index(drop=True),
                                  check_dtype=False, rtol=1e-12)
    with pytest.raises(DataError) as on_pg:
        a.predictions()
    with pytest.raises(DataError) as on_duck:
        b.predictions()
    assert on_pg.value.problems == on_duck.value.problems


@pytest.mark.parametrize("args, message", [
    (["--table", "nowhere"], "The table 'nowhere' does not exist in the database."),
    (["--query", "SELECT no_such_column FROM compas"], "The query failed on postgres: "),
    (["--query", "DELETE FROM compas"], "--query runs read-only: a DELETE statement is not a query"),
    (["--query", "SELECT * FROM compas; DROP TABLE compas"], "--query takes one statement"),
    (["--query", "WITH gone AS (DELETE FROM compas RETURNING *) SELECT * FROM gone"], "The query failed on postgres"),
    (["--query", "SELECT *, nextval('counter') AS k FROM compas"], "--query runs read-only and the postgres engine "
                                                                   "refused a write"),
    (["--table", "compas; DROP TABLE compas"], "is not a table name"),
    (["assets/compas.csv"], "--engine postgres audits a table or a query"),
])
def test_bad_input_is_one_sentence_and_nothing_is_written(dsn, tmp_path, capsys, args, message):
    out = tmp_path / "audit.json"
    assert main(["audit", "--engine", "postgres", "--dsn", dsn, *args, "--json", str(out), "--html",
                 str(tmp_path / "a.html")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
    with psycopg.connect(dsn) as con:                  # the table is whole and the sequence never moved
        assert con.execute("SELECT count(*) FROM compas").fetchone()[0] == 7214
        assert con.execute("SELECT last_value, is_called FROM counter").fetchone() == (1, False)


def test_a_refused_connection_and_a_password_on_the_command_line(tmp_path, capsys):
    from tests.data.servers import free_port
    refused = f"postgresql://fairviz@127.0.0.1:{free_port()}/fairviz"
    assert main(["audit", "--engine", "postgres", "--dsn", refused, "--table", "t", "--json",
                 str(tmp_path / "a.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fairviz: error: Could not connect to PostgreSQL: ") and err.count("\n") == 1
    for secret in ("postgresql://u:hunter2@127.0.0.1/db", "host=127.0.0.1 password=hunter2 dbname=db"):
        assert main(["audit", "--engine", "postgres", "--dsn", secret, "--table", "t"]) == 2
        assert "--dsn carries a password" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_query_source_runs_in_a_read_only_transaction(dsn):
    engine = Engine("postgres", dsn=dsn)
    engine.preview(Query("SELECT * FROM compas"))
    assert engine._con.read_only is True
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        engine._con.execute("CREATE TABLE t (a int)")
    engine.close()


def test_hostile_column_names_stay_out_of_the_sql_and_audit_like_plain_ones(dsn, monkeypatch):
    from psycopg import sql
    names = {"label": 'zq1") , current_setting(\'data_directory\') AS "x', "score": "zq2'; SELECT 1; --",
             "group": 'zq3\\" , version() , \\"'}
    frame = pd.DataFrame({"label": [0, 1, 1, 0] * 50, "score": [0.1, 0.9, 0.6, 0.3] * 50,
                          "group": ["a", "a", "b", "b"] * 50})
    load_frame(dsn, "plain_names", frame)
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(sql.SQL("CREATE TABLE hostile_names ({}, {}, {})").format(
            *(sql.SQL("{} {}").format(sql.Identifier(names[c]), sql.SQL(t))
              for c, t in (("label", "bigint"), ("score", "double precision"), ("group", "text")))))
        con.execute("INSERT INTO hostile_names SELECT * FROM plain_names")
    texts = []
    columns = Engine._postgres_columns
    monkeypatch.setattr(Engine, "_postgres_columns", lambda self, text, params=None:
                        texts.append(text) or columns(self, text, params))
    engine = Engine("postgres", dsn=dsn)
    hostile = engine.reduce(Table("hostile_names"), ColumnMapping(names["label"], names["score"], (names["group"],)))
    plain = engine.reduce(Table("plain_names"), ColumnMapping("label", "score", ("group",)))
    engine.close()
    assert hostile.table.to_numpy().tolist() == plain.table.to_numpy().tolist()
    assert texts and not [t for t in texts if "zq" in t]
