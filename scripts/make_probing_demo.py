"""Write the shipped results of the "Knee probing & augmentation" page: assets/probing/probe.json and augment.json.

Same code path as ``fairviz probe`` / ``fairviz augment`` with their defaults (tiny BERT, the planted-bias sentiment
twins, 1,000 pairs), so ``fairviz probe --json -`` on this machine reproduces probe.json. Takes a few minutes on one
CPU core:

    OMP_NUM_THREADS=1 python scripts/make_probing_demo.py [--only probe|augment]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fairviz.core.serialize import clean  # noqa: E402
from fairviz.probing.augment import AugmentParams  # noqa: E402
from fairviz.probing.probe import ProbeParams  # noqa: E402
from fairviz.probing.analysis import RunProtocol, run_augment, run_probe  # noqa: E402
from fairviz.probing.shipped import ASSETS, shipped_path  # noqa: E402
from fairviz.probing.textmodel import DEFAULT_DATA, DEFAULT_GENERATE, load_dataset, model_spec  # noqa: E402


def progress(fraction: float, message: str = "") -> None:
    print(f"\r  {100 * fraction:5.1f}%  {message[:70]:<70}", end="", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=["probe", "augment"])
    args = parser.parse_args()
    ASSETS.mkdir(parents=True, exist_ok=True)
    dataset = load_dataset(DEFAULT_DATA, DEFAULT_GENERATE, 0)
    spec = model_spec("tiny", dataset.key, None, 0)
    if args.only in (None, "probe"):
        start = time.perf_counter()
        result = run_probe(dataset, spec, ProbeParams(), RunProtocol(), progress)
        shipped_path("probe").write_text(json.dumps(clean(result.to_dict()), indent=1) + "\n")
        print(f"\nprobe: {time.perf_counter() - start:.0f} s → {shipped_path('probe')}", file=sys.stderr)
    if args.only in (None, "augment"):
        start = time.perf_counter()
        result = run_augment(dataset, spec, AugmentParams(), RunProtocol(), progress)
        shipped_path("augment").write_text(json.dumps(clean(result.to_dict()), indent=1) + "\n")
        print(f"\naugment: {time.perf_counter() - start:.0f} s → {shipped_path('augment')}", file=sys.stderr)


if __name__ == "__main__":
    main()
