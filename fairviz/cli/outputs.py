"""Where the CLI reads and writes, checked before any work: an output never replaces an input or a folder, and is
written through a temporary file in its own folder and renamed, so a failure leaves no half-written file; an input
that is not a regular file (a FIFO, a device) is refused at once instead of hanging."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class OutputError(ValueError):
    """One plain sentence naming the path and the problem."""


def check_input(path: Path) -> None:
    """A local input must be a regular file or a folder (a Parquet data set), never a pipe, socket or device."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return                                   # missing: the reader names it
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise OutputError(f"'{path}' is not a regular file (a pipe, socket or device); give a file or a folder")


def check_outputs(inputs: list[Path], outputs: dict[str, Path | None]) -> None:
    """Each output (option name → path; '-' is standard output) must not be an input or a folder, and its folder
    must exist; two outputs may not share a path."""
    resolved_inputs = {_resolved(p) for p in inputs if p is not None}
    seen: dict[Path, str] = {}
    for option, path in outputs.items():
        if path is None or str(path) == "-":
            continue
        target = _resolved(path)
        if target in resolved_inputs or any(_inside(i, target) for i in resolved_inputs if i.is_dir()):
            raise OutputError(f"{option} {path} would overwrite the input; choose another file name")
        if target.is_dir():
            raise OutputError(f"{option} {path} is a folder; give a file name")
        if target.exists() and not target.is_file():
            raise OutputError(f"{option} {path} is not a regular file")
        if not target.parent.is_dir():
            raise OutputError(f"{option} {path}: the folder '{path.parent}' does not exist")
        if target in seen:
            raise OutputError(f"{option} and {seen[target]} name the same file {path}")
        seen[target] = option


def write_atomically(path: Path, data: bytes | str) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it over ``path`` (atomic on one file system)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(folder: Path, target: Path) -> bool:
    return folder == target or folder in target.parents
