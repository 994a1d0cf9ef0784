"""fairviz as a package: what pyproject.toml declares matches the tested lock, the audit needs no model stack, and a
wheel installed into a fresh environment runs ``fairviz audit`` on a bundled sample with the checkout's numbers."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
MODEL_STACK = ("torch", "transformers", "captum", "shap", "lime")
AUDIT_MODULES = ("fairviz.residuals", "fairviz.calibration", "fairviz.parity", "fairviz.sample_size",
                 "fairviz.report.audit", "fairviz.cli", "fairviz.cli.main", "fairviz.cli.audit")


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _lock(name: str) -> dict[str, str]:
    """Package → exact version of a requirements file (its own lines only)."""
    pins = {}
    for line in (ROOT / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            pin = Requirement(line)
            (exact,) = pin.specifier
            assert exact.operator == "==", f"{name} pins exact versions, not {line!r}"
            pins[canonicalize_name(pin.name)] = exact.version
    return pins


def _clean_env() -> dict:
    """This environment without the checkout on the path: only what is installed is importable."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def test_declared_ranges_hold_the_locked_versions_and_the_lock_covers_them():
    """Every runtime dependency and extra of pyproject.toml admits the version requirements.txt pins, and the lock
    pins exactly what the package declares (test-only tools live in requirements-dev.txt)."""
    project = _project()
    declared = [Requirement(r) for r in project["dependencies"]]
    declared += [Requirement(r) for extra in project["optional-dependencies"].values() for r in extra]
    lock = _lock("requirements.txt")
    for requirement in declared:
        name = canonicalize_name(requirement.name)
        assert name in lock, f"{name} is declared but not pinned in requirements.txt"
        assert requirement.specifier.contains(lock[name]), f"{requirement} excludes the tested {name}=={lock[name]}"
    assert set(lock) == {canonicalize_name(r.name) for r in declared}
    assert {"app", "explain", "spark"} <= set(project["optional-dependencies"])
    assert "kneed" in _lock("requirements-dev.txt") and "kneed" not in lock


def test_audit_concepts_import_with_the_model_stack_blocked():
    """The audit's concepts, its report and the CLI import while torch, transformers, captum, shap and lime are
    refused (they are imported lazily, only by the features that train or explain models)."""
    script = textwrap.dedent(f"""
        import importlib, importlib.abc, sys
        BLOCKED = {MODEL_STACK!r}

        class Refuse(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ImportError(f"{{name}} is blocked")

        sys.meta_path.insert(0, Refuse())
        try:
            import torch
        except ImportError:
            pass
        else:
            sys.exit("the block is not live: torch imported")
        for module in {AUDIT_MODULES!r}:
            importlib.import_module(module)
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        print("loaded:", loaded)
        sys.exit(1 if loaded else 0)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**_clean_env(), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


@pytest.mark.slow
def test_wheel_in_a_fresh_venv_audits_a_bundled_sample_like_the_checkout(tmp_path):
    """Build the wheel, install it with its declared dependencies (versions held to the lock) into a new venv with
    no site packages of ours, and run the installed ``fairviz audit`` on its bundled COMPAS sample from a folder
    outside the repository: the JSON equals the checkout's, and no model library was needed."""
    source = _mkdir(tmp_path / "source")          # a clean copy: the build writes build/ and *.egg-info beside it
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "fairviz", source / "fairviz", ignore=ignore)
    shutil.copytree(ROOT / "assets", source / "assets", ignore=ignore)
    dist = tmp_path / "dist"
    # built as `pip install .` builds it: in an isolated environment with the build-system's own setuptools
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)], tmp_path,
         timeout=600)
    (wheel,) = dist.glob("fairviz-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    packages = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "fairviz").rglob("__init__.py")}
    assert {f"{p}/__init__.py" for p in packages} <= names           # every subpackage travels
    assert {"fairviz/assets/samples.json", "fairviz/assets/compas.csv"} <= names

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python, fairviz = env_dir / "bin" / "python", env_dir / "bin" / "fairviz"
    _run([str(python), "-m", "pip", "install", "-q", str(wheel), "-c", str(ROOT / "requirements.txt")], tmp_path,
         timeout=1500)

    outside = _mkdir(tmp_path / "outside")
    where = _run([str(python), "-c", "import fairviz, importlib.util as u; from fairviz.data.samples import "
                  "sample_path; print(fairviz.__file__); print(sample_path('compas')); "
                  "print([m for m in ('torch', 'kneed', 'streamlit') if u.find_spec(m)])"], outside).splitlines()
    site = env_dir / "lib"
    assert Path(where[0]).is_relative_to(site) and Path(where[1]).is_relative_to(site), where
    assert where[2] == "[]"                        # the audit ran without the model stack, the app or test oracles
    fast = ["--resamples", "200", "--knee-resamples", "0"]
    _run([str(fairviz), "audit", where[1], *fast, "--json", "installed.json", "--html", "installed.html"], outside,
         timeout=900)
    installed = json.loads((outside / "installed.json").read_text())

    from fairviz.cli.main import main                 # the checkout, on the same file
    assert main(["audit", str(ROOT / "assets" / "compas.csv"), *fast, "--json", str(tmp_path / "checkout.json")]) == 0
    checkout = json.loads((tmp_path / "checkout.json").read_text())
    assert installed["n_rows"] == 7214 and installed["threshold"] == 0.4       # the sample's own settings applied
    assert installed["groups"]["African-American"]["n"] == 3696
    assert any("bundled sample" in note for note in installed["notes"])
    assert installed == checkout
    assert "African-American" in (outside / "installed.html").read_text(encoding="utf-8")


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _run(command: list[str], cwd: Path, timeout: int = 300) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=_clean_env())
    assert done.returncode == 0, f"{command[:4]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout
