"""User-facing text cites the works and the papers' own sections, never our internal specs or seed numbers.

Every string literal in the pages, app.py and fairviz/ (f-string parts included; docstrings and comments
excluded, which no visitor reads) is scanned. Also: no plain string that looks like an f-string placeholder
of a module attribute (``"{stats.MAX_SUPPORT:,}"`` printed verbatim).
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = re.compile(r"\bspec\s*(§|D-?\d|A\d)|\bseed\s*00\d|\bspecs?/", re.IGNORECASE)
# "{module.NAME}" or "{obj.attr:,}" as literal text: the braces reach the user (inside an f-string, literal
# braces are written doubled, so such text is a plain-string piece that was meant to be formatted)
PLACEHOLDER = re.compile(r"(?<![%{])\{[A-Za-z_]\w*\.[A-Za-z_][\w.]*(:[^{}]*)?\}")


def _sources() -> list[Path]:
    return [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py")), *sorted((ROOT / "fairviz").rglob("*.py"))]


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                ids.add(id(first.value))
    return ids


@lru_cache(maxsize=None)
def _literals(path: Path) -> tuple:
    return tuple(_scan(path))


def _scan(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    formatted = set()          # literals used as "...".format(...) templates
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "format_map") \
                and isinstance(node.func.value, ast.Constant):
            formatted.add(id(node.func.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value, id(node) in formatted


def test_no_user_facing_string_cites_a_spec_or_a_seed_number():
    found = [f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}" for path in _sources()
             for line, text, _ in _literals(path) if FORBIDDEN.search(text)]
    assert not found, "\n".join(found)


def test_no_plain_string_carries_an_unformatted_placeholder():
    found = [f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}" for path in _sources()
             for line, text, formatted in _literals(path) if not formatted and PLACEHOLDER.search(text)]
    assert not found, "\n".join(found)
