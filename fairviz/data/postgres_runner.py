"""The PostgreSQL side of ``Engine``: the read-only connection, tables and queries as relations, their column types,
and SQL run inside a read-only transaction."""
from __future__ import annotations

import io

import pandas as pd

from fairviz.data.model import DataError
from fairviz.data.preview import (
    first_line,
)
from fairviz.data.sources import (
    Query,
    Table,
)


class PostgresRunner:
    """Mixed into ``fairviz.data.engine.Engine``: its methods read the engine's state (``kind``, ``master``, the
    connection, the registered columns)."""

    def _postgres(self):
        if self._con is None:
            try:
                import psycopg
            except ImportError:
                raise DataError("--engine postgres needs psycopg (pip install 'psycopg[binary]==3.3.6').") from None
            try:
                self._con = psycopg.connect(self.dsn or "", connect_timeout=10, application_name="fairviz")
            except psycopg.Error as err:
                raise DataError(f"Could not connect to PostgreSQL: {first_line(err)}") from None
            except Exception as err:
                raise DataError(f"The PostgreSQL connection string is not valid: {first_line(err)}") from None
            self._con.read_only = True        # every transaction: BEGIN READ ONLY
        return self._con

    def _postgres_relation(self, source) -> str:
        if isinstance(source, Table):
            base = source.table
        elif isinstance(source, Query):
            base = f"({source.text}) AS q"
        else:
            raise DataError("--engine postgres audits a table or a query of the database: give --table NAME or "
                            "--query 'SELECT …'.")
        columns = self._run(lambda: self._postgres_columns(f"SELECT * FROM {base}"))
        return self._positional(base, [n for n, _ in columns], [t for _, t in columns])

    def _postgres_types(self, text: str, params=None) -> dict[str, str]:
        return dict(self._postgres_columns(text, params))

    def _postgres_columns(self, text: str, params=None) -> list[tuple[str, str]]:
        """The columns of a query and their PostgreSQL types, planned but not run (LIMIT 0)."""
        con = self._postgres()
        with con.cursor() as cur:
            cur.execute(f"SELECT * FROM ({text}) AS t LIMIT 0", params)
            columns = [(d.name, d.type_code) for d in cur.description]
            cur.execute("SELECT oid::int, format_type(oid, NULL) FROM pg_type WHERE oid = ANY(%s)",
                        [[oid for _, oid in columns]])
            names = dict(cur.fetchall())
        con.rollback()
        return [(name, names.get(oid, "text")) for name, oid in columns]

    def _postgres_sql(self, text: str, params=None) -> pd.DataFrame:
        """A query's rows through COPY … TO STDOUT as CSV, parsed by Arrow with the columns' own types."""
        import pyarrow as pa
        import pyarrow.csv as pacsv
        types = self._postgres_types(text, params)
        con = self._postgres()
        buffer = io.BytesIO()
        with con.cursor() as cur:
            with cur.copy(f"COPY ({text}) TO STDOUT WITH (FORMAT csv, HEADER true)", params) as copy:
                for chunk in copy:
                    buffer.write(chunk)
        con.rollback()
        arrow = {name: _arrow_type(type_name) for name, type_name in types.items()}
        table = pacsv.read_csv(io.BytesIO(buffer.getvalue()), read_options=pacsv.ReadOptions(column_names=list(types),
                                                                                              skip_rows=1),
                               convert_options=pacsv.ConvertOptions(
                                   column_types=arrow, null_values=[""], strings_can_be_null=True,
                                   quoted_strings_can_be_null=False, true_values=["t"], false_values=["f"]))
        if table.num_rows == 0:
            table = pa.table({name: pa.array([], type=t) for name, t in arrow.items()})
        return table.to_pandas()


def _arrow_type(type_name: str):
    """A PostgreSQL type name → the Arrow type its CSV text is parsed as (what DuckDB's own types give)."""
    import pyarrow as pa
    name = type_name.lower()
    if name in ("smallint", "integer", "bigint"):
        return pa.int64()
    if name in ("real", "double precision") or name.startswith("numeric"):
        return pa.float64()
    if name == "boolean":
        return pa.bool_()
    return pa.string()
