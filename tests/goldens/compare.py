"""Golden against actual, number for number.

- Numbers (JSON numbers, figure data): equal to REL = 1e-9 relative, with an absolute floor ABS = 1e-12 for values
  near zero (floating-point noise across machines is not a change). NaN equals NaN; ±inf equal themselves.
- Strings: the text with every number taken out (its skeleton) exactly; the numbers in it as numbers, at their
  printed precision: equal within REL/ABS or within one unit of the last printed digit (a value on a rounding
  boundary may print either way); integers (no decimal point) exactly.
- Keys: a key added or removed, a list that grows or shrinks, a value that changes type: a difference.
"""
from __future__ import annotations

import math
import re
from typing import Iterator

REL = 1e-9
ABS = 1e-12
# a number in text: an optional sign not glued to a word, digits with optional thousands separators, decimals and
# an exponent; the sign is part of the number so that -0.000 and 0.000 compare as numbers
NUMBER = re.compile(r"(?<![\w.])[-−+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")
UPDATE = ("a key was added or removed: if the change is intended, update the golden "
          "(PYTHONPATH=. python -m tests.goldens.capture) in the same commit as the code, with the reason in the "
          "commit message")


def close(golden: float, actual: float, unit: float = 0.0) -> bool:
    if isinstance(golden, bool) or isinstance(actual, bool):
        return golden is actual
    if math.isnan(golden) or math.isnan(actual):
        return math.isnan(golden) and math.isnan(actual)
    if math.isinf(golden) or math.isinf(actual):
        return golden == actual
    tolerance = max(REL * max(abs(golden), abs(actual)), ABS, unit * (1 + 1e-9))
    return abs(golden - actual) <= tolerance


def _number(token: str) -> tuple[float, float, bool]:
    """A printed number's value, one unit of its last digit, and whether it is an integer."""
    plain = token.replace(",", "").replace("−", "-")
    mantissa, _, exponent = plain.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    unit = 10.0 ** (int(exponent or 0) - decimals)
    return float(plain), unit, "." not in mantissa and not exponent


def text_differences(golden: str, actual: str) -> Iterator[tuple[str, object, object]]:
    """(where, golden, actual) for a text whose skeleton or numbers differ."""
    if golden == actual:
        return
    skeleton_golden, skeleton_actual = NUMBER.sub("#", golden), NUMBER.sub("#", actual)
    if skeleton_golden != skeleton_actual:
        at = next((k for k, (x, y) in enumerate(zip(skeleton_golden, skeleton_actual)) if x != y),
                  min(len(skeleton_golden), len(skeleton_actual)))
        line = skeleton_golden.count("\n", 0, at) + 1
        yield (f"text (line {line}, character {at} of the text with numbers as #)", _around(skeleton_golden, at),
               _around(skeleton_actual, at))
        return
    for k, (mine, theirs) in enumerate(zip(NUMBER.findall(golden), NUMBER.findall(actual))):
        if mine == theirs:
            continue
        value_golden, unit_golden, integer_golden = _number(mine)
        value_actual, unit_actual, integer_actual = _number(theirs)
        unit = 0.0 if integer_golden and integer_actual else max(unit_golden, unit_actual)
        if not close(value_golden, value_actual, unit):
            yield f"number #{k} ({_context(golden, k)})", mine, theirs


def _around(text: str, at: int) -> str:
    return "…" + text[max(0, at - 100):at + 100] + "…"


def _context(text: str, k: int) -> str:
    match = list(NUMBER.finditer(text))[k]
    return "…" + text[max(0, match.start() - 60):match.end() + 20].replace("\n", "⏎") + "…"


def differences(golden, actual, path: str = "$") -> Iterator[tuple[str, object, object]]:
    """(key path, golden, actual) for every difference, in the golden's order."""
    if isinstance(golden, dict) and isinstance(actual, dict):
        for key in golden:
            if key not in actual:
                yield f"{path}.{key}", golden[key], f"<key removed> ({UPDATE})"
        for key in actual:
            if key not in golden:
                yield f"{path}.{key}", f"<key added> ({UPDATE})", actual[key]
        for key in golden:
            if key in actual:
                yield from differences(golden[key], actual[key], f"{path}.{key}")
    elif isinstance(golden, list) and isinstance(actual, list):
        if len(golden) != len(actual):
            yield f"{path} (length)", len(golden), len(actual)
        for k, (mine, theirs) in enumerate(zip(golden, actual)):
            yield from differences(mine, theirs, f"{path}[{k}{_name(mine)}]")
    elif _numeric(golden) and _numeric(actual):
        if not close(float(golden), float(actual)):
            yield path, golden, actual
    elif isinstance(golden, str) and isinstance(actual, str):
        for where, mine, theirs in text_differences(golden, actual):
            yield f"{path} {where}", mine, theirs
    elif golden != actual or type(golden) is not type(actual):
        yield path, golden, actual


def _name(element) -> str:
    """A display element's type and label in its path (' metric "OFI"'), so a page's difference says where it is."""
    if not isinstance(element, dict) or not isinstance(element.get("type"), str):
        return ""
    label = element.get("label")
    return f" {element['type']}" + (f" {label[:40]!r}" if isinstance(label, str) and label else "")


def _numeric(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def report(name: str, found: list[tuple[str, object, object]], shown: int = 20) -> str:
    """The first `shown` differences, each with both values."""
    lines = [f"{name}: {len(found)} difference(s) from the golden; the first {min(shown, len(found))}:"]
    for path, golden, actual in found[:shown]:
        lines.append(f"  {path}\n    golden: {_short(golden)}\n    actual: {_short(actual)}")
    lines.append("A golden changes only in the same commit as the code that changes it, with the reason in the commit "
                 "message: PYTHONPATH=. python -m tests.goldens.capture (tests/goldens/README.md).")
    return "\n".join(lines)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "…"
