"""Every page of the app on the bundled default sample (COMPAS), as Streamlit's AppTest displays it: each element's
type and content in display order (texts, widget labels and values, tables' columns and values, charts' figure
JSON), every tab of the audit pages opened in turn (they run only their open tab); then Home and the audit pages on
the bundled regression and multiclass samples (the task forks a refactor folds together)."""
from __future__ import annotations

import json
import re

import pyarrow as pa
from google.protobuf.json_format import MessageToDict
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT
from tests.goldens import normalise

# the navigation's order (app.py); the audit pages' tab keys (tests/pages/tabs.py)
PAGES = ("home", "residuals", "calibration", "parity", "significance", "slices", "thresholds", "knee_probing",
         "reweighting", "simulator", "synthetic_data", "explanations", "forecast_fairness", "lorenz",
         "conditions_reference")
AUDIT_PAGES = ("home", "residuals", "calibration", "parity", "significance", "slices")
TASK_SAMPLES = ("adult_hours", "adult_marital")          # regression, multiclass (assets/samples.json)
TAB_KEYS = {"residuals": "rdf_tab", "calibration": "cal_tab", "parity": "parity_tab", "significance": "match_tab"}
DROPPED = {"id", "page_script_hash", "url", "deferred_file_id", "form_id"}
WIDGET_ID = re.compile(r"\$\$ID-[0-9a-f]+-")


def views() -> dict[str, dict]:
    """{view name: its display list}: each page as it opens, then each other tab of an audit page; then the same
    for the audit pages on each task's sample ('adult_hours · residuals · Groups')."""
    shown = _walk(AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run(), PAGES, "")
    for sample in TASK_SAMPLES:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
        at.selectbox(key="sample_choice").set_value(sample).run()
        shown.update(_walk(at, AUDIT_PAGES, f"{sample} · "))
    return shown


def _walk(at: AppTest, names: tuple[str, ...], prefix: str) -> dict[str, dict]:
    shown = {}
    for page in names:
        if page != "home":
            at.switch_page(f"app_pages/{page}.py").run()
        shown[prefix + page] = display(at)
        if page in TAB_KEYS:
            labels = [tab.label for tab in at.tabs]
            for label in labels[1:]:
                at.session_state[TAB_KEYS[page]] = label
                at.run()
                shown[f"{prefix}{page} · {label}"] = display(at)
            if labels:
                at.session_state[TAB_KEYS[page]] = labels[0]
    return shown


def display(at: AppTest) -> dict:
    return {"exception": [str(e.value) for e in at.exception], "tree": _node(at._tree)}


def _node(node) -> dict:
    shown = {"type": getattr(node, "type", type(node).__name__)}
    proto = getattr(node, "proto", None)
    if proto is not None:
        shown.update(_proto(proto, shown["type"]))
    children = getattr(node, "children", None) or {}
    if children:
        shown["children"] = [_node(child) for _, child in sorted(children.items())]
    return shown


def _proto(proto, kind: str) -> dict:
    fields = _clean(MessageToDict(proto, preserving_proto_field_name=True))
    if kind == "plotly_chart" and "spec" in fields:
        fields["spec"] = normalise.figure(json.loads(proto.spec))
    if "arrow_data" in fields:                 # st.dataframe and st.table
        fields["arrow_data"] = _arrow(proto.arrow_data)
    return fields


def _arrow(arrow) -> dict:
    shown = {"data": _table(arrow.data)}
    if arrow.HasField("styler"):
        styler = arrow.styler
        shown["styler"] = {"caption": styler.caption,
                           "display_values": _table(styler.display_values) if styler.display_values else None}
    return shown


def _table(data: bytes) -> dict | None:
    if not data:
        return None
    table = pa.ipc.open_stream(data).read_all()
    return {"columns": [str(name) for name in table.column_names],
            "values": {str(name): [_value(v) for v in column.to_pylist()]
                       for name, column in zip(table.column_names, table.columns)}}


def _value(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _clean(value):
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if k not in DROPPED}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, str):
        return WIDGET_ID.sub("$$ID-<hash>-", value)
    return value
