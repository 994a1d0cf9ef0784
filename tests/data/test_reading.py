"""Files that expand: sizes are checked from metadata before decoding, and only the mapped columns are read."""
from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fairviz.data import csv_reading, parquet_reading, reading, table_info
from fairviz.data import DataError, inspect_table, read_preview, read_table

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def write_wide_parquet(path, rows: int = 2_000_000, fillers: int = 100, chunk: int = 250_000) -> None:
    """A ~1 MB Parquet file that decodes to rows × (3 + fillers) float/int/string columns (constant fillers)."""
    fields = [("y", pa.int64()), ("score", pa.float64()), ("group", pa.string())]
    schema = pa.schema(fields + [(f"f{k}", pa.float64()) for k in range(fillers)])
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for start in range(0, rows, chunk):
            k = np.arange(start, min(start + chunk, rows))
            cols = {"y": pa.array(k % 2), "score": pa.array((k % 10) / 10 + 0.05),
                    "group": pa.array(np.where(k % 3 == 0, "a", "b"))}
            zero = pa.array(np.zeros(k.size))
            cols.update({f"f{j}": zero for j in range(fillers)})
            writer.write_table(pa.table(cols, schema=schema))


def test_parquet_metadata_gives_rows_columns_and_sizes():
    buffer = io.BytesIO()
    pd.DataFrame({"y": [1, 0, 1], "score": [0.2, 0.4, 0.9], "group": ["a", "b", "a"]}).to_parquet(buffer)
    info = inspect_table(buffer.getvalue(), "t.parquet")
    assert info.format == "parquet" and info.rows_exact and info.rows == 3
    assert info.columns == ("y", "score", "group")
    assert info.column_bytes["score"] == 3 * 8 and info.column_bytes["y"] == 3 * 8


def test_csv_row_estimate_and_cell_limit(monkeypatch):
    raw = ("y,score,group,extra\n" + "1,0.25,a,x\n0,0.75,b,y\n" * 5000).encode()
    info = inspect_table(raw, "t.csv")
    assert info.format == "csv" and info.columns == ("y", "score", "group", "extra") and info.rows == 10_000
    monkeypatch.setattr(table_info, "MAX_CELLS", 35_000)          # TableInfo.check's limit
    with pytest.raises(DataError, match=r"10,000 rows × 4 columns \(40,000 cells\).*limit is 35,000"):
        read_table(raw, "t.csv")
    frame, _ = read_table(raw, "t.csv", columns=["y", "score", "group"])       # 30,000 cells: allowed
    assert list(frame.columns) == ["y", "score", "group"] and len(frame) == 10_000
    assert frame["score"].sum() == pytest.approx(5000 * 1.0)


def test_large_csv_row_estimate_from_its_first_megabyte():
    line = b"1,0.123456,groupname\n"
    raw = b"y,score,group\n" + line * 200_000                   # 4.2 MB: estimated from the first 1 MB
    info = inspect_table(raw, "t.csv")
    assert not info.rows_exact and abs(info.rows - 200_000) / 200_000 < 0.01


def test_semicolon_csv_reads_only_the_chosen_columns():
    raw = b"y;score;group;note\n1;0.9;a;x\n0;0.2;b;y\n"
    frame, _ = read_table(raw, "t.csv", columns=["y", "group"])
    assert list(frame.columns) == ["y", "group"] and frame["group"].tolist() == ["a", "b"]


def test_latin1_csv_still_reads():
    raw = "y,score,group\n1,0.9,Zürich\n0,0.2,Genève\n".encode("latin-1")
    frame, _ = read_table(raw, "t.csv")
    assert frame["group"].tolist() == ["Zürich", "Genève"]


def test_preview_reads_the_head_of_every_format():
    raw = ("y,score,group\n" + "1,0.9,a\n0,0.2,b\n" * 20_000).encode()
    frame, digest, info = read_preview(raw, "t.csv", rows=100)
    assert len(frame) == 100 and info.rows == 40_000 and len(digest) == 32
    buffer = io.BytesIO()
    pd.DataFrame({"y": np.arange(50_000) % 2, "score": 0.5, "group": "a"}).to_parquet(buffer)
    frame, _, info = read_preview(buffer.getvalue(), "t.parquet", rows=1000)
    assert len(frame) == 1000 and info.rows == 50_000


@pytest.mark.slow
def test_one_megabyte_parquet_that_expands_is_refused_or_read_column_pruned(tmp_path):
    """Issue: a 1 MB Parquet file became a 2M × 103 table (3.6 GB peak) before any check."""
    path = tmp_path / "wide.parquet"
    write_wide_parquet(path)
    assert path.stat().st_size < 2_000_000
    script = textwrap.dedent(f"""
        import resource, sys
        from pathlib import Path
        from fairviz.data import DataError, read_table
        raw = Path({str(path)!r}).read_bytes()
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            read_table(raw, "wide.parquet")
            print("READ ALL")
        except DataError as err:
            print("REFUSED", err)
        frame, _ = read_table(raw, "wide.parquet", columns=["y", "score", "group"])
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print("SHAPE", frame.shape, "RATIO", (peak - base) * 1024 / frame.memory_usage(deep=True).sum())
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "REFUSED" in out.stdout and "2,000,000 rows × 103 columns" in out.stdout
    assert "SHAPE (2000000, 3)" in out.stdout
    ratio = float(out.stdout.split("RATIO")[1])
    assert ratio <= 3.0, out.stdout


# ----------------------------------------------------------------------------------------------- issue 22: previews

def dictionary_bomb(rows: int = 10_000, size: int = 1 << 20) -> bytes:
    """A ~2 KB Parquet file whose 'blob' column repeats one 1 MB string in every row (10 GB decoded)."""
    k = np.arange(rows)
    table = pa.table({"y": k % 2, "score": (k % 10) / 10 + 0.05, "group": np.where(k % 3 == 0, "a", "b"),
                      "blob": pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, np.int32)), ["x" * size])})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def list_bomb(rows: int = 10_000, values: int = 10 ** 8) -> bytes:
    """A ~2 KB Parquet file whose 'nulls' column holds lists of ``values`` nulls in all (GBs as Python objects)."""
    k = np.arange(rows)
    offsets = pa.array(np.linspace(0, values, rows + 1).astype(np.int64))
    table = pa.table({"y": k % 2, "score": (k % 10) / 10 + 0.05, "group": np.where(k % 3 == 0, "a", "b"),
                      "nulls": pa.LargeListArray.from_arrays(offsets, pa.nulls(values))})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def test_dictionary_column_is_counted_decoded_and_refused_when_read_whole():
    raw = dictionary_bomb()
    assert len(raw) < 50_000
    info = inspect_table(raw, "bomb.parquet")
    assert info.column_bytes["blob"] >= 10_000 * (1 << 20)            # the footer alone said about 1 MB
    with pytest.raises(DataError, match=r"GB in memory.*'blob' alone about 9\.8 GB"):
        read_table(raw, "bomb.parquet")
    frame, _ = read_table(raw, "bomb.parquet", columns=["y", "score", "group"])
    assert frame.shape == (10_000, 3)


def test_preview_of_expanding_parquet_stays_small_in_memory(tmp_path):
    """Issue 22 (Critical): a 42 KB Parquet took the server past 6 GB in the preview."""
    (tmp_path / "dict.parquet").write_bytes(dictionary_bomb())
    (tmp_path / "list.parquet").write_bytes(list_bomb())
    script = textwrap.dedent(f"""
        import resource
        from pathlib import Path
        from fairviz.data import read_preview
        for name in ("dict.parquet", "list.parquet"):
            raw = Path({str(tmp_path)!r}, name).read_bytes()
            base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            frame, _, info = read_preview(raw, name)
            grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
            print(name, frame.shape, round(grown), "MB", repr(frame.iloc[0, 3][:30]), "|", " ".join(info.notes))
    """)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.strip().splitlines())
    for name, line in lines.items():
        grown = int(line.split(" MB")[0].rsplit(" ", 1)[1])
        assert grown < 300, out.stdout
        assert line.startswith("(10000, 4)"), out.stdout
    assert "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'" in lines["dict.parquet"]             # cut, not expanded
    assert "'(list column, not read)'" in lines["list.parquet"]
    assert "Not decoded for the preview: 'nulls'" in lines["list.parquet"]


def test_preview_texts_are_cut_and_list_estimate_counts_elements():
    frame, _, info = read_preview(dictionary_bomb(rows=50, size=5_000), "d.parquet")
    assert frame["blob"].str.len().max() == reading.PREVIEW_CHARS + 1                   # 200 characters and '…'
    info = inspect_table(list_bomb(rows=10, values=10 ** 6), "l.parquet")
    assert info.column_bytes["nulls"] >= 8 * 10 ** 6


def test_wide_csv_preview_is_bounded_in_cells_and_too_wide_files_are_refused(monkeypatch):
    header = ",".join(["y", "score", "group"] + [f"c{k}" for k in range(997)])
    raw = (header + "\n" + ("1,0.5,a" + ",0" * 997 + "\n") * 3_000).encode()
    monkeypatch.setattr(reading, "PREVIEW_CELLS", 200_000)
    frame, _, info = read_preview(raw, "wide.csv")
    assert frame.shape == (200, 1000)
    assert any("first 200 rows" in n and "1,000 columns" in n for n in info.notes)
    for module in (reading, table_info):                           # the preview's and check_names' limit
        monkeypatch.setattr(module, "MAX_COLUMNS", 999)
    with pytest.raises(DataError, match=r"'wide.csv' has 1,000 columns; the limit is 999"):
        read_preview(raw, "wide.csv")


def test_csv_preview_reads_a_bounded_prefix(monkeypatch):
    for module in (reading, csv_reading, parquet_reading):
        monkeypatch.setattr(module, "PREVIEW_BYTES", 4096)
    raw = ("y,score,group\n" + "1,0.5,a\n" * 10_000).encode()
    frame, _, _ = read_preview(raw, "t.csv")
    assert 0 < len(frame) <= 4096 // 8


# ----------------------------------------------------------------------------------------------- names from the parser

def test_quoted_header_names_with_commas_and_quotes_are_found():
    raw = b'"label, y","score, p","group, g","say ""hi""",c0\n1,0.9,a,x,0\n0,0.2,b,y,0\n'
    info = inspect_table(raw, "q.csv")
    assert info.columns == ("label, y", "score, p", "group, g", 'say "hi"', "c0")
    frame, _ = read_table(raw, "q.csv", columns=["label, y", "score, p", "group, g"])
    assert list(frame.columns) == ["label, y", "score, p", "group, g"] and frame["group, g"].tolist() == ["a", "b"]


def test_excel_csv_utf8_with_a_byte_order_mark():
    raw = "\ufefflabel,score,group\n1,0.9,Zürich\n0,0.2,Genève\n".encode("utf-8")
    assert inspect_table(raw, "excel.csv").columns == ("label", "score", "group")
    frame, _ = read_table(raw, "excel.csv", columns=["label", "score"])
    assert list(frame.columns) == ["label", "score"] and frame["label"].tolist() == [1, 0]


def test_an_empty_selection_is_an_error_never_every_column():
    raw = b"y,score,group,extra\n1,0.9,a,x\n"
    with pytest.raises(DataError, match="No column of 't.csv' was chosen"):
        read_table(raw, "t.csv", columns=[])
    with pytest.raises(DataError, match=r"None of the chosen columns \('label'\) is in 't.csv'"):
        read_table(raw, "t.csv", columns=["label"])


@pytest.mark.parametrize("header, fragment", [
    (b"y,score,score", "'score' (columns 2, 3) is used twice"),
    (b"y,score, score ", "'score' (columns 2, 3) is used twice"),
    (b"y,,group", "column 2 has no name"),
])
def test_duplicate_blank_or_space_equal_names_are_named(header, fragment):
    with pytest.raises(DataError) as info:
        read_preview(header + b"\n1,0.5,a\n", "names.csv")
    assert fragment in str(info.value) and "give every column its own name" in str(info.value)


def test_ten_megabyte_header_line_gets_a_plain_message():
    with pytest.raises(DataError, match="no line break in its first 1 MB"):
        read_preview(b"c," * (5 << 20), "huge.csv")


@pytest.mark.parametrize("raw, columns", [
    ("y,score,group\n1,0.5,a\n0,0.25,b\n".encode("utf-16"), ["y", "score", "group"]),
    ("y;score;group\n1;0,5;€uro\n0;0,25;Genève\n".encode("cp1252"), ["y", "score", "group"]),
    (b"y\tscore\tgroup\n1\t0.5\ta\n0\t0.25\tb\n", ["y", "score", "group"]),
    (b"y|score|group\n1|0.5|a\n0|0.25|b\n", ["y", "score", "group"]),
])
def test_encodings_delimiters_and_decimal_commas(raw, columns):
    frame, _ = read_table(raw, "t.csv")
    assert list(frame.columns) == columns and frame["score"].tolist() == [0.5, 0.25]


# ----------------------------------------------------------------------------------------------- one set of rules

def test_group_codes_that_print_differently_stay_distinct_groups():
    from fairviz.data import ColumnMapping, build_predictions
    raw = b"y,score,group\n" + b"1,0.9,01\n0,0.2,01\n1,0.8,1\n0,0.3,1\n1,0.7,1.0\n0,0.1,1.0\n"
    frame, _ = read_table(raw, "codes.csv")
    pred = build_predictions(frame, ColumnMapping("y", "score", ("group",)))
    assert sorted(pred.groups().names) == ["01", "1", "1.0"]
    assert read_table(b"y,score,n\n1,0.5,3\n0,0.2,4\n", "n.csv")[0]["n"].dtype.kind == "i"   # plain numbers stay


@pytest.mark.parametrize("missing", ["", "NA", "NaN", "null", "None", "N/A"])
def test_missing_words_drop_the_row_and_are_counted(missing):
    from fairviz.data import ColumnMapping, build_predictions
    text = f"y,score,group\n1,{missing},a\n0,0.2,a\n1,0.6,a\n1,0.8,b\n0,0.3,b\n{missing},0.4,a\n1,0.5,{missing}\n"
    for frame in (read_table(text.encode(), "na.csv")[0], pd.read_csv(io.StringIO(text), keep_default_na=False)):
        pred = build_predictions(frame, ColumnMapping("y", "score", ("group",)))
        assert pred.n == 4 and pred.notes[0] == "3 of 7 rows dropped for a missing label, score or group value."


def test_text_in_a_score_column_is_refused_naming_it_even_after_many_numbers():
    from fairviz.data import ColumnMapping, build_predictions
    raw = b"y,score,group\n" + b"1,0.5,a\n0,0.2,b\n" * 60_000 + b"0,high,b\n"
    frame, _ = read_table(raw, "late.csv")
    with pytest.raises(DataError) as info:
        build_predictions(frame, ColumnMapping("y", "score", ("group",)))
    assert info.value.problems == ["The score column 'score' has 1 non-numeric values (e.g. 'high'); "
                                   "scores must be numbers in [0, 1]."]


def test_parquet_sizes_are_counted_for_names_with_dots():
    buffer = io.BytesIO()
    pq.write_table(pa.table({"a.b": ["x" * 100] * 10, "s": pa.array([{"a": 1, "b": "x"}] * 10), "z": [0.5] * 10}),
                   buffer)
    sizes = inspect_table(buffer.getvalue(), "dots.parquet").column_bytes
    assert sizes["a.b"] >= 10 * 100 and sizes["z"] == 80
