"""The architecture as a test: import-linter's contracts (pyproject.toml) hold on every run."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept():
    """cli → report → independent concepts → data → core, no Streamlit inside fairviz, and ingest one way inside
    fairviz.data."""
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout and "KEPT" in done.stdout


@pytest.mark.parametrize("module, upward, message", [
    ("parity/analysis.py", "from fairviz.report import html as _upward",
     "fairviz.parity is not allowed to import fairviz.report"),
    ("data/reading.py", "from fairviz.data import validation as _upward",
     "fairviz.data.reading is not allowed to import fairviz.data.validation"),
])
def test_a_broken_layer_would_be_caught(tmp_path, module, upward, message):
    """The contracts are live: a concept that imports the report layer, or a reader that imports validation, breaks
    them (checked on a copy)."""
    import shutil
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "fairviz", copy / "fairviz", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    bad = copy / "fairviz" / module
    bad.write_text(bad.read_text() + f"\n{upward}  # noqa\n")
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache"], cwd=copy, capture_output=True, text=True,
                          env={"PYTHONPATH": str(copy), "PATH": ""})
    assert done.returncode != 0
    assert message in done.stdout


def test_every_module_of_the_data_package_is_in_the_ingest_contract():
    """A module of fairviz.data missing from the layers would escape the one-way rule unnoticed."""
    import tomllib
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    ingest = next(c for c in contracts if c.get("containers") == ["fairviz.data"])
    named = {m.strip(" ()") for layer in ingest["layers"] for m in layer.split("|")}
    data = ROOT / "fairviz" / "data"
    modules = {p.stem for p in data.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in data.iterdir() if (p / "__init__.py").exists()}
    assert modules <= named, f"not in the contract: {sorted(modules - named)}"


def test_no_import_circle_inside_the_data_package():
    """Module by module (a package's __init__ counts as a module): no chain of imports leads back where it began."""
    import grimp
    graph = grimp.build_graph("fairviz")
    modules = {m for m in graph.modules if m == "fairviz.data" or m.startswith("fairviz.data.")}
    for module in modules:
        for imported in graph.find_modules_directly_imported_by(module) & modules:
            assert not graph.chain_exists(imported, module), \
                f"{module} → {imported} → … → {module}: {graph.find_shortest_chain(imported, module)}"


def test_no_module_of_fairviz_imports_itself_back():
    """No import circle anywhere in fairviz, lazy (function-level) imports included: a circle is a seam where two
    modules each need the other's internals. Imports under ``if TYPE_CHECKING`` are annotations, not dependencies."""
    import grimp
    graph = grimp.build_graph("fairviz", include_external_packages=False, exclude_type_checking_imports=True)
    circles = [sorted(c) for c in _strongly_connected(graph) if len(c) > 1]
    assert not circles, circles


def _strongly_connected(graph) -> list[list[str]]:
    """Tarjan's strongly connected components of the import graph (iterative: the graph is deep)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter = counter + 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter = counter + 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(component)
    return found
