"""A result's records as a display ``Table``: each column with its heading and format, in order. Every calibration
table is built this way, so a page table, an HTML table and the JSON rows are the same records."""
from __future__ import annotations

import pandas as pd

from fairviz.core.display import Table


def record_table(rows: list[dict], key: str, columns: dict, title=None) -> Table:
    """``columns``: key → (heading, format or None), in the order shown."""
    frame = pd.DataFrame(rows, columns=list(columns))
    return Table(frame, key, formats={c: f for c, (_, f) in columns.items() if f},
                 labels={c: label for c, (label, _) in columns.items()}, title=title)
