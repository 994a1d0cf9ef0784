"""Forecast benchmarks, run by hand (never in the test suite): timings and ratios against a reference run in the
same process.

1. Lorenz data: the thesis's partition, 50 systems × 125 initial conditions × 1,000 points, by our vectorised RK4,
   against scipy's solve_ivp (DOP853, one trajectory at a time; timed on a subset and scaled up).
2. CRPS of 10,000 forecasts × 16 steps × 111 quantiles: sorted-sum form against the literal pairwise sum.
3. NVAR fit (20 systems × 25 initial conditions, stride 2).
4. PTN training time per epoch (d = 32, 30 weight + 5 architecture steps of batch 64) on the CPU, and on a GPU when
   one is present (otherwise the report says it was not measured).

Usage: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_forecast.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fairviz.forecast import crps as C  # noqa: E402
from fairviz.forecast import pipeline as demo, lorenz, nvar  # noqa: E402


def timed(fn, repeat: int = 1):
    best, value = float("inf"), None
    for _ in range(repeat):
        tic = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - tic)
    return best, value


def bench_lorenz(systems: int, initial: int, reference_subset: int) -> None:
    seconds, data = timed(lambda: lorenz.generate(systems, initial, seed=0))
    n = systems * initial
    print(f"Lorenz data, {systems} systems × {initial} initial conditions × {lorenz.N_POINTS} points "
          f"({data.states.nbytes / 2**20:.0f} MiB float64): RK4 (h = Δt/{lorenz.SUBSTEPS}) {seconds:.2f} s")
    params = data.trajectory_params
    tic = time.perf_counter()
    errors = []
    for k in range(reference_subset):
        sol = solve_ivp(lambda _, u, p=params[k]: lorenz.derivative(u, *p), (0, 100), data.initial[k],
                        method="DOP853", t_eval=lorenz.TIME_GRID, rtol=1e-9, atol=1e-9)
        gap = np.abs(sol.y.T - data.states[k]).max(axis=1)
        errors.append((gap[:11].max(), gap[:51].max()))
    per = (time.perf_counter() - tic) / reference_subset
    print(f"  scipy solve_ivp DOP853 (rtol 1e-9), one trajectory at a time: {per * 1e3:.1f} ms each → "
          f"{per * n:.1f} s for all {n:,} (scaled from {reference_subset}); ratio scipy / ours = {per * n / seconds:.1f}×")
    errors = np.array(errors)
    print(f"  max |RK4 − DOP853| on those trajectories: {errors[:, 0].max():.1e} over t ≤ 1, "
          f"{errors[:, 1].max():.1e} over t ≤ 5 (chaos amplifies both solvers' errors about e^0.9t)")


def bench_crps(n: int) -> None:
    rng = np.random.default_rng(0)
    q = rng.normal(size=(n, 16, 111))
    y = rng.normal(size=(n, 16))
    fast, a = timed(lambda: C.crps_ensemble(q, y), repeat=3)
    chunk = 500
    slow, b = timed(lambda: np.concatenate([C.crps_pairwise(q[i:i + chunk], y[i:i + chunk])
                                            for i in range(0, n, chunk)]))
    print(f"CRPS of {n:,} forecasts × 16 steps × 111 quantiles: sorted sum {fast:.3f} s, pairwise {slow:.3f} s "
          f"(ratio {slow / fast:.1f}×), max difference {np.abs(a - b).max():.1e}")


def bench_nvar() -> None:
    data = lorenz.generate(20, 25, seed=1)
    seconds, model = timed(lambda: nvar.fit(data.states, stride=2))
    rows = data.states.shape[0] * (data.states.shape[1] - 20) // 2
    test = lorenz.generate(4, 10, seed=2)
    mae = nvar.lead_mae(model, test.states, stride=4)
    print(f"NVAR fit on {rows:,} rows × {nvar.n_features()} features: {seconds:.2f} s; held-out MAE(x) at leads "
          f"1/4/8/16 = {mae[0]:.2f}/{mae[3]:.2f}/{mae[7]:.2f}/{mae[15]:.2f}")


def bench_ptn(epochs: int, sizes=(32,), device_request: str = "auto") -> None:
    try:
        import torch
    except ImportError:
        print("PTN: torch is not installed; not measured")
        return
    from fairviz.forecast import ptn
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    data = demo.prepare(demo.ForecastDataParams())
    settings = dict(epochs=epochs, weight_steps=30, arch_steps=5, batch=64, seed=0)
    from fairviz.core import runtime
    gpu = runtime.cuda_available()
    devices = {"auto": ["cpu"] + (["cuda"] if gpu else []), "cpu": ["cpu"], "cuda": ["cuda"] if gpu else []}[device_request]
    for device in devices:
        for d in sizes:
            config = ptn.PTNParams(d=d, tokens=16, history_heads=4, forecast_heads=4)
            trained = ptn.train(data.train, data.arch, config, ptn.PTNTrainParams(**settings, device=device))
            per_epoch = [h["seconds"] for h in trained.history]
            name = runtime.describe_device(device) if device != "cpu" else f"CPU, {torch.get_num_threads()} thread(s)"
            print(f"PTN (d = {d}, {sum(p.size for p in trained.state.values()):,} parameters) on {name}: "
                  f"{np.median(per_epoch):.2f} s per epoch (median of {epochs}; 35 steps of batch 64 + validation)")
    if "cuda" not in devices:
        print("PTN on GPU: not measured (no GPU available to this run); the code uses CUDA when present "
              "(PTNTrainParams.device = 'auto').")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes, to check the script")
    parser.add_argument("--only-ptn", action="store_true", help="only the PTN timings")
    parser.add_argument("--ptn-sizes", default="32", help="hidden sizes d, comma-separated (thesis: 72–240)")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    args = parser.parse_args()
    sizes = tuple(int(v) for v in args.ptn_sizes.split(","))
    print(f"fairviz forecast benchmarks · Python {platform.python_version()} · numpy {np.__version__} · "
          f"{os.cpu_count()} CPU(s) · OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    if args.quick:
        bench_lorenz(5, 10, 3)
        bench_crps(1000)
        bench_ptn(2, sizes, args.device)
        return
    if args.only_ptn:
        bench_ptn(5, sizes, args.device)
        return
    bench_lorenz(50, 125, 20)
    bench_crps(10_000)
    bench_nvar()
    bench_ptn(5, sizes, args.device)


if __name__ == "__main__":
    main()
