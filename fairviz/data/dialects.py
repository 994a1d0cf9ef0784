"""What differs between the engines' SQL, in one place: the reduction and the row query are one text otherwise.

DuckDB reads the text as written; Spark quotes names with backticks (so that a session it did not configure — a user's
Spark DataFrame — reads it too); PostgreSQL names the 64-bit float ``DOUBLE PRECISION``, has no ``isnan`` (its NaN
equals itself, unlike IEEE) and calls a few types differently. Everything else — FLOOR, CASE, COUNT/MIN/MAX/SUM, GROUP BY, ROW_NUMBER() OVER — is standard SQL that
all three run unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass

_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
            "FLOAT", "DOUBLE", "REAL", "DECIMAL", "NUMERIC", "INT", "LONG", "SHORT", "BYTE")

_TEXT = ("VARCHAR", "STRING", "TEXT", "CHAR", "CHARACTER", "BPCHAR", "JSON", "NAME", "CITEXT")
_NESTED = ("STRUCT", "MAP", "LIST", "ARRAY", "UNION", "BLOB", "BINARY", "BYTEA", "VARBINARY", "BIT", "VARIANT",
           "GEOMETRY", "ROW")


@dataclass(frozen=True)
class Dialect:
    name: str
    double: str = "DOUBLE"                 # the 64-bit float type in CAST
    nan_test: str = "isnan({})"            # true for NaN only
    quote_mark: str = '"'                  # around a quoted identifier (doubled inside it)
    text: str = "VARCHAR"                  # the string type in CAST

    def quote(self, name: str) -> str:
        """A quoted identifier."""
        return self.quote_mark + str(name).replace(self.quote_mark, self.quote_mark * 2) + self.quote_mark

    def as_double(self, expression: str) -> str:
        return f"CAST({expression} AS {self.double})"

    def is_nan(self, expression: str) -> str:
        return self.nan_test.format(expression)

    def prefix(self, expression: str, chars: int) -> str:
        """The first ``chars`` characters of a string column (a preview never decodes a huge value whole)."""
        return f"substr(CAST({expression} AS {self.text}), 1, {int(chars)})"

    @staticmethod
    def is_text(type_name: str) -> bool:
        return type_name.upper().startswith(_TEXT) and not is_nested(type_name)

    @staticmethod
    def is_numeric(type_name: str) -> bool:
        """Whether a column of this type (the engine's own name, any case) holds numbers (booleans do not)."""
        upper = type_name.upper()
        return upper.startswith(_NUMERIC) and not upper.startswith("BOOL")


def is_nested(type_name: str) -> bool:
    """Lists, arrays, structs, maps, unions and binary values: a preview names these columns and never decodes them
    (a list of a billion nulls is a few bytes on disk)."""
    upper = type_name.upper().strip()
    return upper.startswith(_NESTED) or upper.endswith("]") or "<" in upper


DUCKDB = Dialect("duckdb")
SPARK = Dialect("spark", quote_mark="`", text="STRING")
POSTGRES = Dialect("postgres", double="DOUBLE PRECISION", nan_test="({} = 'NaN')", text="TEXT")
DIALECTS = {d.name: d for d in (DUCKDB, SPARK, POSTGRES)}
