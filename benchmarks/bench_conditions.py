"""Benchmark of the retraining simulator (run by hand; prints timings and ratios).

    OMP_NUM_THREADS=2 PYTHONPATH=. python benchmarks/bench_conditions.py [--data moji-like] [--skip-default]

1. The default simulator run: Moji-like data (10,000 train / 4,000 dev / 8,000 test rows), CB over the 9 α of
   the paper's grid × 4 methods (Vanilla, DS, RW, EO_GLB) × 3 seeds, m = 10,000, 2 tanh layers of 64, early
   stopping on dev. Target ≤ 60 s on 2 cores.
2. Seconds per epoch of each of the nine methods (RW in both variants) on the same m = 10,000 rows, 5 epochs
   without early stopping, on CPU and — when one is present — on CUDA.
   Reference in the same process: scikit-learn's MLPClassifier with the same backbone (two tanh layers of 64,
   Adam, lr 3e-3, batch 1,024, one BLAS thread), i.e. the numpy route for Vanilla.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")

import numpy as np  # noqa: E402

from fairviz.conditions import data as cdata  # noqa: E402
from fairviz.conditions import methods as M  # noqa: E402
from fairviz.conditions import simulate  # noqa: E402
from fairviz.conditions.display import simulation_summary  # noqa: E402
from fairviz.report.render import to_terminal  # noqa: E402


def default_run(dataset) -> float:
    start = time.perf_counter()
    cpu = time.process_time()
    last = [-1]

    def progress(fraction, message):
        if int(fraction * 10) != last[0]:
            last[0] = int(fraction * 10)
            print(f"  {100 * fraction:3.0f}% after {time.perf_counter() - start:6.1f} s wall, "
                  f"{time.process_time() - cpu:6.1f} s CPU", flush=True)

    sim = simulate.run(dataset, simulate.RetrainingParams(), progress=progress)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    epochs = [r.epochs for r in sim.runs if r.split == "test"]
    print(f"default run: {len(sim.runs) // 2} models, {sum(epochs)} epochs (mean {np.mean(epochs):.1f} per model) "
          f"in {seconds:.1f} s wall on {sim.device} (target ≤ 60 s), {cpu:.1f} s CPU time (wall on an idle "
          f"machine ≈ CPU time / cores used; load average now {os.getloadavg()[0]:.1f})")
    for line in to_terminal(simulation_summary(sim)).splitlines()[1:4]:
        print("  " + line)
    return seconds


def per_epoch(dataset, device: str, epochs: int = 5) -> dict[str, float]:
    settings = M.DebiasTrainParams(epochs=epochs, patience=epochs + 1, device=device)
    out = {}
    M.train("vanilla", {}, dataset.train, dataset.dev, 2, 2, M.DebiasTrainParams(epochs=1, device=device))   # warm-up
    for method in M.METHODS:
        start = time.perf_counter()
        cpu = time.process_time()
        trained = M.train(method, M.grid(method)[0], dataset.train, dataset.dev, dataset.n_classes, dataset.n_groups,
                          settings, seed=0)
        seconds = time.perf_counter() - start
        out[method] = (seconds / trained.epochs, (time.process_time() - cpu) / trained.epochs)
    return out


def sklearn_reference(dataset, epochs: int = 5) -> float:
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier
    from threadpoolctl import threadpool_limits
    model = MLPClassifier(hidden_layer_sizes=(64, 64), activation="tanh", solver="adam", learning_rate_init=3e-3,
                          batch_size=1024, max_iter=epochs, random_state=0, tol=0, n_iter_no_change=10 ** 6)
    start = time.perf_counter()
    cpu = time.process_time()
    with warnings.catch_warnings(), threadpool_limits(1):     # one BLAS thread, as fairviz trains on one thread
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(dataset.train.X, dataset.train.y)
    return (time.perf_counter() - start) / epochs, (time.process_time() - cpu) / epochs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="moji-like")
    parser.add_argument("--skip-default", action="store_true")
    args = parser.parse_args()
    import torch
    dataset = cdata.builtin(args.data)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS')}, data {dataset.name}: {dataset.train.n:,} train rows, "
          f"{dataset.train.X.shape[1]} features")
    if not args.skip_default:
        default_run(dataset)
    reference = sklearn_reference(dataset)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for device in devices:
        timings = per_epoch(dataset, device)
        print(f"seconds per epoch on {device} ({dataset.train.n:,} rows, batch 1,024; scikit-learn MLPClassifier "
              f"Vanilla reference {reference[0]:.3f} s wall / {reference[1]:.3f} s CPU per epoch):")
        for method, (seconds, cpu) in timings.items():
            name = M.METHOD_NAMES[method] + (" *" if method == "inlp" else "")
            print(f"  {name:<16} {seconds:7.3f} s wall {cpu:7.3f} s CPU   "
                  f"×{cpu / reference[1]:5.2f} of the reference's CPU time")
        print("  * INLP: its Vanilla training plus the null-space probes and the refit, divided by the epochs")


if __name__ == "__main__":
    main()
