"""One upload and column-mapping component for every page that takes a file (home, explanations, forecasts).

``read_upload`` draws the uploader, reads the file once per upload (keyed on its id: hashing a large file on every
rerun would stall the page), shows a readable error for a file that cannot be read, and previews it with its
name escaped. ``pick`` is the one column-role picker (required or optional roles, the guess preselected), and
``preview`` the one "name: rows × columns" header with the first rows. Each page keeps only its own roles.
"""
from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Hashable

import pandas as pd
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from fairviz.data import ColumnMapping, DataError, Predictions, build_predictions, read_preview, read_table
from fairviz.data.reading import check_names
from fairviz.data.engine import Engine, SufficientStats
from fairviz.core.markup import md
from app_pages import _budget, _jobs, _ui

TYPES = ["csv", "txt", "tsv", "parquet", "pq"]
NONE = "(none)"
# What the server keeps of visitors' files, shares of FAIRVIZ_STORE_MB (docs/shared-server.md): raw bytes of reduced
# uploads 3/8, one row-by-row read 1/4, whole-file reads 1/4, previews, chosen columns, reductions' tables and query
# results (D* with every column) 1/32 each. A result larger than its share is not kept (computed again when asked).
_SHARE = _budget.STORE_MB * _budget.MB // 32
KEPT_BYTES, ROWS_BYTES, READ_BYTES, FRAME_BYTES, QUERY_BYTES = 12 * _SHARE, 8 * _SHARE, 8 * _SHARE, _SHARE, _SHARE


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


def read(file_id: str, name: str, raw: bytes) -> tuple[pd.DataFrame, str]:
    """The whole file, once per upload (keyed on its id, or a bundled file's name and date, not on the bytes): read
    inside the server's byte budget and kept in the bounded store of decoded frames (shared read-only)."""
    return _jobs.run("upload_read", (file_id, name), "Reading the file", lambda progress: read_table(raw, name),
                     pool="analysis", nbytes=_budget.read_estimate(len(raw), name), keep=8, keep_bytes=READ_BYTES)


def _read_preview(file_id: str, name: str, raw: bytes) -> tuple[pd.DataFrame, str, str, tuple[str, ...]]:
    """The first rows (to map the columns) and the size from metadata: a file that would expand past the memory
    limits is refused before it is decoded."""
    def compute(progress):
        frame, digest, info = read_preview(raw, name)
        info.check([])                        # rows alone over the limit: say so now, not after the mapping
        rows = f"{info.rows:,}" if info.rows_exact else f"about {info.rows:,}"
        return frame, digest, rows, info.notes      # notes: what the bounded preview left out
    return _jobs.run("upload_preview", (file_id, name), "Reading the first rows", compute, pool="analysis",
                     nbytes=_budget.preview_estimate(len(raw), name), keep=8, keep_bytes=FRAME_BYTES)


def _read_columns(file_id: str, name: str, raw: bytes, columns: tuple[str, ...]) -> tuple[pd.DataFrame, str]:
    return _jobs.run("upload_columns", (file_id, name, columns), "Reading the chosen columns",
                     lambda progress: read_table(raw, name, columns=columns), pool="analysis",
                     nbytes=_budget.read_estimate(len(raw), name), keep=2, keep_bytes=FRAME_BYTES)


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
            frame, digest, rows, notes = _read_preview(file.file_id, file.name, file.getvalue())
            for note in notes:
                st.caption(md(note))
        else:
            (frame, digest), rows = read(file.file_id, file.name, file.getvalue()), ""
        check_names(frame.columns, file.name)     # also frames read before the reading rules refused them
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


def reduce_upload(digest: str, name: str, mapping_key: str, raw: bytes, mapping: ColumnMapping) -> SufficientStats:
    """Keyed on the file's hash and the mapping, read inside the server's byte budget; only the table (a few MB at
    most) is kept."""
    def compute(progress):
        engine = Engine("duckdb")
        try:
            return engine.reduce(raw, mapping, name=name)
        finally:
            engine.close()
    return _jobs.run("upload_reduce", (digest, name, mapping_key),
                     "Reducing the file to counts per group, label and score", compute, pool="analysis",
                     nbytes=_budget.reduce_estimate(len(raw), name), keep=4, keep_bytes=FRAME_BYTES)


def owner() -> str:
    """Who keeps what on the server: the visitor's session (its id; one id for work outside a session)."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no session"


class _KeptBytes(_budget.ByteStore):
    """The bytes of reduced uploads, keyed by their hash (only who has the bytes has the hash), so a page can query
    the file's rows again after the uploader is gone. Kept per visitor (a few entries and bytes each) within a server
    cap: a visitor's new upload evicts their own oldest first, and only the server cap evicts another visitor's
    entry, the one kept longest ago (that visitor is then told the file is no longer kept). A lookup never stores
    anything (a miss stays a miss until the file is uploaded again); entries leave in the order they were kept.
    """

    def __init__(self, entries: int = 64, total_bytes: int = KEPT_BYTES, seconds: float = 2 * 3600,
                 per_owner_bytes: int = _budget.KEPT_PER_VISITOR_MB * _budget.MB, per_owner_entries: int = 2):
        super().__init__(entries, total_bytes, seconds, per_owner_bytes, per_owner_entries, refresh=False)

    def keep(self, digest: str, raw: bytes, owner: str | None = None) -> None:
        if raw:
            self.put(digest, raw, len(raw), owner)


KEPT = _KeptBytes()
# a page's cache of what it derives from an upload (a prepared data set): few entries, a short life, since each can
# be as large as the decoded file
UPLOAD_ENTRIES, UPLOAD_TTL = 2, "20m"


def gone(what: str) -> str:
    """What a visitor reads when the server no longer keeps the file they uploaded."""
    return (f"The file is no longer kept on the server; upload it again to {what}. (The server keeps a few uploads "
            "per visitor for two hours, fewer when many visitors upload.)")


GONE = gone("download D* with every column")


def keep_for_visitor(state_key: str, name: str, raw: bytes, digest: str) -> None:
    """Keep an upload for this visitor across pages: its bytes on the server (``KEPT``, bounded per visitor), only
    its name and hash in session state."""
    KEPT.keep(digest, raw, owner())
    st.session_state[state_key] = (name, digest)


def kept_for_visitor(state_key: str) -> tuple[str, str, bytes] | None:
    """(name, digest, bytes) of the upload kept under ``state_key``, or None (none, or no longer kept)."""
    value = st.session_state.get(state_key)
    if not value:
        return None
    name, held = value
    if isinstance(held, bytes):                     # bytes put in session state directly (a test's upload)
        digest = hashlib.blake2b(held, digest_size=16).hexdigest()
        keep_for_visitor(state_key, name, held, digest)
        return name, digest, held
    raw = KEPT.get(held)
    return None if raw is None else (name, held, raw)


def remember_reduced(upload: Uploaded, mapping: ColumnMapping, fingerprint: str) -> None:
    KEPT.keep(upload.digest, upload.raw, owner())
    st.session_state[ENGINE_UPLOAD] = {"fingerprint": fingerprint, "digest": upload.digest, "name": upload.name,
                                       "mapping": mapping, "columns": tuple(upload.frame.columns)}


def _handle(fingerprint: str) -> dict | None:
    handle = st.session_state.get(ENGINE_UPLOAD)
    return handle if handle and handle["fingerprint"] == fingerprint else None


def reduced_gone(fingerprint: str) -> bool:
    """Whether the data in use is a reduced upload whose bytes the server no longer keeps (say ``GONE``)."""
    handle = _handle(fingerprint)
    return handle is not None and KEPT.get(handle["digest"]) is None


def reduced_columns(fingerprint: str) -> tuple[str, ...]:
    """The column names of the reduced upload in use while its bytes are kept (nothing is read); () otherwise."""
    handle = _handle(fingerprint)
    if handle is None or KEPT.get(handle["digest"]) is None:
        return ()
    return tuple(handle.get("columns", ()))


def reduced_source(fingerprint: str) -> tuple[bytes, SufficientStats] | None:
    """The bytes and the table of the reduced upload in use (``fingerprint``: its Predictions'), while still kept."""
    handle = _handle(fingerprint)
    raw = KEPT.get(handle["digest"]) if handle else None
    if not raw:
        return None
    return raw, reduce_upload(handle["digest"], handle["name"], repr(handle["mapping"]), raw, handle["mapping"])


def reduced_rows(fingerprint: str) -> Predictions | None:
    """The reduced upload in use read row by row, every column kept (for an analysis that needs a column no role
    took, such as residuals against a feature), while its bytes are kept; None otherwise. One such read is kept for
    the whole server (a million rows with all their columns), shared read-only, read inside the byte budget."""
    handle = _handle(fingerprint)
    raw = KEPT.get(handle["digest"]) if handle else None
    if not raw:
        return None
    name, mapping = handle["name"], handle["mapping"]

    def compute(progress):
        frame, file_digest = read_table(raw, name)
        return build_predictions(frame, mapping, source=name, file_fingerprint=file_digest)
    return _jobs.run("upload_rows", (handle["digest"], repr(mapping)), "Reading the file row by row", compute,
                     pool="analysis", nbytes=_budget.read_estimate(len(raw), name), keep=1, keep_bytes=ROWS_BYTES)


def file_query(digest: str, mapping: ColumnMapping, what: Hashable, raw: bytes, name: str,
               build: Callable[[], bytes]) -> bytes:
    """``build()``: bytes made by a query on a kept upload's rows (D* with every column as CSV), once per (file,
    mapping, ``what``: every parameter of the query) for the whole server, inside the byte budget, the result kept
    in a bounded store. No Streamlit call: a download's deferred callable runs it outside the page's script."""
    key = (digest, repr(mapping), what)
    found = FILE_QUERIES.get(key, _budget.MISSING)
    if found is not _budget.MISSING:
        return found
    deadline = time.monotonic() + FILE_QUERY_WAIT_S
    # one such query at a time (they read the whole file); every wait counts against one deadline, well inside the
    # browser's own limit on a deferred download, so a busy server answers with a message instead of nothing
    if not FILE_QUERY_LOCK.acquire(timeout=FILE_QUERY_WAIT_S):
        raise TimeoutError(BUSY)
    try:
        found = FILE_QUERIES.get(key, _budget.MISSING)
        if found is not _budget.MISSING:
            return found
        held = _budget.BUDGET.acquire(_budget.reduce_estimate(len(raw), name),
                                      timeout=max(0.0, deadline - time.monotonic()))
        try:
            result = build()
        finally:
            _budget.BUDGET.release(held)
    finally:
        FILE_QUERY_LOCK.release()
    FILE_QUERIES.put(key, result, len(result))
    return result


FILE_QUERIES = _budget.ByteStore(entries=8, total_bytes=QUERY_BYTES)
FILE_QUERY_LOCK = threading.Lock()
FILE_QUERY_WAIT_S = 90.0           # a download cannot show a queue: it fails after this long rather than hang
BUSY = "The server stayed busy with other downloads; try again in a moment."
