"""One upload and column-mapping component for every page that takes a file (home, explanations, forecasts).

``read_upload`` draws the uploader, reads the file once per upload (keyed on its id: hashing a large file on every
rerun would stall the page), shows a readable error for a file that cannot be read, and previews it with its
name escaped. ``pick`` is the one column-role picker (required or optional roles, the guess preselected), and
``preview`` the one "name: rows × columns" header with the first rows. Each page keeps only its own roles.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from fairviz.core.data import DataError, read_table
from fairviz.core.markup import md
from pages import _ui
from pages._ui import CACHE_TTL

TYPES = ["csv", "txt", "tsv", "parquet", "pq"]
NONE = "(none)"


@dataclass(frozen=True)
class Uploaded:
    frame: pd.DataFrame
    digest: str                  # hash of the file's bytes: part of every cache key downstream
    name: str


@st.cache_data(show_spinner="Reading the file…", max_entries=8, ttl=CACHE_TTL)
def read(file_id: str, name: str, _raw: bytes) -> tuple[pd.DataFrame, str]:
    """Keyed on the upload's id (or a bundled file's name and date), not on the bytes."""
    return read_table(_raw, name)


def read_upload(label: str, key: str, help: str | None = None, empty: str | None = None,
                types: list[str] | None = None) -> Uploaded | None:
    """The uploader and the read. None when no file is uploaded (``empty`` is then shown) or it cannot be read
    (the problem is shown; see ``failed``)."""
    file = st.file_uploader(label, type=types or TYPES, key=key, help=help)
    st.session_state[f"_upload_failed_{key}"] = False
    if file is None:
        if empty:
            st.info(empty)
        return None
    try:
        frame, digest = read(file.file_id, file.name, file.getvalue())
    except DataError as err:
        _ui.show_data_error(err, f"'{file.name}' could not be read")
        st.session_state[f"_upload_failed_{key}"] = True
        return None
    return Uploaded(frame, digest, file.name)


def failed(key: str) -> bool:
    """Whether the uploader ``key`` holds a file that could not be read (as opposed to no file)."""
    return bool(st.session_state.get(f"_upload_failed_{key}"))


def preview(frame: pd.DataFrame, name: str, then: str = "") -> None:
    st.markdown(f"**{md(name)}**: {len(frame):,} rows × {len(frame.columns)} columns.{(' ' + then) if then else ''}")
    st.dataframe(frame.head(5), hide_index=True, width="stretch")


def pick(where, label: str, columns: list[str], guess: str | None = None, optional: bool = False,
         key: str | None = None, help: str | None = None) -> str | None:
    """One column role: a required column (the guess preselected) or an optional one ('(none)' → None)."""
    options = [NONE, *columns] if optional else list(columns)
    index = options.index(guess) if guess in options else 0
    value = where.selectbox(label, options, index=index, key=key, help=help)
    return None if optional and value == NONE else value
