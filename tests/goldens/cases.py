"""The audits the goldens hold: each case is a `fairviz audit` command line over a bundled sample (assets/) or a small
seeded file written to a temporary folder, run in-process; its JSON, HTML report, terminal output (stdout and
stderr) and exit status are what a later change must keep equal (tests/goldens/README.md)."""
from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tests.conftest import ROOT

# small on purpose: the goldens pin numbers, not precision (every case runs in a few seconds)
FAST = ("--resamples", "50", "--knee-resamples", "20", "--seed", "0")
ROWS = 900
CLASSES = np.array(["cat", "dog", "bird"])


@dataclass(frozen=True)
class Case:
    name: str
    file: str          # a file written by `write_files`, or "assets/<sample>.csv"
    args: tuple[str, ...]


def write_files(folder: Path) -> None:
    """Three seeded files, one per task, each with two models' predictions and two group attributes (a: three
    groups of unequal size, b: two), a built-in disparity in group a so that findings and slices have something
    to find."""
    rng = np.random.default_rng(20261206)
    n = ROWS
    a = rng.choice(["a1", "a2", "a3"], n, p=[0.5, 0.32, 0.18]).astype(object)
    b = rng.choice(["b1", "b2"], n, p=[0.6, 0.4]).astype(object)
    # binary: group a2 over-scored by 0.12, the second model a noisier copy
    p = rng.uniform(0.03, 0.9, n)
    y = rng.binomial(1, p)
    s1 = np.clip(p + 0.12 * (a == "a2") + rng.normal(0, 0.04, n), 0.001, 0.999)
    s2 = np.clip(p + rng.normal(0, 0.12, n), 0.001, 0.999)
    pd.DataFrame({"y": y, "s1": s1.round(6), "s2": s2.round(6), "a": a, "b": b}).to_csv(folder / "binary.csv",
                                                                                      index=False)
    # regression: group a2's targets 4 above the first model's predictions
    pred1 = rng.normal(50, 10, n)
    target = pred1 + rng.normal(0, 5, n) + 4 * (a == "a2") - 2 * (b == "b2")
    pred2 = target + rng.normal(0, 7, n)
    pd.DataFrame({"target": target.round(3), "pred1": pred1.round(3), "pred2": pred2.round(3), "a": a, "b": b}
                 ).to_csv(folder / "regression.csv", index=False)
    # multiclass: class probabilities; group a2's cats often read as dogs
    probs = rng.dirichlet([2, 2, 2], n)
    labels = (rng.random(n)[:, None] > np.cumsum(probs, 1)).sum(1)
    swap = (a == "a2") & (labels == 0) & (rng.random(n) < 0.6)
    probs[swap] = probs[swap][:, [1, 0, 2]]
    probs[swap, 1] = probs[swap].max(1) + 0.05
    probs /= probs.sum(1, keepdims=True)
    other = rng.dirichlet([2, 2, 2], n)
    frame = pd.DataFrame({"label": CLASSES[labels], "p_cat": probs[:, 0].round(6), "p_dog": probs[:, 1].round(6),
                          "p_bird": probs[:, 2].round(6), "a": a, "b": b})
    frame["predicted"] = CLASSES[probs.argmax(1)]
    frame["confidence"] = probs.max(1).round(6)
    frame["predicted2"] = CLASSES[other.argmax(1)]
    frame["confidence2"] = other.max(1).round(6)
    frame.to_csv(folder / "multiclass.csv", index=False)


BINARY = ("--label", "y")
REGRESSION = ("--task", "regression", "--label", "target")
MULTICLASS = ("--task", "multiclass", "--label", "label")
CASES = (
    # COMPAS with its bundled settings (threshold 0.4, benefit negative, reference Caucasian): race and sex
    Case("compas", "assets/compas.csv", ()),
    Case("binary_one_model", "binary.csv", (*BINARY, "--score", "s1", "--group", "a")),
    Case("binary_two_models", "binary.csv", (*BINARY, "--score", "s1", "--score", "s2", "--model-name", "first",
                                             "--model-name", "second", "--group", "a")),
    Case("binary_every_attribute", "binary.csv", (*BINARY, "--score", "s1", "--group", "a", "--group", "b")),
    Case("binary_slices", "binary.csv", (*BINARY, "--score", "s1", "--group", "a", "--group", "b", "--slices")),
    Case("regression_one_model", "regression.csv", (*REGRESSION, "--score", "pred1", "--group", "a",
                                                    "--units", "USD")),
    Case("regression_two_models", "regression.csv", (*REGRESSION, "--score", "pred1", "--score", "pred2",
                                                     "--group", "a")),
    Case("regression_every_attribute", "regression.csv", (*REGRESSION, "--score", "pred1", "--group", "a",
                                                          "--group", "b")),
    Case("regression_slices", "regression.csv", (*REGRESSION, "--score", "pred1", "--group", "a", "--group", "b",
                                                 "--slices")),
    Case("multiclass_one_model", "multiclass.csv", (*MULTICLASS, "--class-scores", "p_*", "--group", "a")),
    Case("multiclass_predicted", "multiclass.csv", (*MULTICLASS, "--predicted", "predicted", "--score",
                                                    "confidence", "--group", "a")),
    # issue 35: several models on multiclass (once refused): each --predicted with the --score in its position
    Case("multiclass_two_models", "multiclass.csv", (*MULTICLASS, "--predicted", "predicted", "--score",
                                                     "confidence", "--predicted", "predicted2", "--score",
                                                     "confidence2", "--group", "a")),
    Case("multiclass_every_attribute", "multiclass.csv", (*MULTICLASS, "--class-scores", "p_*", "--group", "a",
                                                          "--group", "b")),
    Case("multiclass_slices", "multiclass.csv", (*MULTICLASS, "--class-scores", "p_*", "--group", "a", "--group",
                                                 "b", "--slices")),
)


def run(case: Case, folder: Path) -> dict:
    """Run one case in-process; the raw outputs (`normalise.audit_outputs` makes them comparable)."""
    import plotly.io as pio

    from fairviz.cli.main import main

    source = ROOT / case.file if case.file.startswith("assets/") else folder / case.file
    out_json, out_html = folder / f"{case.name}.json", folder / f"{case.name}.html"
    stdout, stderr = io.StringIO(), io.StringIO()
    # plotly's default template as in the `fairviz` command's own process: importing Streamlit (another test in the
    # same worker) changes it, and a figure without a template of its own (the slices' treemap) takes it
    default_template, pio.templates.default = pio.templates.default, "plotly"
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(["audit", str(source), *case.args, *FAST, "--json", str(out_json), "--html", str(out_html)])
    finally:
        pio.templates.default = default_template
    return {"exit": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue(),
            "json": out_json.read_text() if out_json.exists() else None,
            "html": out_html.read_text() if out_html.exists() else None}
