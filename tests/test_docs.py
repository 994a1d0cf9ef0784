"""The README stays short and every link in it and in docs/ leads somewhere (the docs read on a code host)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)|src=\"([^\"]+)\"")


def _links(path: Path):
    for match in LINK.finditer(path.read_text(encoding="utf-8")):
        target = match.group(1) or match.group(2)
        if not re.match(r"[a-z]+://", target):
            yield target


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 150


def test_relative_links_resolve():
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(documents) >= 8
    broken = [(d.name, t) for d in documents for t in _links(d) if not (d.parent / t).exists()]
    assert not broken, broken
