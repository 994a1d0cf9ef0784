"""How much memory the shared server spends on visitors' files: a byte budget for the heavy steps, and stores that are
bounded in bytes.

``BUDGET`` admits the steps that decode a file or hold a copy of it in memory (previews, whole-file reads,
reductions, row reads, D* with every column, report preparation). Each asks for an estimate of its peak bytes; steps
run while their estimates fit in the budget together, the others wait in order of arrival (the page says how many are
ahead), and a step whose estimate alone exceeds the budget is refused with one message. ``_jobs.run`` takes the bytes
inside its slot, so Stop and a closed tab give them back (the wait reports to a progress bar, where Streamlit
interrupts a stopped script).

``ByteStore`` keeps finished results and kept uploads bounded in entries, bytes and idle time, optionally per owner
(a visitor's session): an owner over its own cap evicts its own oldest entries first; only the server cap evicts
another owner's entry, the one idle longest.

The budget bounds what is being worked on at once; the stores bound what is kept afterwards. The server's memory on
top of its ~0.3 GB base is at most their sum (plus what Streamlit itself holds: every open tab's uploaded files).
"""
from __future__ import annotations

import itertools
import os
import sys
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any, Callable, Hashable

from fairviz.core.settings import env_int
from fairviz.data import DataError

MB = 1 << 20

# Peak memory of one step, measured on this project's benchmark CSV (benchmarks/bench_load.py's generator: ids,
# label, score, two groups, an age, a short text): a whole-file pandas read +3.8× the file's size, a read row by row
# (read + build_predictions) +3.9×, so 6× leaves room for files of short numbers (which expand more); a DuckDB
# reduction (it streams the file) with its preview +2.5× (+961 MB for a 389 MB CSV), so 3×. A Parquet file expands
# more when decoded (compression), so it counts double. The full audit with its
# HTML report: +379 MB at 20,000 rows, +534 MB at 100,000 (about 340 MB plus 2 KB per row).
READ_FACTOR = 6
REDUCE_FACTOR = 3
PARQUET_FACTOR = 2             # times the CSV factor
PREVIEW_FILE_BYTES = 32 * MB     # a preview decodes the first rows only: counted as a read of at most this much
REPORT_BASE_BYTES = 384 * MB
REPORT_BYTES_PER_ROW = 2048


def _machine_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def default_budget_mb(machine_bytes: int | None = None) -> int:
    """min(4 GB, half the machine's memory): room for the server's base and for Streamlit's own copies."""
    machine = _machine_memory() if machine_bytes is None else machine_bytes
    return max(64, min(4096, machine // 2 // MB))


def budget_setting() -> int:
    """FAIRVIZ_MEMORY_BUDGET_MB, in [64 MB, 4 TB]; a bad value is named in the log and the default used."""
    return env_int("FAIRVIZ_MEMORY_BUDGET_MB", default_budget_mb(), 64, 1 << 22)


BUDGET_MB = budget_setting()
STORE_MB = env_int("FAIRVIZ_STORE_MB", max(64, BUDGET_MB // 2), 16, 1 << 22)      # kept results and uploads
KEPT_PER_VISITOR_MB = env_int("FAIRVIZ_KEPT_PER_VISITOR_MB", max(16, STORE_MB // 4), 1, 1 << 22)


def _is_parquet(name: str) -> bool:
    return name.lower().endswith((".parquet", ".pq"))


def read_estimate(size: int, name: str = "") -> int:
    """Peak bytes of decoding a whole file of ``size`` bytes into a frame."""
    return int(size) * READ_FACTOR * (PARQUET_FACTOR if _is_parquet(name) else 1)


def reduce_estimate(size: int, name: str = "") -> int:
    """Peak bytes of the engine's reduction of a file of ``size`` bytes (or of one query on its rows)."""
    return int(size) * REDUCE_FACTOR * (PARQUET_FACTOR if _is_parquet(name) else 1)


def preview_estimate(size: int, name: str = "") -> int:
    return read_estimate(min(int(size), PREVIEW_FILE_BYTES), name)


def report_estimate(rows: int) -> int:
    """Peak bytes of the full audit and its HTML report for ``rows`` rows (weighted data: the rows it stands for)."""
    return REPORT_BASE_BYTES + int(rows) * REPORT_BYTES_PER_ROW


def size_text(nbytes: int) -> str:
    return f"{nbytes / (1 << 30):.1f} GB" if nbytes >= 1 << 30 else f"{max(1, round(nbytes / MB))} MB"


class ByteBudget:
    """A ledger of bytes in use with a first-come queue: ``hold(n)`` waits until ``n`` fits and every earlier
    request has been served, calling ``waiting(ahead, seconds)`` about twice a second meanwhile (a progress bar:
    where a stopped script is interrupted; the request then leaves the queue)."""

    def __init__(self, total_bytes: int):
        self.total = int(total_bytes)
        self.used = 0
        self.holders = 0               # requests holding bytes now
        self._queue: deque[int] = deque()
        self._tickets = itertools.count()
        self._changed = threading.Condition()
        self.peak = 0                  # the most ever held at once (the load test reads it)
        self.queued = 0                # how many requests ever had to wait

    def acquire(self, nbytes: int, waiting: Callable[[int, float], None] = lambda ahead, seconds: None,
                timeout: float | None = None) -> int:
        """Take ``nbytes`` (at least 1) of the budget; returns what was taken, for ``release``."""
        nbytes = max(1, int(nbytes))
        if nbytes > self.total:
            raise DataError(f"This needs about {size_text(nbytes)} of memory, more than this server gives one "
                            f"request ({size_text(self.total)}): use a smaller file, or fewer columns, or run "
                            "`fairviz audit` on your own machine.")
        start = time.monotonic()
        with self._changed:
            ticket = next(self._tickets)
            self._queue.append(ticket)
            try:
                first_wait = True
                while self._queue[0] != ticket or self.used + nbytes > self.total:
                    if first_wait:
                        self.queued += 1
                        first_wait = False
                    waited = time.monotonic() - start
                    if timeout is not None and waited > timeout:
                        raise TimeoutError(f"The server stayed busy for {timeout:.0f} s; try again in a moment.")
                    ahead = self._queue.index(ticket) + self.holders        # waiting before us, and running
                    self._changed.release()
                    try:
                        waiting(ahead, waited)          # may raise (a stopped script): the ticket leaves the queue
                    finally:
                        self._changed.acquire()
                    self._changed.wait(0.5)
                self.used += nbytes
                self.holders += 1
                self.peak = max(self.peak, self.used)
            finally:
                self._queue.remove(ticket)
                self._changed.notify_all()
        return nbytes

    def release(self, nbytes: int) -> None:
        with self._changed:
            self.used = max(0, self.used - nbytes)
            self.holders = max(0, self.holders - 1)
            self._changed.notify_all()


BUDGET = ByteBudget(BUDGET_MB * MB)


def size_of(value: Any) -> int:
    """Bytes a kept value holds, roughly: frames (deep), arrays, bytes, and dataclasses/tuples of them."""
    import numpy as np
    import pandas as pd
    if isinstance(value, (bytes, bytearray, memoryview)):
        return len(value)
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(index=True, deep=True).sum())
    if isinstance(value, pd.Series):
        return int(value.memory_usage(index=True, deep=True))
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, (tuple, list)):
        return sum(size_of(v) for v in value) + 64
    if isinstance(value, dict):
        return sum(size_of(v) for v in value.values()) + 64
    if hasattr(value, "__dataclass_fields__"):
        return sum(size_of(getattr(value, f, None)) for f in value.__dataclass_fields__) + 64
    return sys.getsizeof(value)


MISSING = object()


@dataclass
class _Entry:
    value: Any
    nbytes: int
    owner: Hashable
    used_at: float


class ByteStore:
    """A server-wide store bounded in entries, total bytes and idle seconds, with an optional cap per owner.

    ``put`` evicts, in this order: the owner's own oldest entries while the owner is over its cap, then the entries
    idle longest (whoever owns them) while the server is over its caps. A value larger than the owner's cap is not
    kept (``put`` says so by returning False). ``get`` refreshes an entry's idle time unless ``refresh`` is False
    (entries then leave in the order they were put, each ``seconds`` after it was put)."""

    def __init__(self, entries: int, total_bytes: int, seconds: float = 2 * 3600,
                 per_owner_bytes: int | None = None, per_owner_entries: int | None = None, refresh: bool = True):
        self.entries, self.total_bytes, self.seconds, self.refresh = entries, int(total_bytes), seconds, refresh
        self.per_owner_bytes = int(per_owner_bytes) if per_owner_bytes else self.total_bytes
        self.per_owner_entries = per_owner_entries or entries
        self._items: OrderedDict[Hashable, _Entry] = OrderedDict()      # least recently used first
        self._lock = threading.Lock()

    def put(self, key: Hashable, value: Any, nbytes: int | None = None, owner: Hashable = None) -> bool:
        nbytes = size_of(value) if nbytes is None else int(nbytes)
        if nbytes > min(self.total_bytes, self.per_owner_bytes):
            return False
        with self._lock:
            self._items.pop(key, None)
            self._items[key] = _Entry(value, nbytes, owner, time.monotonic())
            self._trim(owner)
        return True

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            self._trim(None)
            entry = self._items.get(key)
            if entry is None:
                return default
            if self.refresh:
                entry.used_at = time.monotonic()
                self._items.move_to_end(key)
            return entry.value

    def __contains__(self, key: Hashable) -> bool:
        return self.get(key, MISSING) is not MISSING

    def discard(self, key: Hashable) -> None:
        with self._lock:
            self._items.pop(key, None)

    @property
    def bytes_held(self) -> int:
        with self._lock:
            return sum(e.nbytes for e in self._items.values())

    def __iter__(self):
        with self._lock:
            return iter(list(self._items))          # least recently used first

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def _trim(self, owner: Hashable) -> None:
        now = time.monotonic()
        for key in [k for k, e in self._items.items() if now - e.used_at >= self.seconds]:
            del self._items[key]
        if owner is not None:
            mine = [k for k, e in self._items.items() if e.owner == owner]          # oldest first
            while mine and (len(mine) > self.per_owner_entries or
                            sum(self._items[k].nbytes for k in mine) > self.per_owner_bytes):
                del self._items[mine.pop(0)]
        while self._items and (len(self._items) > self.entries or
                               sum(e.nbytes for e in self._items.values()) > self.total_bytes):
            self._items.popitem(last=False)                                        # idle longest, anyone's
