"""Regenerate the forecast assets in assets/forecast/ (fixed seeds; about 10 minutes on 2 CPU cores):

- lorenz_ptn.npz: the small pretrained PTN the 'Lorenz & PTN' page opens on, its NVAR, the Gaussian-NVAR baseline,
  24 precomputed test fans and the per-forecast CRPS of the whole test partition (``demo.save_bundle``). It is made
  by the same pipeline as ``fairviz ptn train --config scripts/ptn_demo.json --out DIR``.
- lorenz_forecasts.csv: the forecast-fairness sample. Two PTNs are trained on Lorenz systems of which one in ten
  is in a *rare regime* (ρ ~ U(34, 36) instead of the thesis's U(27.9, 28.1): a larger, faster attractor): one with
  the static context (σ, ρ, β) and one without it (the static branch cut). Both forecast held-out windows of
  typical and rare systems; the file holds 17 quantile levels per (series, step) and model, the truth, the NVAR
  forecast, and two group columns: ``regime`` (typical / rare) and ``lobe`` (the attractor wing the window starts
  on: a null control, since Lorenz-63 is symmetric under (x, y) → (−x, −y)).

Usage: OMP_NUM_THREADS=1 .venv/bin/python scripts/make_forecast_assets.py [--quick]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairviz.forecast import crps as scores  # noqa: E402
from fairviz.forecast import pipeline as demo, lorenz, ptn  # noqa: E402
from fairviz.forecast import windows as win  # noqa: E402

OUT = ROOT / "assets" / "forecast"
SAMPLE_LEVELS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 0.95, 0.975, 0.995)
RARE_RHO = (34.0, 36.0)


def demo_model(config_path: Path, quick: bool) -> None:
    config = demo.PipelineParams.from_dict(json.loads(config_path.read_text()))
    if quick:
        config = demo.PipelineParams(config.data, config.ptn, {**config.train, "epochs": 3}, config.fans)
    bundle = demo.run_pipeline(config, progress=_printer("demo PTN"))
    demo.save_bundle(bundle, OUT / "lorenz_ptn.npz")
    s = bundle.evaluation.skill
    print(f"demo PTN: skill vs Gaussian-NVAR at CRPS quartiles {np.round(s.quartiles, 3).tolist()}, "
          f"{100 * s.outperformed:.1f}% outperformed, {bundle.trained.seconds:.0f} s training "
          f"({bundle.trained.seconds_per_epoch:.2f} s/epoch)")


def _regime_sets(n_typical: int, n_rare: int, n_initial: int, seed: int):
    ranges_rare = lorenz.PARAM_RANGES.copy()
    ranges_rare[1] = RARE_RHO
    typical = lorenz.generate(n_typical, n_initial, seed=seed)
    rare = lorenz.generate(n_rare, n_initial, seed=seed + 500, param_ranges=ranges_rare)
    return lorenz.combine([typical, rare])


def fairness_sample(quick: bool) -> None:
    """Two PTNs (with / without static context) trained where the rare regime is 10% of the systems."""
    static_bounds = lorenz.PARAM_RANGES.copy()
    static_bounds[1] = (lorenz.RHO_RANGE[0], RARE_RHO[1])
    fit_set = _regime_sets(18, 2, 12, seed=100)
    train_set = _regime_sets(18, 2, 12, seed=200)
    arch_set = _regime_sets(9, 1, 12, seed=300)
    test_set = _regime_sets(4, 4, 10, seed=400)
    config = demo.ForecastDataParams(seed=7)
    data = demo.prepare_from_sets(config, fit_set, train_set, arch_set, test_set, static_bounds)
    settings = ptn.PTNTrainParams(epochs=3 if quick else 50, weight_steps=30, seed=0)
    rare_system = test_set.params[:, 1] > lorenz.RHO_RANGE[1] + 1
    test = data.test
    regime = np.where(rare_system[test_set.system[test.trajectory]], "rare", "typical")
    rng = np.random.default_rng(7)
    chosen = np.sort(np.concatenate([rng.choice(np.flatnonzero(regime == "typical"), 100, replace=False),
                                     rng.choice(np.flatnonzero(regime == "rare"), 50, replace=False)]))
    w = test.take(chosen)
    frames = []
    for label, use_static in (("PTN with static context", True), ("PTN without static context", False)):
        trained = ptn.train(data.train, data.arch, ptn.PTNParams(use_static=use_static), settings,
                            progress=_printer(label))
        q = ptn.predict(trained, w)
        print(f"{label}: mean CRPS typical {scores.crps_forecast(q, w.target)[regime[chosen] == 'typical'].mean():.3f}, "
              f"rare {scores.crps_forecast(q, w.target)[regime[chosen] == 'rare'].mean():.3f}")
        frames.append(_sample_rows(label, q, w, regime[chosen], data))
    sample = pd.concat(frames, ignore_index=True)
    sample.to_csv(OUT / "lorenz_forecasts.csv", index=False, float_format="%.3f", lineterminator="\n")
    print(f"lorenz_forecasts.csv: {len(sample):,} rows, {sample['id'].nunique()} series")


def _sample_rows(model: str, q: np.ndarray, w: win.Windows, regime: np.ndarray, data: demo.DemoData) -> pd.DataFrame:
    tau = scores.levels(q.shape[-1])
    n, steps = w.target.shape
    start_x = data.nvar.denormalise(w.history)[:, -1, 0]
    frame = pd.DataFrame({
        "id": np.repeat([f"w{i:03d}" for i in range(n)], steps),
        "step": np.tile(np.arange(1, steps + 1), n),
        "model": model,
        "regime": np.repeat(regime, steps),
        "lobe": np.repeat(np.where(start_x >= 0, "x > 0 wing", "x < 0 wing"), steps),
        "truth": w.target.reshape(-1),
        "nvar": w.latest_forecast.reshape(-1),
    })
    for level in SAMPLE_LEVELS:
        frame[f"q{level:g}"] = scores.quantile_at(q, tau, level).reshape(-1)
    return frame


def _printer(label: str):
    last = [0.0]

    def report(fraction: float, message: str) -> None:
        now = time.monotonic()
        if now - last[0] > 15 or fraction >= 1:
            print(f"  {label}: {100 * fraction:.0f}% {message}", flush=True)
            last[0] = now
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 epochs only (to check the script, not to ship)")
    parser.add_argument("--only", choices=["demo", "sample"], help="regenerate one asset")
    args = parser.parse_args()
    import torch
    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    if args.only in (None, "demo"):
        demo_model(ROOT / "scripts" / "ptn_demo.json", args.quick)
    if args.only in (None, "sample"):
        fairness_sample(args.quick)


if __name__ == "__main__":
    main()
