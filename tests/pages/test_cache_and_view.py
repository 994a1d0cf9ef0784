"""The app's one cache (``_cache.cached``), the frame's View, and pages that ask the task's spec instead of comparing
task names (issue 35)."""
from __future__ import annotations

import re
import uuid
from pathlib import Path

from app_pages import _frame, _jobs, _ui
from fairviz.core.checks import Check

ROOT = Path(__file__).resolve().parents[2]
# the mapping form is the task registry's own (its task picker); every other page asks the spec
OWNED_BY_THE_REGISTRY = {"_mapping.py"}
TASK_FORK = re.compile(r"""["'](regression|multiclass|binary)["']|\.task\s*[!=]=|\.binary\b""")


def test_one_cache_keys_on_the_check_the_data_the_view_and_the_params():
    calls = []
    check = Check(f"test_check_{uuid.uuid4().hex}")

    def compute(progress):
        calls.append(1)
        return len(calls)

    first = _ui.cached(check, ("race", 0.5), "params", compute, "Computing", data="fingerprint")
    again = _ui.cached(check.name, ("race", 0.5), "params", compute, "Computing", data="fingerprint")
    other = _ui.cached(check, ("race", 0.5), "other params", compute, "Computing", data="fingerprint")
    assert (first, again, other) == (1, 1, 2)
    assert ("fingerprint", ("race", 0.5), "params") in _jobs._server().store(check.name)


def test_a_figure_is_built_once_per_key_in_the_same_store():
    built = []
    key = ("figure", uuid.uuid4().hex)
    assert _ui.figure(key, lambda: built.append(1) or "fig") == "fig"
    assert _ui.figure(key, lambda: built.append(1) or "fig") == "fig"
    assert built == [1]


def test_the_view_writes_the_address_parameters_in_a_fixed_order():
    view = _frame.View(model=None, attribute="race", class_name=None, threshold=0.456, benefit="negative",
                       reference="Caucasian")
    assert list(view.to_params().items()) == [("attribute", "race"), ("tau", "0.46"), ("benefit", "negative"),
                                              ("reference", "Caucasian")]
    both = _frame.View(model="b", attribute="sex", class_name=3)
    assert both.to_params()["model"] == "b" and both.to_params()["class"] == "3"


def test_no_page_compares_task_names():
    files = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py"))]
    found = [f"{path.name}:{number}: {line.strip()}"
             for path in files if path.name not in OWNED_BY_THE_REGISTRY
             for number, line in enumerate(path.read_text().splitlines(), 1) if TASK_FORK.search(line)]
    assert not found, "ask the spec (ctx.spec, spec_of(pred)) instead:\n" + "\n".join(found)
    assert not (ROOT / "app_pages" / "_tasks.py").exists()
