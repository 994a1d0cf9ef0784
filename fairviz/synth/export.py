"""The synthetic table as a CSV that is safe to open in a spreadsheet."""
from __future__ import annotations

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells starting with = + - @ (a spreadsheet would run them as formulas) get a leading apostrophe.
    Numeric columns are left alone: a negative number is a number, not a formula."""
    out = frame.copy()
    for name in out.columns:
        if not pd.api.types.is_numeric_dtype(out[name]) and not pd.api.types.is_bool_dtype(out[name]):
            text = out[name].astype(str)
            out[name] = text.where(~text.str.startswith(FORMULA_STARTS), "'" + text)
    return out


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return neutralise(frame).to_csv(index=False, lineterminator="\n", float_format="%.6f").encode()
