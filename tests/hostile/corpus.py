"""A corpus of hostile input files, each with what fairviz must make of it: a correct audit (every path finds the
same groups) or one plain message (a pattern). ``write_corpus(folder)`` writes them; ``tests/hostile/test_corpus.py``
runs each through the row path, ``fairviz audit`` (DuckDB, and Spark for a few), and the app's upload.

Paths: "row" (read_table + build_predictions with the guessed mapping), "cli" (fairviz audit --engine duckdb),
"app" (Home's upload and mapping form), "spark" (fairviz audit --engine spark). ``fixed_by`` marks a path that a
parallel branch fixes: {path: helper}, so those cases are expected failures here (strict=False) until it merges.
"""
from __future__ import annotations

import codecs
import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

AUDIT = "audit"
ROWS = 240


@dataclass(frozen=True)
class Case:
    name: str                                   # the file name (its extension is part of the test)
    build: Callable[[], bytes]
    expect: str = AUDIT                         # AUDIT, or a regular expression the one-line message matches
    groups: tuple[str, ...] | None = None       # the audited attribute's groups, when they are the point
    fixed_by: dict = field(default_factory=dict)
    spark: bool = False                         # also through --engine spark (slow)
    expect_on: dict = field(default_factory=dict)   # path → outcome where a path settles it otherwise (the app's
                                                    # form asks; the CLI converts an unambiguous scale, the bare
                                                    # row path with the guessed mapping does not)
    smoke: bool = False                         # its audit runs on the CLI and app paths in the quick run too

    @property
    def quick(self) -> bool:
        """Whether every path runs it without the slow marker: its outcome is a message (fast), or the point of
        the case is what the audit finds (its groups), or it is marked smoke. Other audits are ~2 s per path."""
        return self.expect != AUDIT or self.groups is not None or self.smoke


def frame(n: int = ROWS, groups=("a", "b"), seed: int = 0, group_column: str = "group") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    score = rng.uniform(0.05, 0.95, n).round(4)
    return pd.DataFrame({"y": rng.binomial(1, score), "score": score,
                         group_column: np.resize(np.asarray(groups, dtype=object), n)})


def csv_bytes(data: pd.DataFrame, encoding: str = "utf-8", **options) -> bytes:
    return data.to_csv(index=False, **options).encode(encoding)


def parquet_bytes(table) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq
    buffer = io.BytesIO()
    pq.write_table(table if isinstance(table, pa.Table) else pa.Table.from_pandas(table, preserve_index=False),
                   buffer, compression="zstd")
    return buffer.getvalue()


def with_column(data: pd.DataFrame, column: str, values) -> pd.DataFrame:
    data = data.copy()
    data[column] = values
    return data


def replaced(data: pd.DataFrame, column: str, every: int, value) -> pd.DataFrame:
    data = data.copy().astype({column: object})
    data.loc[data.index[::every], column] = value
    return data


def header(text: str, data: pd.DataFrame | None = None) -> bytes:
    """``text`` as the header line over the rows of ``data`` (the default frame)."""
    body = (data if data is not None else frame()).to_csv(index=False, header=False)
    return (text + "\n" + body).encode()


def arrow_with(column: str, array, n: int = ROWS) -> bytes:
    import pyarrow as pa
    table = pa.Table.from_pandas(frame(n), preserve_index=False)
    return parquet_bytes(table.append_column(column, array))


def dictionary_bomb(n: int = 2_000, size: int = 64 * 1024) -> bytes:
    """One 64 KB string in every row of a dictionary column: ~2 KB on disk, 128 MB decoded."""
    import pyarrow as pa
    return arrow_with("blob", pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), ["x" * size]), n)


def list_bomb(n: int = ROWS, values: int = 10 ** 7) -> bytes:
    import pyarrow as pa
    offsets = pa.array(np.linspace(0, values, n + 1).astype(np.int64))
    return arrow_with("nulls", pa.LargeListArray.from_arrays(offsets, pa.nulls(values)), n)


def reversed_scores() -> bytes:
    """The score is the probability of the negative outcome (label 1 when the score is low)."""
    data = frame(2_000)
    rng = np.random.default_rng(5)
    data["y"] = rng.binomial(1, 1 - data["score"])
    return csv_bytes(data)


def _bad_parquet(cut: str) -> bytes:
    raw = parquet_bytes(frame())
    return raw[: len(raw) // 2] if cut == "half" else raw[:-12] + b"\x00" * 8 + raw[-4:]


MARKUP = ["[click me](http://evil.example/x)", "![x](http://evil.example/t.png)", "<script>alert(1)</script>",
          "<img src=x onerror=alert(2)>", "http://evil.example/", "=HYPERLINK(\"http://evil\")",
          "'; DROP TABLE src; --", "\" OR 1=1 --", "`rm -rf /`", "**bold** _it_ $x$"]
NON_BINARY = r"must be binary|distinct values"


def cases() -> list[Case]:
    f = frame()
    return [
        # encodings
        Case("utf8.csv", lambda: csv_bytes(f), spark=True),
        Case("utf8_bom.csv", lambda: codecs.BOM_UTF8 + csv_bytes(f), spark=True, smoke=True),
        Case("utf16.csv", lambda: csv_bytes(f, "utf-16")),
        Case("utf16_be.csv", lambda: codecs.BOM_UTF16_BE + csv_bytes(f, "utf-16-be")),
        Case("latin1.csv", lambda: csv_bytes(frame(groups=("Zürich", "Genève")), "latin-1"),
             groups=("Genève", "Zürich"), spark=True),
        Case("cp1252.csv", lambda: csv_bytes(frame(groups=("€uro", "naïve…")), "cp1252"),
             groups=("naïve…", "€uro")),
        Case("utf8_names.csv", lambda: csv_bytes(frame(groups=("女性", "男性 🙂"))), groups=("女性", "男性 🙂")),
        Case("bidi_zero_width.csv", lambda: csv_bytes(frame(groups=("a\u202eb", "c\u200bd")))),
        # delimiters, quoting, decimal marks, line endings
        Case("semicolon.csv", lambda: csv_bytes(f, sep=";"), spark=True),
        Case("tab.tsv", lambda: csv_bytes(f, sep="\t"), spark=True),
        Case("pipe.csv", lambda: csv_bytes(f, sep="|")),
        Case("semicolon_decimal_comma.csv", lambda: csv_bytes(f, sep=";", decimal=",")),
        Case("tab_decimal_comma.csv", lambda: csv_bytes(f, sep="\t", decimal=",")),
        Case("quote_all.csv", lambda: csv_bytes(f, quoting=csv.QUOTE_ALL)),
        Case("crlf.csv", lambda: csv_bytes(f, lineterminator="\r\n")),
        Case("no_final_newline.csv", lambda: csv_bytes(f).rstrip(b"\n")),
        Case("blank_lines_at_end.csv", lambda: csv_bytes(f) + b"\n\n\n"),
        Case("comma_decimal_quoted_in_comma_file.csv",
             lambda: csv_bytes(f.assign(score=f["score"].map(lambda v: f"{v}".replace(".", ",")))),
             expect=r"score.*non-numeric", expect_on={"app": r"none can be the score"}),   # the form offers
        # headers and names                                                                 # numeric scores only
        Case("quoted_header_commas.csv", lambda: header('"y, label","score, p","group, g",c0',
                                                        f.assign(c0=0)), smoke=True),
        Case("header_spaces.csv", lambda: header(" y , score , group ")),
        Case("names_markup.csv", lambda: header('y,score,group,"[x](http://evil.example)","<b>bold</b>"',
                                                f.assign(a=1, b=2)), smoke=True),
        Case("names_sql.csv", lambda: header('y,score,group,"x"" FROM t; --","`; DROP TABLE t"',
                                             f.assign(a=1, b=2))),
        Case("names_internal.csv", lambda: header("y,score,group,__fairviz_n,__fairviz_cell",
                                                  f.assign(a=1, b=2))),
        Case("long_names.csv", lambda: header("y,score,group," + "n" * 5_000, f.assign(a=1))),
        Case("duplicate_names.csv", lambda: header("y,score,score", f), expect=r"'score' \(columns 2, 3\) is used twice"),
        Case("strip_equal_names.csv", lambda: header("y,score, score ", f),
             expect=r"'score' \(columns 2, 3\) is used twice"),
        Case("blank_name.csv", lambda: header("y,,group", f), expect=r"column 2 has no name"),
        Case("header_only.csv", lambda: b"y,score,group\n", expect=r"no (data )?rows"),
        Case("empty.csv", lambda: b"", expect=r"is empty"),
        Case("whitespace.csv", lambda: b"  \n\n  \n", expect=r"is empty|no (data )?rows"),
        Case("huge_header.csv", lambda: b"c," * (5 << 20) + b"\n1\n", expect=r"no line break in its first 1 MB"),
        Case("wide_5000.csv", lambda: csv_bytes(pd.concat([f, pd.DataFrame(
            np.zeros((ROWS, 5_000), np.int8), columns=[f"c{k}" for k in range(5_000)])], axis=1))),
        Case("too_wide.csv", lambda: (",".join(f"c{k}" for k in range(10_001)) + "\n" +
                                      ",".join("1" for _ in range(10_001)) + "\n").encode(),
             expect=r"10,001 columns; the limit is 10,000"),
        # broken files
        Case("truncated.csv", lambda: csv_bytes(f)[:-7], expect=r"fields where the header has 3",
             expect_on={"cli": r"CSV Error on Line: \d+ \(rows must have the 3 fields of the header\)"}),
        Case("extra_field.csv", lambda: csv_bytes(f) + b"1,0.5,a,extra\n", expect=r"fields where the header has 3",
             expect_on={"cli": r"CSV Error on Line: \d+ \(rows must have the 3 fields of the header\)"}),
        Case("unclosed_quote.csv", lambda: csv_bytes(f) + b'1,0.5,"a\n',          # the row path: the quote runs to
             expect_on={"cli": r"CSV Error on Line: \d+"}),                     # the end ('a'); DuckDB names it

        Case("binary_garbage.csv", lambda: bytes(range(256)) * 40, expect=r"binary file"),
        Case("zip_named_csv.csv", lambda: b"PK\x03\x04" + b"\x00" * 200, expect=r"binary file"),
        Case("truncated.parquet", lambda: _bad_parquet("half"), expect=r"could not be read as Parquet"),
        Case("corrupt_footer.parquet", lambda: _bad_parquet("footer"), expect=r"could not be read as Parquet"),
        Case("magic_only.parquet", lambda: b"PAR1", expect=r"could not be read as Parquet|is empty"),
        Case("csv_named.parquet", lambda: csv_bytes(f), expect=r"could not be read as Parquet"),
        Case("parquet_named.csv", lambda: parquet_bytes(f)),
        # scores
        Case("score_nan_words.csv", lambda: csv_bytes(replaced(f, "score", 7, "NaN"))),
        Case("score_na_words.csv", lambda: csv_bytes(replaced(replaced(f, "score", 9, "NA"), "score", 11, "null"))),
        Case("score_empty.csv", lambda: csv_bytes(replaced(f, "score", 5, ""))),
        Case("score_inf.csv", lambda: csv_bytes(replaced(f, "score", 13, "inf")), expect=r"infinite values"),
        Case("score_text.csv", lambda: csv_bytes(replaced(f, "score", 13, "high")),
             expect=r"score column 'score' has \d+ non-numeric values \(e\.g\. 'high'\)"),
        Case("score_late_text.csv", lambda: csv_bytes(replaced(frame(30_000), "score", 29_999, "oops")),
             expect=r"non-numeric values \(e\.g\. 'oops'\)"),
        Case("score_percent.csv", lambda: csv_bytes(f.assign(score=(f["score"] * 100).round(2))),
             expect=r"outside \[0, 1\]|percent", expect_on={"cli": AUDIT, "app": AUDIT}),
        Case("score_logit.csv", lambda: csv_bytes(f.assign(score=np.log(f["score"] / (1 - f["score"])).round(4))),
             expect=r"outside \[0, 1\]|logit", expect_on={"cli": AUDIT, "app": AUDIT}),
        Case("score_reversed.csv", reversed_scores, expect=r"other way|direction"),
        Case("score_bool.csv", lambda: csv_bytes(f.assign(score=f["score"] > 0.5, p=f["score"]).drop(columns="p")),
             expect=r"true/false|score"),
        Case("score_all_missing.csv", lambda: csv_bytes(f.assign(score="NA")), expect=r"missing|non-numeric|score"),
        Case("score_constant.csv", lambda: csv_bytes(f.assign(score=0.5))),
        Case("score_hard_0_1.csv", lambda: csv_bytes(f.assign(score=f["y"]))),
        # labels
        Case("label_yes_no.csv", lambda: csv_bytes(f.assign(y=np.where(f["y"] == 1, "yes", "no")))),
        Case("label_true_false.csv", lambda: csv_bytes(f.assign(y=f["y"] == 1))),
        Case("label_floats.csv", lambda: csv_bytes(f.assign(y=f["y"].astype(float)))),
        Case("label_three_values.csv", lambda: csv_bytes(f.assign(y=np.resize([0, 1, 2], ROWS))), expect=NON_BINARY),
        Case("label_unknown_words.csv", lambda: csv_bytes(f.assign(y=np.where(f["y"] == 1, "approved", "denied"))),
             expect=r"positive", expect_on={"app": r"other way"}),    # the form's guess runs the score backwards
        Case("label_na_words.csv", lambda: csv_bytes(replaced(f, "y", 9, "NA"))),
        # groups
        Case("group_codes_01_1.csv", lambda: csv_bytes(frame(groups=("01", "1"))), groups=("01", "1")),
        Case("group_codes_1_1.0.csv", lambda: header("y,score,group", frame(groups=("1", "1.0"))),
             groups=("1", "1.0")),
        Case("group_numbers.csv", lambda: csv_bytes(frame(groups=(1, 2, 3))), groups=("1", "2", "3")),
        Case("group_na.csv", lambda: csv_bytes(replaced(frame(groups=("a", "b", "c")), "group", 7, "NA")),
             groups=("a", "b", "c")),
        Case("group_blank.csv", lambda: csv_bytes(replaced(f, "group", 7, " "))),
        Case("one_group.csv", lambda: csv_bytes(frame(groups=("only",))), expect=r"single value|two groups"),
        Case("one_row.csv", lambda: csv_bytes(f.head(1)), expect=r"single value|two groups|binary|positive"),
        Case("tiny_group.csv", lambda: csv_bytes(pd.concat([f, frame(1, groups=("solo",))]))),
        Case("many_groups.csv", lambda: csv_bytes(frame(600, groups=[f"g{k:03d}" for k in range(300)])),
             expect=r"300 groups; the limit is 200"),
        Case("group_markup.csv", lambda: csv_bytes(frame(400, groups=MARKUP[:5])), groups=tuple(sorted(MARKUP[:5]))),
        Case("group_sql_formula.csv", lambda: csv_bytes(frame(400, groups=MARKUP[5:])),
             groups=tuple(sorted(MARKUP[5:])), spark=True),
        Case("group_spaces_merge.csv", lambda: csv_bytes(frame(groups=("a", " a", "b"))), groups=("a", "b")),
        Case("group_column_named_like_sql.csv", lambda: csv_bytes(frame(group_column="group\" OR 1=1 --"))),
        # Parquet
        Case("plain.parquet", lambda: parquet_bytes(f), spark=True),
        Case("categorical_groups.parquet", lambda: parquet_bytes(f.astype({"group": "category"}))),
        Case("int_groups.parquet", lambda: parquet_bytes(frame(groups=(1, 2)).astype({"group": "int64"})),
             groups=("1", "2")),
        Case("nan_scores.parquet", lambda: parquet_bytes(replaced(f, "score", 7, np.nan).astype({"score": float}))),
        Case("empty_rows.parquet", lambda: parquet_bytes(f.head(0)), expect=r"no (data )?rows"),
        Case("dictionary_bomb.parquet", dictionary_bomb, smoke=True),
        Case("list_column.parquet", list_bomb, smoke=True),
        Case("struct_column.parquet", lambda: arrow_with("s", __import__("pyarrow").array(
            [{"a": k, "b": str(k)} for k in range(ROWS)]))),
        Case("binary_column.parquet", lambda: arrow_with("bin", __import__("pyarrow").array(
            [bytes([k % 256]) * 10 for k in range(ROWS)], __import__("pyarrow").binary()))),
        Case("markup_names.parquet", lambda: parquet_bytes(f.assign(**{MARKUP[0]: 1, MARKUP[6]: 2}))),
    ]


def write_corpus(folder: Path) -> list[tuple[Case, Path]]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for case in cases():
        path = folder / case.name
        path.write_bytes(case.build())
        written.append((case, path))
    return written
