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

from fairviz.data import reading
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
    monkeypatch.setattr(reading, "MAX_CELLS", 35_000)
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
