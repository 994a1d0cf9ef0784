"""Regenerate the shipped explanation-disparity results in assets/explain/ (the page's instant demo).

    OMP_NUM_THREADS=1 .venv/bin/python scripts/make_explain_demo.py            # every data set, ~20 min on 2 cores
    OMP_NUM_THREADS=1 .venv/bin/python scripts/make_explain_demo.py neutral    # one data set

Each data set gets a folder (scores.csv, instances.csv, attributions.csv, meta.json) computed with the tiny BERT,
the paper's explainer settings (IG 50 steps, LIME n² ≤ 5,000 samples, SHAP 500 evaluations) and all seven
metrics, over five runs (as the paper) that each re-draw the split, the initialisation and the explainer seeds. Everything is
seeded, so a re-run on the same library versions gives the same numbers up to float rounding.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairviz.explain import data, models  # noqa: E402
from fairviz.explain import pipeline  # noqa: E402
from fairviz.explain.results import SHIPPED  # noqa: E402

# key → (generated pairs, tiny-model epochs (= models.TINY_EPOCHS), explained test pairs (COMPAS: sentences), runs)
PLAN = {
    "neutral": (400, 8, 40, 5),
    "geco-all": (400, 8, 40, 5),
    "geco-subj": (400, 10, 40, 5),
    "stereotypes": (600, 30, 40, 5),        # the gender × action interaction needs ~15 epochs to be learned
    "compas": (0, 5, 100, 5),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("keys", nargs="*", default=list(PLAN), help=f"data sets (default: {' '.join(PLAN)})")
    parser.add_argument("--out", type=Path, default=SHIPPED)
    args = parser.parse_args(argv)
    for key in args.keys:
        generated, epochs, n_pairs, runs = PLAN[key]
        dataset = data.load_builtin(key, generated, seed=0)
        spec = models.ModelParams("tiny", epochs=epochs, seed=0)
        settings = pipeline.ExplainParams(n_pairs=n_pairs, seed=0)
        start = time.perf_counter()
        last = [0.0]

        def progress(fraction: float, message: str) -> None:
            if fraction - last[0] >= 0.05 or fraction >= 1.0:
                last[0] = fraction
                print(f"  {key}: {100 * fraction:5.1f}%  {message}", flush=True)

        result = pipeline.run(dataset, spec, settings, runs=runs, progress=progress)
        folder = result.save(args.out / key)
        size = sum(f.stat().st_size for f in folder.iterdir()) / 1024
        print(f"{key}: {len(result.instances)} sentences × {len(result.methods)} methods in "
              f"{time.perf_counter() - start:.0f} s → {folder} ({size:.0f} KiB)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
