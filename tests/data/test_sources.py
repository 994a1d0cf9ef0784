"""Sources as the engine sees them: tables and read-only queries of a DuckDB file, URLs, the Python API over paths
and frames, the operator's listed sources; every bad input one sentence, exit 2, nothing written."""
from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from fairviz.findings import FindingsParams
from tests.data.compare import shared

import fairviz
from fairviz.cli.main import main
from fairviz.data import DataError
from fairviz.data.sources import Files, Location, Query, Table, listed_sources, locate, read_only_query, table_name

from tests.data.test_engine import numbers_differ  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--resamples", "100", "--knee-resamples", "10"]
COMPAS = ["--group", "race", "--threshold", "0.4", "--benefit", "negative", "--positive-label", "1",
          "--reference", "Caucasian"]      # the bundled file's own settings, given to every source


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> Path:
    """A DuckDB file with COMPAS split into scores and demographics (joined by id), and a sequence."""
    path = tmp_path_factory.mktemp("db") / "scored.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE compas AS SELECT * FROM read_csv('assets/compas.csv')")
    con.execute("CREATE TABLE scores AS SELECT * EXCLUDE (race) FROM compas")
    con.execute("CREATE TABLE demographics AS SELECT id, race FROM compas")
    con.execute("CREATE SEQUENCE counter")
    con.close()
    return path


def _audit(capsys, *args) -> dict:
    assert main(["audit", *map(str, args), *FAST, "--json", "-"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_table_and_a_join_of_a_duckdb_file_give_the_file_audit(database, capsys):
    on_file = _audit(capsys, "assets/compas.csv", *COMPAS)
    table = _audit(capsys, "--database", database, "--table", "compas", *COMPAS)
    joined = _audit(capsys, "--database", database, "--query",
                    "SELECT s.*, d.race FROM scores s JOIN demographics d USING (id) -- the join a user writes", *COMPAS)
    assert table["source"] == "compas" and joined["source"] == "query"
    assert numbers_differ(shared(on_file), shared(table), 1e-12) == []
    assert numbers_differ(shared(on_file), shared(joined), 1e-12) == []


def test_a_query_without_a_database_reads_files(capsys):
    on_file = _audit(capsys, "assets/compas.csv", *COMPAS)
    filtered = _audit(capsys, "--query", "SELECT * FROM read_csv('assets/compas.csv')", *COMPAS)
    assert numbers_differ(shared(on_file), shared(filtered), 1e-12) == []


@pytest.mark.parametrize("args, message", [
    (["--database", "{db}", "--table", "nowhere"], "The table 'nowhere' does not exist in '{db}'."),
    (["--table", "compas"], "--table on DuckDB names a table of a database file: add --database FILE.duckdb."),
    (["--database", "{db}.missing", "--table", "compas"], "Database file not found: {db}.missing"),
    (["--database", "{db}", "--query", "SELECT nope FROM compas"], "The query failed on duckdb: "),
    (["--database", "{db}", "--query", "DROP TABLE compas"], "--query runs read-only: a DROP statement is not a query"),
    (["--database", "{db}", "--query", "INSERT INTO compas SELECT * FROM compas"], "a INSERT statement is not a"),
    (["--database", "{db}", "--query", "SELECT 1; DELETE FROM compas"], "--query takes one statement"),
    (["--database", "{db}", "--query", "SELECT *, nextval('counter') AS k FROM compas"],
     "--query runs read-only and the duckdb engine refused a write"),
    (["--database", "{db}", "assets/compas.csv"], "--database goes with --table or --query, not with a path."),
    (["--database", "{db}", "--table", "compas", "--query", "SELECT 1"], "Give one source to audit, not --table and"),
    ([], "Give what to audit: a path, --table NAME or --query"),
    (["ftp://example.invalid/p.parquet"], "The duckdb engine cannot read 'ftp://' URLs"),
    (["hdfs://head:8020/p.parquet"], "The duckdb engine cannot read 'hdfs://' URLs"),
    (["ftp://example.invalid/p.parquet", "--engine", "spark"], "The spark engine cannot read 'ftp://' URLs"),
    (["--table", "x", "--engine", "spark", "--database", "{db}"], "--database names a DuckDB file: it needs --engine"),
    (["--table", "x", "--dsn", "dbname=x"], "--dsn needs --engine postgres."),
    (["--table", "x", "--engine", "spark", "--spark-remote", "spark://h:7077"], "--spark-remote takes a Spark Connect"),
    (["--table", "x", "--spark-remote", "sc://127.0.0.1:1"], "--spark-remote needs --engine spark."),
])
def test_bad_sources_are_one_sentence_exit_2_and_nothing_written(database, tmp_path, capsys, args, message):
    args = [a.replace("{db}", str(database)) for a in args]
    out = tmp_path / "out"
    out.mkdir()
    code = main(["audit", *args, "--json", str(out / "a.json"), "--html", str(out / "a.html"), "--dstar",
                 str(out / "d.csv")])
    err = capsys.readouterr().err
    assert code == 2 and message.replace("{db}", str(database)) in err, err
    assert err.count("\n") == 1 and "Traceback" not in err and list(out.iterdir()) == []
    con = duckdb.connect(str(database), read_only=True)
    assert con.execute("SELECT count(*) FROM compas").fetchone()[0] == 7214     # the file is as it was
    con.close()


def test_urls_are_passed_to_the_engine_untouched():
    assert locate("s3a://bucket/scored/", "spark") == Location("s3a://bucket/scored/")
    assert locate("file:///data/p.csv", "spark").format == "csv"
    assert locate("gs://b/p.parquet", "duckdb").url == "gs://b/p.parquet"
    assert isinstance(locate("assets/compas.csv", "spark"), Files)                 # local paths: today's resolution
    with pytest.raises(DataError, match="File not found"):
        locate("hdfs_mirror/scored", "spark", local_master=True)
    # a cluster's executors cannot read the driver's disk: the cluster resolves the path on its own filesystem, even
    # when a folder of that name is here too
    for path in ("hdfs_mirror/scored", "assets/compas.csv", "parts/*.parquet"):
        assert locate(path, "spark", local_master=False) == Location(path)


def test_duckdb_never_downloads_an_extension_to_read_a_url(capsys):
    """s3:// needs DuckDB's httpfs extension: it is named, never fetched at run time (no traffic leaves the machine)."""
    installed = duckdb.connect().execute("SELECT installed FROM duckdb_extensions() "
                                         "WHERE extension_name = 'httpfs'").fetchone()
    if installed and installed[0]:
        pytest.skip("httpfs is installed here: DuckDB would really try the bucket")
    assert main(["audit", "s3://bucket/scored.parquet"]) == 2
    assert "DuckDB reads URLs through its httpfs extension, which is not installed" in capsys.readouterr().err


def test_table_names_and_queries_are_checked_before_any_engine_runs():
    assert table_name("main.compas") == "main.compas" and table_name('"odd name"."t"') == '"odd name"."t"'
    for bad in ("compas; DROP TABLE compas", "a b", "x.y.z.w", ""):
        with pytest.raises(DataError, match="is not a table name"):
            table_name(bad)
    assert read_only_query("  /* scored */ WITH x AS (SELECT 1) SELECT * FROM x; ") == \
        "WITH x AS (SELECT 1) SELECT * FROM x"
    assert read_only_query("SELECT ';' AS semicolon") == "SELECT ';' AS semicolon"
    for bad in ("UPDATE t SET a = 1", "COPY t TO '/tmp/x'", "ATTACH 'x.db'", "-- only a comment"):
        with pytest.raises(DataError):
            read_only_query(bad)


# ----------------------------------------------------------------------------------------------- the Python API

def test_the_api_gives_the_cli_json_for_a_path_a_pandas_frame_an_arrow_table_and_a_table(database, capsys):
    import pyarrow as pa
    cli = _audit(capsys, "assets/compas.csv", *COMPAS)
    kwargs = dict(label="two_year_recid", score="score", group="race", threshold=0.4, benefit="negative",
                  positive_label="1", resamples=100, knee_resamples=10,             # as the CLI passes it
                  findings=FindingsParams(reference="Caucasian"))
    frame = pd.read_csv("assets/compas.csv")
    results = [fairviz.audit("assets/compas.csv", **kwargs), fairviz.audit(frame, **kwargs),
               fairviz.audit(pa.Table.from_pandas(frame), **kwargs),
               fairviz.audit(table="compas", database=str(database), **kwargs)]
    for result in results:
        assert numbers_differ(shared(cli), shared(result.to_dict()), 1e-12) == []
    first = results[0]
    assert first.to_dict()["source"] == "compas.csv" and results[1].to_dict()["source"] == "DataFrame"
    assert "<html" in first.to_html() and "compas.csv" in first.to_terminal()
    assert first.findings and first.findings[0].startswith("African-American")    # the Summary's top findings
    assert set(first.results) >= {"residuals", "calibration"}


def test_the_api_reads_polars_through_arrow(capsys):
    pl = pytest.importorskip("polars", reason="Polars is not installed (pip install polars): the API reads it "
                                              "through Arrow when it is")
    kwargs = dict(label="two_year_recid", score="score", group="race", positive_label=1, resamples=100,
                  knee_resamples=10)
    from_pandas = fairviz.audit(pd.read_csv("assets/compas.csv"), **kwargs)
    from_polars = fairviz.audit(pl.read_csv("assets/compas.csv"), **kwargs)
    assert numbers_differ(shared(from_pandas.to_dict()), shared(from_polars.to_dict()), 1e-12) == []


def test_the_api_refuses_what_it_cannot_read():
    with pytest.raises(DataError, match="not list"):
        fairviz.audit([1, 2, 3])
    with pytest.raises(DataError, match="Give one thing to audit"):
        fairviz.audit(pd.DataFrame({"a": [1]}), table="t")
    with pytest.raises(DataError, match="reduced by DuckDB, not by postgres"):
        fairviz.audit(pd.DataFrame({"a": [1]}), engine="postgres")


def test_the_notebook_example_in_docs_runs():
    """Every ```python block of docs/engines.md under 'From Python', run in order as a notebook would."""
    text = (ROOT / "docs" / "engines.md").read_text(encoding="utf-8")
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert blocks
    scope: dict = {}
    for block in blocks:
        exec(compile(block, "docs/engines.md", "exec"), scope)       # noqa: S102 - our own documentation
    assert scope["result"].to_dict()["n_rows"] == 7214


# ----------------------------------------------------------------------------------------------- listed sources

def test_the_operator_lists_named_tables_and_queries(tmp_path, database):
    listing = [{"name": "COMPAS", "table": "compas", "database": str(database), "label": "two_year_recid",
                "score": "score", "groups": ["race"]},
               {"name": "Joined", "query": "SELECT s.*, d.race FROM scores s JOIN demographics d USING (id)",
                "dsn": ""}]
    path = tmp_path / "sources.json"
    path.write_text(json.dumps(listing))
    for value in (json.dumps(listing), str(path)):
        first, second = listed_sources(value)
        assert first.engine == "duckdb" and first.source == Table("compas", str(database)) and first.groups == ("race",)
        assert second.engine == "postgres" and isinstance(second.source, Query) and second.dsn is None
    assert listed_sources("") == []


@pytest.mark.parametrize("listing, message", [
    ('[{"name": "x", "table": "t"}]', "exactly one of 'database'"),
    ('[{"name": "x", "table": "t", "query": "SELECT 1", "database": "d"}]', "exactly one of 'table' and 'query'"),
    ('[{"table": "t", "database": "d"}]', "needs a 'name'"),
    ('[{"name": "x", "query": "DELETE FROM t", "database": "d"}]', "runs read-only"),
    ('[{"name": "x", "table": "t", "database": "d", "path": "/etc"}]', "unknown keys: path"),
    ('[{"name": "x", "table": "t", "database": "d"}, {"name": "x", "table": "u", "database": "d"}]', "twice"),
    ("[{", "not valid JSON"),
    ("/nonexistent/sources.json", "cannot be read"),
])
def test_a_bad_listing_is_one_sentence(listing, message):
    with pytest.raises(DataError, match=re.escape(message)):
        listed_sources(listing)
