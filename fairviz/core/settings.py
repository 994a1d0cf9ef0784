"""Server settings from the environment, parsed with bounds: a bad value (text, NaN, out of range) is named in one
log line and replaced by its default, so a typo in a deployment never breaks a page or disables a limit."""
from __future__ import annotations

import logging
import math
import os

log = logging.getLogger("fairviz.settings")


def env_int(name: str, default: int, low: int, high: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        return _refuse(name, raw, default, f"not a whole number in [{low}, {high}]")
    if not low <= value <= high:
        return _refuse(name, raw, default, f"outside [{low}, {high}]")
    return value


def env_float(name: str, default: float, low: float, high: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        return _refuse(name, raw, default, f"not a number in [{low:g}, {high:g}]")
    if not math.isfinite(value) or not low <= value <= high:
        return _refuse(name, raw, default, f"outside [{low:g}, {high:g}]")
    return value


def _refuse(name: str, raw: str, default, why: str):
    log.warning("setting %s=%r ignored (%s); using the default %s", name, raw[:40], why, default)
    return default
