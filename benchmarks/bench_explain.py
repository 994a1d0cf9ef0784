"""Benchmark of the explanation-disparity pipeline (run by hand, never by the tests).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_explain.py [--pairs 10] [--device auto|cpu|cuda]
                                                                   [--model tiny|minilm]

Prints, for the tiny BERT (or MiniLM) on the gender-neutral control set, on the chosen device:

1. seconds per sentence for each of the six methods (+ the random baseline) and for their seven metrics, with
   fairviz's batching (sentences batched through one gradient pass, many model rows per forward pass) and
   without it (one sentence at a time, one row per forward pass), the speed-up, and each method's share of the
   time;
2. model-batch sizes for LIME/SHAP/AOPC rows and IG steps (what batching buys on this device), plus bfloat16
   autocast on a GPU (``AttributionParams.autocast``), with the largest change it makes to the attributions;
3. a reference in the same process: the four gradient methods called the plain way (captum, one sentence per
   call, as ferret does), against fairviz's batched calls on the same sentences.

Without a GPU, ``--device cuda`` says so and exits 2; ``auto`` takes CUDA when present.
"""
from __future__ import annotations

import argparse
import dataclasses
import platform
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairviz.explain import METHOD_NAMES, METHODS, RANDOM  # noqa: E402
from fairviz.explain import data, models  # noqa: E402
from fairviz.explain import pipeline  # noqa: E402
from fairviz.core import runtime  # noqa: E402
from fairviz.explain.attribute import AttributionParams, explain  # noqa: E402

BATCHED = AttributionParams()
UNBATCHED = AttributionParams(batch_size=1, model_batch=1, ig_internal_batch=50)


def per_sentence(trained, settings: AttributionParams, n_pairs: int) -> dict:
    """explain_dataset's own timings: seconds per sentence for explain, the six metrics, sensitivity."""
    result = pipeline.explain_dataset(trained, pipeline.ExplainParams(n_pairs=n_pairs, attribution=settings))
    return result.meta["runs"]["0"]["timings"], len(result.instances)


def reference_gradients(trained, n_pairs: int) -> dict:
    """Plain captum, one sentence per call (what ferret does), vs fairviz's batched call, same sentences."""
    import torch
    from captum.attr import InputXGradient, IntegratedGradients, Saliency

    clf = trained.classifier
    frame = trained.test.sample_pairs(n_pairs, seed=0).frame
    rows, targets = clf.encode(frame.text), frame.label.astype(int).tolist()

    def plain(method, ids, y):
        E = clf.embeddings(clf.ids_tensor([ids])).detach().requires_grad_(True)
        f = lambda e: clf.logits_from_embeddings(e)  # noqa: E731
        if method == "grad":
            return Saliency(f).attribute(E, target=y, abs=True).sum(-1)
        if method == "gxi":
            return InputXGradient(f).attribute(E, target=y).sum(-1)
        B = clf.embeddings(clf.ids_tensor([[clf.cls_id] + [clf.pad_id] * (len(ids) - 2) + [clf.sep_id]])).detach()
        return IntegratedGradients(f, multiply_by_inputs=method == "igxi").attribute(
            E, baselines=B, target=y, n_steps=50, method="gausslegendre").sum(-1)

    out = {}
    for method in ("grad", "gxi", "ig", "igxi"):
        start = time.perf_counter()
        for ids, y in zip(rows, targets):
            plain(method, ids, y)
        synchronize(clf.device)
        t_plain = (time.perf_counter() - start) / len(rows)
        start = time.perf_counter()
        explain(clf, rows, targets, method, [0] * len(rows), BATCHED)
        synchronize(clf.device)
        t_ours = (time.perf_counter() - start) / len(rows)
        out[method] = (t_plain, t_ours)
    return out


def synchronize(device: str) -> None:
    if str(device).startswith("cuda"):
        import torch
        torch.cuda.synchronize()


def batch_sweep(trained, n_pairs: int) -> None:
    """Seconds per sentence of LIME, SHAP (their model rows per forward pass) and IG×Input (expanded sentence × step
    rows per forward pass) at several batch sizes; on a GPU also bfloat16 autocast for LIME/SHAP."""
    import numpy as np
    clf = trained.classifier
    frame = trained.test.sample_pairs(n_pairs, seed=0).frame
    rows, targets = clf.encode(frame.text), frame.label.astype(int).tolist()
    seeds = list(range(len(rows)))
    cases = [("lime", "model_batch", (8, 64, 256, 2048)), ("shap", "model_batch", (8, 64, 256, 2048)),
             ("igxi", "ig_internal_batch", (50, 500, 2048, 8192))]
    for method, knob, sizes in cases:
        line = []
        for size in sizes:
            settings = AttributionParams(**{knob: size, "batch_size": 64})
            start = time.perf_counter()
            explain(clf, rows, targets, method, seeds, settings)
            synchronize(clf.device)
            line.append(f"{size:>5}: {(time.perf_counter() - start) / len(rows):7.4f} s")
        print(f"   {METHOD_NAMES[method]:<6} {knob:<17} " + " · ".join(line))
    if str(clf.device).startswith("cuda"):
        for method in ("lime", "shap"):
            times, scores = [], []
            for autocast in (False, True):
                settings = AttributionParams.for_device(clf.device, autocast=autocast)
                start = time.perf_counter()
                out = explain(clf, rows, targets, method, seeds, settings)
                synchronize(clf.device)
                times.append((time.perf_counter() - start) / len(rows))
                scores.append(np.concatenate([a.scores for a in out]))
            print(f"   {METHOD_NAMES[method]:<6} bfloat16 autocast: {times[0]:.4f} → {times[1]:.4f} s per sentence, "
                  f"largest change of a raw score {np.abs(scores[0] - scores[1]).max():.2e}")
    else:
        print("   bfloat16 autocast: GPU only (not measured on the CPU).")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="seconds per sentence of the explanation-disparity pipeline")
    parser.add_argument("--pairs", type=int, default=10, help="test pairs (2 sentences each)")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="cpu")
    parser.add_argument("--model", choices=["tiny", "minilm"], default="tiny")
    parser.add_argument("--skip-unbatched", action="store_true", help="skip the slow one-row-at-a-time run")
    args = parser.parse_args(argv)

    import torch
    threads = models.configure_threads()
    try:
        device = runtime.pick_device(args.device)
    except ValueError as err:
        print(f"{err}: GPU figures not measured.")
        return 2
    print(f"fairviz explain benchmark · {platform.processor() or platform.machine()} · torch {torch.__version__} · "
          f"{threads} thread(s) · {runtime.describe_device(device)}")
    global BATCHED
    BATCHED = AttributionParams.for_device(device)
    dataset = data.neutral_control(400, seed=0)
    start = time.perf_counter()
    epochs = 8 if args.model == "tiny" else 1
    trained = pipeline.prepare(dataset, models.ModelParams(args.model, epochs=epochs, seed=0), device=device)
    print(f"{args.model} ({trained.classifier.n_parameters():,} parameters): trained in "
          f"{time.perf_counter() - start:.1f} s incl. loading, test accuracy {trained.behaviour['accuracy']:.3f}")
    per_sentence(trained, dataclasses.replace(BATCHED, shap_max_evals=64), 2)       # warm-up: imports, JIT

    batched, n = per_sentence(trained, BATCHED, args.pairs)
    unbatched = None if args.skip_unbatched else per_sentence(trained, UNBATCHED, args.pairs)[0]
    print(f"\n1. Seconds per sentence, {n} sentences, all seven metrics (SHAP 500 evaluations, IG 50 steps, "
          "LIME n² samples, PGD 10 steps)")
    print(f"   {'method':<7} {'explain':>9} {'6 metrics':>10} {'sensitivity':>12} {'total':>9} {'share':>6} │ "
          f"{'unbatched total':>16} {'speed-up':>9}")
    six = sum(sum(batched[m].values()) for m in METHODS)
    totals = [0.0, 0.0]
    for method in list(METHODS) + [RANDOM]:
        b = batched[method]
        tb = sum(b.values())
        tu = sum(unbatched[method].values()) if unbatched else float("nan")
        totals[0] += tb if method != RANDOM else 0
        totals[1] += tu if method != RANDOM else 0
        print(f"   {METHOD_NAMES[method]:<7} {b['explain_s_per_sentence']:9.4f} {b['metrics_s_per_sentence']:10.4f} "
              f"{b['sensitivity_s_per_sentence']:12.4f} {tb:9.4f} {100 * tb / six:5.0f}% │ {tu:16.4f} {tu / tb:8.1f}×")
    print(f"   {'6 methods':<7} {'':>9} {'':>10} {'':>12} {totals[0]:9.4f} {'100%':>6} │ {totals[1]:16.4f} "
          f"{totals[1] / totals[0]:8.1f}×")

    print(f"\n2. Batch sizes on {runtime.describe_device(device)} (seconds per sentence, explanation only)")
    batch_sweep(trained, min(args.pairs, 4))

    print(f"\n3. Reference in the same process: plain captum, one sentence per call (ferret's way), vs fairviz batched")
    for method, (plain, ours) in reference_gradients(trained, args.pairs).items():
        print(f"   {METHOD_NAMES[method]:<5} captum per sentence {plain:8.4f} s · fairviz batched {ours:8.4f} s · "
              f"ratio {plain / ours:6.1f}×")

    print("\nGPU: " + ("CUDA is available: rerun with --device cuda to measure it." if runtime.cuda_available()
                         and device == "cpu" else "measured above." if device.startswith("cuda") else
                         "not measured (no CUDA GPU on this machine)."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
