"""What makes an output comparable across runs and machines. Every volatile part is replaced by a placeholder here,
and only here (VOLATILE lists them; the test modules repeat the list at their top):

- the temporary folder the generated files are written to → ``<tmp>``; the repository's path → ``<root>``
- fairviz's version (the JSON's ``fairviz_version``, the HTML footer) → ``<version>``
- the HTML footer's "generated YYYY-MM-DD HH:MM UTC" time → ``generated <time> UTC``
- the plotly.js library inlined in the HTML report (4.8 MB of vendor code, with its version) → ``<plotly.js>``
- plotly's random div ids (uuid4) → ``<uuid>``
- plotly's base64 arrays ({"dtype": "f8", "bdata": …}) → the plain list of their numbers (compared at tolerance)
- the HTML's figures are taken out of the page text and kept as parsed JSON (``figures``), the text keeping
  ``<figure k>`` in their place
- AppTest: widget ids (``$$ID-<hash>-key``), page-script hashes, Streamlit's media URLs and download buttons'
  deferred file ids (random) are dropped; a dataframe's
  Arrow bytes become its columns and values; a chart's spec becomes parsed JSON
"""
from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np

from fairviz import __version__

VOLATILE = (
    "temporary folder → <tmp>; repository path → <root>",
    "fairviz version → <version>",
    "HTML 'generated <date time> UTC' stamp → 'generated <time> UTC'",
    "inlined plotly.js bundle (and its version) → <plotly.js>",
    "plotly div ids (uuid4) → <uuid>",
    "plotly base64 arrays (bdata) → plain number lists",
    "AppTest widget ids, page-script hashes, media URLs, deferred file ids → dropped; Arrow bytes → columns and values",
)

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
STAMP = re.compile(r"generated \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC")
PLOTLY_JS = re.compile(r"<script>/\*\*\s*\* plotly\.js v[^\n]*\n.*?</script>", re.S)
NEW_PLOT = "Plotly.newPlot("
DTYPES = {"f8": "<f8", "f4": "<f4", "i1": "i1", "u1": "u1", "i2": "<i2", "u2": "<u2", "i4": "<i4", "u4": "<u4",
          "i8": "<i8", "u8": "<u8"}


def paths(text: str, folder: Path | None, root: Path) -> str:
    if folder is not None:
        text = text.replace(str(folder), "<tmp>")
    return text.replace(str(root), "<root>")


def plain_arrays(value):
    """Plotly's typed arrays as plain lists of numbers (JSON floats round-trip exactly)."""
    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=DTYPES[value["dtype"]])
            if "shape" in value:
                array = array.reshape([int(s) for s in str(value["shape"]).split(",")])
            return array.tolist()
        return {k: plain_arrays(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_arrays(v) for v in value]
    return value


def figure(spec: dict) -> dict:
    return plain_arrays(spec)


def html(text: str) -> dict:
    """The report as its text (figures cut out) and its figures as parsed JSON."""
    text = PLOTLY_JS.sub("<script><plotly.js></script>", text)
    text = STAMP.sub("generated <time> UTC", text).replace(f"fairviz {__version__}", "fairviz <version>")
    decoder = json.JSONDecoder()
    pieces, figures, start = [], [], 0
    while (at := text.find(NEW_PLOT, start)) >= 0:
        position = at + len(NEW_PLOT)
        arguments = []
        for _ in range(4):                     # div id, data, layout, config
            position = _skip(text, position)
            value, position = decoder.raw_decode(text, position)
            arguments.append(value)
            position = _skip(text, position)
            if text[position] == ")":
                break
            position += 1                      # the comma
        pieces.append(text[start:at] + f"{NEW_PLOT}<figure {len(figures)}>")
        figures.append({"data": plain_arrays(arguments[1]), "layout": plain_arrays(arguments[2]),
                        "config": arguments[3] if len(arguments) > 3 else None})
        start = position
    pieces.append(text[start:])
    return {"text": UUID.sub("<uuid>", "".join(pieces)), "figures": figures}


def _skip(text: str, position: int) -> int:
    while text[position] in " \n\t\r":
        position += 1
    return position


def audit_outputs(raw: dict, folder: Path, root: Path) -> dict:
    """One case's outputs, comparable: exit status, terminal text, parsed JSON, the HTML as text and figures."""
    data = None
    if raw["json"] is not None:
        data = json.loads(paths(raw["json"], folder, root))
        if "fairviz_version" in data:
            data["fairviz_version"] = "<version>"
    return {"exit": raw["exit"],
            "terminal": {"stdout": paths(raw["stdout"], folder, root), "stderr": paths(raw["stderr"], folder, root)},
            "json": data,
            "html": html(paths(raw["html"], folder, root)) if raw["html"] is not None else None}
