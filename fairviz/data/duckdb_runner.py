"""The DuckDB side of ``Engine``: its embedded connection and how each source becomes a relation it reads (files
with the sniffed CSV options, folders and URLs, database tables and queries, Arrow frames), by column position."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from fairviz.data.model import DataError
from fairviz.data.preview import (
    first_line,
)
from fairviz.data.sniff import CsvFormat, sniff_csv
from fairviz.data.sources import (
    Files,
    Frame,
    Location,
    Query,
    Table,
    scheme_of,
)


class DuckDBRunner:
    """Mixed into ``fairviz.data.engine.Engine``: its methods read the engine's state (``kind``, ``master``, the
    connection, the registered columns)."""

    def _duckdb(self):
        if self._con is None:
            import duckdb
            config = {"autoinstall_known_extensions": False}   # never download code at run time (see docs/engines.md)
            if self.memory_limit:
                config["memory_limit"] = self.memory_limit
            if self.threads:
                config["threads"] = int(self.threads)
            if self.database is not None:
                if scheme_of(self.database) is not None or not Path(self.database).is_file():
                    raise DataError(f"Database file not found: {self.database}")
                try:
                    self._con = duckdb.connect(self.database, read_only=True, config=config)
                except duckdb.Error as err:
                    raise DataError(f"'{self.database}' could not be opened as a DuckDB database: "
                                    f"{first_line(err)}") from None
            else:
                self._con = duckdb.connect(config=config)
            self._con.execute("SET enable_progress_bar = false")   # long reductions would draw into the CLI's output
        return self._con

    def _duckdb_relation(self, source, text: tuple[str, ...] = ()) -> str:
        con = self._duckdb()
        if isinstance(source, (Files, Location)):
            files = source.files if isinstance(source, Files) else (source.url,)
            listed = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
            if source.format == "parquet":
                return self._duckdb_positional(f"read_parquet({listed})")
            sniffed = _sniffed(source)
            if sniffed is not None and sniffed.encoding in ("cp1252", "utf-16"):   # DuckDB: no cp1252, no UTF-16 BE
                listed = "[" + ", ".join("'" + f.replace("'", "''") + "'"
                                         for f in self._as_utf8(files, sniffed.encoding)) + "]"
                sniffed = dataclasses.replace(sniffed, encoding="utf-8")
            options = _duckdb_csv_options(sniffed)
            base = f"read_csv({listed}, {options})"
            relation = self._duckdb_positional(base, sniffed.names if sniffed else None)
            wanted = self._text_aliases(text)
            if not wanted:
                return relation
            types = ", ".join("'VARCHAR'" if alias in wanted else "'" + type_name.replace("'", "''") + "'"
                              for alias, type_name in zip(self._aliases(), self._types))
            return self._duckdb_positional(f"read_csv({listed}, {options}, types = [{types}])", self._names)
        if isinstance(source, Table):
            if self.database is None:
                raise DataError("--table on DuckDB names a table of a database file: add --database FILE.duckdb.")
            return self._duckdb_positional(source.table)
        if isinstance(source, Query):
            return self._duckdb_positional(f"({source.text}) AS q")
        data = source.data if isinstance(source, Frame) else source
        if isinstance(source, Frame) and source.is_spark:
            raise DataError("A Spark DataFrame is reduced on its own Spark session, not on DuckDB.")
        con.register("__fairviz_frame", data)
        return self._duckdb_positional("__fairviz_frame")

    def _duckdb_positional(self, base: str, names=None) -> str:
        """``base`` renamed by position; its columns and types from DuckDB (the names from the CSV's own header
        when DuckDB agrees on their number: DuckDB renames duplicates and blanks)."""
        rows = self._run(lambda: self._duckdb().execute(f"DESCRIBE SELECT * FROM {base}").fetchall())
        return self._positional(base, _header_names(names, [r[0] for r in rows]), [r[1] for r in rows])


def _header_names(header, found: list[str]) -> list[str]:
    """The CSV header's own names when the engine found as many columns (the engines rename duplicates and blanks
    their own way: then theirs)."""
    if header is not None and len(header) == len(found) and len(set(header)) == len(header) and all(header):
        return list(header)
    return found


def _sniffed(source: Files | Location) -> CsvFormat | None:
    """How a CSV on this machine is written (a local file, or a file:// URL); None for other URLs (the engine's own
    sniffing reads them)."""
    if isinstance(source, Files):
        return sniff_csv(source.files[0], source.name)
    if source.scheme == "file":
        from urllib.parse import unquote, urlsplit
        path = unquote(urlsplit(source.url).path)
        if Path(path).is_file():
            return sniff_csv(path, source.name)
    return None


def _duckdb_csv_options(sniffed: CsvFormat | None) -> str:
    """read_csv's options for a sniffed CSV (every value one of ours, never text from the file)."""
    options = ["header = true", "auto_type_candidates = ['BIGINT', 'DOUBLE', 'VARCHAR']"]
    if sniffed is not None:
        options += [f"delim = '{sniffed.delimiter}'", "quote = '\"'", "escape = '\"'",
                    f"encoding = '{sniffed.encoding}'"]
        if sniffed.decimal_comma:
            options.append("decimal_separator = ','")
    return ", ".join(options)
