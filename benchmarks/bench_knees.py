"""Benchmark of knee detection (run by hand; prints timings, ratios and knee differences).

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_knees.py [--above 40000] [--reference]

1. One curve of all n points: fairviz's ``lowess_uniform`` + ``kneedle`` against statsmodels' ``lowess`` +
   kneed's ``KneeLocator`` in the same process (n = 3,696, COMPAS's largest race group, and n = 20,000, the
   all-points cutoff), and 200 bootstrap curves at once (the F_h/F_v intervals re-detect knees in each).
2. Above the cutoff (n > 20,000) the curve is Q on 20,000 even percentiles: the knee difference to the all-points
   curve, on continuous scores and on tied scores (deciles, as COMPAS). ``--reference`` also runs statsmodels +
   kneed on all n points (minutes).
3. The residual page's default analysis (1,000 resamples, 200 with knees re-detected) on COMPAS by race.
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from kneed import KneeLocator  # noqa: E402
from statsmodels.nonparametric.smoothers_lowess import lowess  # noqa: E402

from fairviz.data.samples import load_sample  # noqa: E402
from fairviz.residuals import knees as K  # noqa: E402
from fairviz.residuals import RDFParams, analyse  # noqa: E402


def reference(d_sorted: np.ndarray) -> tuple[float, float]:
    n = d_sorted.size
    p = np.arange(1, n + 1) / n
    smooth = lowess(d_sorted, p, frac=K.LOWESS_FRAC, it=K.LOWESS_ITERATIONS, return_sorted=False)
    kw = dict(S=K.SENSITIVITY, direction="increasing", interp_method="interp1d", online=False)
    return (KneeLocator(p, smooth, curve="concave", **kw).knee, KneeLocator(p, smooth, curve="convex", **kw).knee)


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def residuals(n: int, tied: bool, rng) -> np.ndarray:
    score = rng.beta(2, 3, n)
    y = rng.binomial(1, score)
    if tied:
        score = np.ceil(score * 10) / 10          # deciles, as the COMPAS score
    return np.sort(score - y)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--above", type=int, default=40_000, help="rows of the above-cutoff curves")
    parser.add_argument("--reference", action="store_true", help="statsmodels + kneed on the above-cutoff curves too")
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    print("1. one curve, all n points (fairviz vs statsmodels lowess + kneed KneeLocator)")
    pred = load_sample("compas")
    view = pred.groups("race")
    black = np.sort((pred.score - pred.y)[view.codes == list(view.names).index("African-American")])
    for label, d in (("COMPAS African-American", black), ("continuous, n = 20,000", residuals(20_000, False, rng))):
        t_ref, ref = timed(lambda: reference(d))
        t_ours, ours = timed(lambda: K.detect_knees(d, sorted_input=True))
        print(f"   {label:26s} n = {d.size:6,}: fairviz {t_ours:6.3f} s, reference {t_ref:6.3f} s "
              f"({t_ref / t_ours:5.1f}×); knees {ours[0].percentile:.4f}/{ours[1].percentile:.4f} vs "
              f"{ref[0]:.4f}/{ref[1]:.4f}")
    for n in (3_696, 20_000):
        d = residuals(n, False, rng)
        curves = np.sort(rng.choice(d, (200, n)), axis=1)
        t_batch, _ = timed(lambda: K.detect_knees_batch(curves))
        t_one, _ = timed(lambda: reference(curves[0]))
        print(f"   200 bootstrap curves, n = {n:6,}: fairviz {t_batch:6.2f} s; reference ≈ {200 * t_one:6.1f} s "
              f"(200 × one curve, {200 * t_one / t_batch:.0f}×)")

    print(f"2. above the cutoff: Q on {K.MAX_POINTS:,} even percentiles vs all {args.above:,} points")
    for tied in (False, True):
        d = residuals(args.above, tied, rng)
        t_grid, grid = timed(lambda: K.detect_knees(d, sorted_input=True))
        t_all, full = timed(lambda: K.detect_knees(d, K.KneeParams(max_points=d.size), sorted_input=True))
        diff = max(abs(grid[0].percentile - full[0].percentile), abs(grid[1].percentile - full[1].percentile))
        line = (f"   {'tied (deciles)' if tied else 'continuous':15s}: grid {grid[0].percentile:.5f}/"
                f"{grid[1].percentile:.5f} ({t_grid:.2f} s), all points {full[0].percentile:.5f}/"
                f"{full[1].percentile:.5f} ({t_all:.2f} s); largest |Δq| = {diff:.5f}")
        if args.reference:
            t_ref, ref = timed(lambda: reference(d))
            line += f"; statsmodels + kneed {ref[0]:.5f}/{ref[1]:.5f} ({t_ref:.0f} s)"
        print(line)

    print("3. residual page default (1,000 resamples, 200 knee resamples), COMPAS by race")
    t_default, audit = timed(lambda: analyse(pred, "race", RDFParams()))
    t_point, _ = timed(lambda: analyse(pred, "race", RDFParams(knee_resamples=0)))
    c = audit.concentration
    print(f"   {t_default:.2f} s ({t_point:.2f} s without the knee bootstrap); knee/non-knee ratio {c.ratio:.3f}, "
          f"ECE {c.ece:.3f}: {c.verdict}")


if __name__ == "__main__":
    main()
