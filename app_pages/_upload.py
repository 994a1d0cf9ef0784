"""One upload and column-mapping component for every page that takes a file (home, explanations, forecasts).

``read_upload`` draws the uploader, reads the file once per upload (keyed on its id: hashing a large file on every
rerun would stall the page), shows a readable error for a file that cannot be read, and previews it with its
name escaped. ``pick`` is the one column-role picker (required or optional roles, the guess preselected), and
``preview`` the one "name: rows × columns" header with the first rows. Each page keeps only its own roles.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from fairviz.data import ColumnMapping, DataError, Predictions, build_predictions, read_preview, read_table
from fairviz.data.engine import Engine, SufficientStats
from fairviz.core.markup import md
from app_pages import _ui
from app_pages._ui import CACHE_TTL

TYPES = ["csv", "txt", "tsv", "parquet", "pq"]
NONE = "(none)"


@dataclass(frozen=True)
class Uploaded:
    frame: pd.DataFrame          # the whole file, or its first rows when read with ``preview_only``
    digest: str                  # hash of the file's bytes: part of every cache key downstream
    name: str
    rows: str = ""               # the file's row count from its metadata ("about …" when estimated)
    file_id: str = ""
    raw: bytes = field(default=b"", repr=False, compare=False)

    def columns(self, names) -> tuple[pd.DataFrame, str]:
        """Only these columns of the whole file, decoded once per upload (their size checked first)."""
        return _read_columns(self.file_id, self.name, self.raw, tuple(dict.fromkeys(names)))


@st.cache_data(show_spinner="Reading the file…", max_entries=8, ttl=CACHE_TTL)
def read(file_id: str, name: str, _raw: bytes) -> tuple[pd.DataFrame, str]:
    """Keyed on the upload's id (or a bundled file's name and date), not on the bytes."""
    return read_table(_raw, name)


@st.cache_data(show_spinner="Reading the file…", max_entries=8, ttl=CACHE_TTL)
def _read_preview(file_id: str, name: str, _raw: bytes) -> tuple[pd.DataFrame, str, str]:
    """The first rows (to map the columns) and the size from metadata: a file that would expand past the memory
    limits is refused before it is decoded."""
    frame, digest, info = read_preview(_raw, name)
    info.check([])                        # rows alone over the limit: say so now, not after the mapping
    return frame, digest, f"{info.rows:,}" if info.rows_exact else f"about {info.rows:,}"


@st.cache_data(show_spinner="Reading the chosen columns…", max_entries=2, ttl=CACHE_TTL)
def _read_columns(file_id: str, name: str, _raw: bytes, columns: tuple[str, ...]) -> tuple[pd.DataFrame, str]:
    return read_table(_raw, name, columns=columns)


def read_upload(label: str, key: str, help: str | None = None, empty: str | None = None,
                types: list[str] | None = None, preview_only: bool = False) -> Uploaded | None:
    """The uploader and the read. None when no file is uploaded (``empty`` is then shown) or it cannot be read
    (the problem is shown; see ``failed``). ``preview_only``: read the first rows and the size now, and the mapped
    columns later with ``Uploaded.columns`` (large prediction files)."""
    file = st.file_uploader(label, type=types or TYPES, key=key, help=help)
    st.session_state[f"_upload_failed_{key}"] = False
    if file is None:
        if empty:
            st.info(empty)
        return None
    try:
        if preview_only:
            frame, digest, rows = _read_preview(file.file_id, file.name, file.getvalue())
        else:
            (frame, digest), rows = read(file.file_id, file.name, file.getvalue()), ""
    except DataError as err:
        _ui.show_data_error(err, f"'{file.name}' could not be read")
        st.session_state[f"_upload_failed_{key}"] = True
        return None
    return Uploaded(frame, digest, file.name, rows or f"{len(frame):,}", file.file_id, file.getvalue())


def failed(key: str) -> bool:
    """Whether the uploader ``key`` holds a file that could not be read (as opposed to no file)."""
    return bool(st.session_state.get(f"_upload_failed_{key}"))


def preview(frame: pd.DataFrame, name: str, then: str = "", rows: str | None = None) -> None:
    rows = rows or f"{len(frame):,}"
    st.markdown(f"**{md(name)}**: {rows} rows × {len(frame.columns)} columns.{(' ' + then) if then else ''}")
    st.dataframe(frame.head(5), hide_index=True, width="stretch")


def pick(where, label: str, columns: list[str], guess: str | None = None, optional: bool = False,
         key: str | None = None, help: str | None = None) -> str | None:
    """One column role: a required column (the guess preselected) or an optional one ('(none)' → None)."""
    options = [NONE, *columns] if optional else list(columns)
    index = options.index(guess) if guess in options else 0
    value = where.selectbox(label, options, index=index, key=key, help=help)
    return None if optional and value == NONE else value


# ----------------------------------------------------------------------------------------------- reduced uploads

ENGINE_UPLOAD = "engine_upload"      # session key: what reduced the data in use (to query its rows again)


@st.cache_data(show_spinner="Reducing the file to counts per group, label and score…", max_entries=4, ttl=CACHE_TTL)
def reduce_upload(digest: str, name: str, mapping_key: str, _raw: bytes, _mapping: ColumnMapping) -> SufficientStats:
    """Keyed on the file's hash and the mapping; only the table (a few MB at most) is kept."""
    engine = Engine("duckdb")
    try:
        return engine.reduce(_raw, _mapping, name=name)
    finally:
        engine.close()


class _KeptBytes:
    """The bytes of the last few reduced uploads, keyed by their hash (only who has the bytes has the hash), so a page
    can query the file's rows again after the uploader is gone. Bounded in number, total size and time; a lookup
    never stores anything (a miss stays a miss until the file is uploaded again)."""

    def __init__(self, entries: int = 4, total_bytes: int = 1 << 30, seconds: float = 2 * 3600):
        self.entries, self.total_bytes, self.seconds = entries, total_bytes, seconds
        self._items: OrderedDict[str, tuple[float, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def keep(self, digest: str, raw: bytes) -> None:
        if not raw or len(raw) > self.total_bytes:
            return
        with self._lock:
            self._items.pop(digest, None)
            self._items[digest] = (time.monotonic(), raw)
            self._trim()

    def get(self, digest: str) -> bytes | None:
        with self._lock:
            self._trim()
            item = self._items.get(digest)
            return None if item is None else item[1]

    def _trim(self) -> None:
        now = time.monotonic()
        for digest in [d for d, (at, _) in self._items.items() if now - at >= self.seconds]:
            del self._items[digest]
        while self._items and (len(self._items) > self.entries or
                               sum(len(raw) for _, raw in self._items.values()) > self.total_bytes):
            self._items.popitem(last=False)


KEPT = _KeptBytes()


def remember_reduced(upload: Uploaded, mapping: ColumnMapping, fingerprint: str) -> None:
    KEPT.keep(upload.digest, upload.raw)
    st.session_state[ENGINE_UPLOAD] = {"fingerprint": fingerprint, "digest": upload.digest, "name": upload.name,
                                       "mapping": mapping, "columns": tuple(upload.frame.columns)}


def reduced_columns(fingerprint: str) -> tuple[str, ...]:
    """The column names of the reduced upload in use while its bytes are kept (nothing is read); () otherwise."""
    handle = st.session_state.get(ENGINE_UPLOAD)
    if not handle or handle["fingerprint"] != fingerprint or KEPT.get(handle["digest"]) is None:
        return ()
    return tuple(handle.get("columns", ()))


def reduced_source(fingerprint: str) -> tuple[bytes, SufficientStats] | None:
    """The bytes and the table of the reduced upload in use (``fingerprint``: its Predictions'), while still kept."""
    handle = st.session_state.get(ENGINE_UPLOAD)
    if not handle or handle["fingerprint"] != fingerprint:
        return None
    raw = KEPT.get(handle["digest"])
    if not raw:
        return None
    return raw, reduce_upload(handle["digest"], handle["name"], repr(handle["mapping"]), raw, handle["mapping"])


def reduced_rows(fingerprint: str) -> Predictions | None:
    """The reduced upload in use read row by row, every column kept (for an analysis that needs a column no role
    took, such as residuals against a feature), while its bytes are kept; None otherwise."""
    handle = st.session_state.get(ENGINE_UPLOAD)
    if not handle or handle["fingerprint"] != fingerprint:
        return None
    raw = KEPT.get(handle["digest"])
    return _rows(handle["digest"], handle["name"], repr(handle["mapping"]), raw, handle["mapping"]) if raw else None


@st.cache_resource(show_spinner="Reading the file row by row…", max_entries=1, ttl=CACHE_TTL)
def _rows(digest: str, name: str, mapping_key: str, _raw: bytes, _mapping: ColumnMapping) -> Predictions:
    """One at a time for the whole server (a million rows with all their columns), shared read-only."""
    frame, file_digest = read_table(_raw, name)
    return build_predictions(frame, _mapping, source=name, file_fingerprint=file_digest)
