"""(Re)write the goldens: ``PYTHONPATH=. python -m tests.goldens.capture`` (every case and page), or name some:
``… capture compas binary_slices pages``. See tests/goldens/README.md for when a golden may change."""
from __future__ import annotations

import gzip
import json
import re
import sys
import tempfile
from pathlib import Path

from tests.conftest import ROOT
from tests.goldens import cases, normalise

DATA = Path(__file__).resolve().parent / "data"
AUDITS, PAGES = DATA / "audits", DATA / "pages"


def audit(case: cases.Case, folder: Path) -> dict:
    """One case's normalised outputs: exit, terminal, json, html {text, figures}."""
    return normalise.audit_outputs(cases.run(case, folder), folder, ROOT)


def terminal_text(outputs: dict) -> str:
    """The terminal as a reader sees it: the exit status, stdout, stderr."""
    return (f"exit status: {outputs['exit']}\n--- stdout\n{outputs['terminal']['stdout']}"
            f"--- stderr\n{outputs['terminal']['stderr']}")


def files(name: str) -> dict[str, Path]:
    return {"terminal": AUDITS / f"{name}.terminal.txt", "json": AUDITS / f"{name}.json.gz",
            "html": AUDITS / f"{name}.html.gz", "figures": AUDITS / f"{name}.figures.json.gz"}


def stored(outputs: dict) -> dict:
    """The parts as they are stored (and compared): terminal text, JSON, HTML text, the HTML's figures."""
    html = outputs["html"] or {"text": None, "figures": None}
    return {"terminal": terminal_text(outputs), "json": outputs["json"], "html": html["text"],
            "figures": html["figures"]}


def write_audit(name: str, outputs: dict) -> None:
    parts = stored(outputs)
    for part, path in files(name).items():
        value = parts[part]
        if part == "terminal":
            path.write_text(value)
        elif part == "html":
            _write_gz(path, value if value is not None else "")
        else:
            _write_gz(path, json.dumps(value, indent=1, ensure_ascii=False, sort_keys=False) + "\n")


def read_audit(name: str) -> dict:
    parts = {}
    for part, path in files(name).items():
        if part == "terminal":
            parts[part] = path.read_text()
        elif part == "html":
            parts[part] = _read_gz(path) or None
        else:
            parts[part] = json.loads(_read_gz(path))
    return parts


def page_path(view: str) -> Path:
    return PAGES / (re.sub(r"[^A-Za-z0-9.-]+", "_", view.replace(" · ", "__")).strip("_") + ".json.gz")


def write_pages(views: dict[str, dict]) -> None:
    for old in PAGES.glob("*.json.gz"):
        old.unlink()
    (PAGES / "index.json").write_text(json.dumps({view: page_path(view).name for view in views}, indent=1,
                                                 ensure_ascii=False) + "\n")
    for view, shown in views.items():
        _write_gz(page_path(view), json.dumps(shown, indent=1, ensure_ascii=False) + "\n")


def read_pages() -> dict[str, dict]:
    index = json.loads((PAGES / "index.json").read_text())
    return {view: json.loads(_read_gz(PAGES / name)) for view, name in index.items()}


def _write_gz(path: Path, text: str) -> None:
    path.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))   # mtime 0: the same bytes each time


def _read_gz(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode()


def main(names: list[str]) -> None:
    AUDITS.mkdir(parents=True, exist_ok=True)
    PAGES.mkdir(parents=True, exist_ok=True)
    known = {case.name for case in cases.CASES} | {"pages"}
    if unknown := set(names) - known:
        sys.exit(f"unknown case(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases.write_files(folder)
        for case in cases.CASES:
            if not names or case.name in names:
                write_audit(case.name, audit(case, folder))
                print(f"wrote {case.name}", flush=True)
    if not names or "pages" in names:
        from tests.goldens import pages
        write_pages(pages.views())
        print("wrote pages", flush=True)
    if not names:
        expected = {p for case in cases.CASES for p in files(case.name).values()}
        for stale in set(AUDITS.iterdir()) - expected:
            stale.unlink()
            print(f"removed {stale.name} (no such case)")


if __name__ == "__main__":
    main(sys.argv[1:])
