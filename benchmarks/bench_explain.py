"""Benchmark of the explanation-disparity pipeline (run by hand, never by the tests).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_explain.py [--pairs 10] [--device cuda]

Prints, for the tiny BERT on the gender-neutral control set:

1. seconds per sentence for each of the six methods (+ the random baseline) and for their seven metrics, with
   fairviz's batching (sentences batched through one gradient pass, many model rows per forward pass) and
   without it (one sentence at a time, one row per forward pass), and the speed-up;
2. a reference in the same process: the four gradient methods called the plain way (captum, one sentence per
   call, as ferret does), against fairviz's batched calls on the same sentences;
3. the GPU: measured when ``torch.cuda.is_available()``, else reported as not measured.
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
from fairviz.explain import run as pipeline  # noqa: E402
from fairviz.explain.attribute import AttributionSettings, explain  # noqa: E402

BATCHED = AttributionSettings()
UNBATCHED = AttributionSettings(batch_size=1, model_batch=1, ig_internal_batch=50)


def per_sentence(trained, settings: AttributionSettings, n_pairs: int) -> dict:
    """explain_dataset's own timings: seconds per sentence for explain, the six metrics, sensitivity."""
    result = pipeline.explain_dataset(trained, pipeline.ExplainSettings(n_pairs=n_pairs, attribution=settings))
    return result.meta["runs"]["0"]["timings"], len(result.instances)


def reference_gradients(trained, n_pairs: int) -> dict:
    """Plain captum, one sentence per call (what ferret does), vs fairviz's batched call, same sentences."""
    import torch
    from captum.attr import InputXGradient, IntegratedGradients, Saliency

    clf = trained.classifier
    frame = trained.test.sample_pairs(n_pairs, seed=0).frame
    rows, targets = clf.encode(frame.text), frame.label.astype(int).tolist()

    def plain(method, ids, y):
        E = clf.embeddings(torch.tensor([ids])).detach().requires_grad_(True)
        f = lambda e: clf.logits_from_embeddings(e)  # noqa: E731
        if method == "grad":
            return Saliency(f).attribute(E, target=y, abs=True).sum(-1)
        if method == "gxi":
            return InputXGradient(f).attribute(E, target=y).sum(-1)
        B = clf.embeddings(torch.tensor([[clf.cls_id] + [clf.pad_id] * (len(ids) - 2) + [clf.sep_id]])).detach()
        return IntegratedGradients(f, multiply_by_inputs=method == "igxi").attribute(
            E, baselines=B, target=y, n_steps=50, method="gausslegendre").sum(-1)

    out = {}
    for method in ("grad", "gxi", "ig", "igxi"):
        start = time.perf_counter()
        for ids, y in zip(rows, targets):
            plain(method, ids, y)
        t_plain = (time.perf_counter() - start) / len(rows)
        start = time.perf_counter()
        explain(clf, rows, targets, method, [0] * len(rows), BATCHED)
        t_ours = (time.perf_counter() - start) / len(rows)
        out[method] = (t_plain, t_ours)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="seconds per sentence of the explanation-disparity pipeline")
    parser.add_argument("--pairs", type=int, default=10, help="test pairs (2 sentences each)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = parser.parse_args(argv)

    import torch
    threads = models.configure_threads()
    print(f"fairviz explain benchmark · {platform.processor() or platform.machine()} · torch {torch.__version__} · "
          f"{threads} thread(s) · device {args.device}")
    if args.device == "cuda" and not torch.cuda.is_available():
        print("CUDA requested but not available.")
        return 2
    dataset = data.neutral_control(400, seed=0)
    start = time.perf_counter()
    trained = pipeline.prepare(dataset, models.ModelSpec("tiny", epochs=8, seed=0), device=args.device)
    print(f"tiny BERT ({trained.classifier.n_parameters():,} parameters): trained in {time.perf_counter() - start:.1f} s "
          f"incl. loading, test accuracy {trained.behaviour['accuracy']:.3f}")
    per_sentence(trained, dataclasses.replace(BATCHED, shap_max_evals=64), 2)       # warm-up: imports, JIT

    batched, n = per_sentence(trained, BATCHED, args.pairs)
    unbatched, _ = per_sentence(trained, UNBATCHED, args.pairs)
    print(f"\n1. Seconds per sentence, {n} sentences, all seven metrics (SHAP 500 evaluations, IG 50 steps, "
          "LIME n² samples, PGD 10 steps)")
    print(f"   {'method':<7} {'explain':>9} {'6 metrics':>10} {'sensitivity':>12} {'total':>9} │ "
          f"{'unbatched total':>16} {'speed-up':>9}")
    totals = [0.0, 0.0]
    for method in list(METHODS) + [RANDOM]:
        b, u = batched[method], unbatched[method]
        tb, tu = sum(b.values()), sum(u.values())
        totals[0] += tb if method != RANDOM else 0
        totals[1] += tu if method != RANDOM else 0
        print(f"   {METHOD_NAMES[method]:<7} {b['explain_s_per_sentence']:9.4f} {b['metrics_s_per_sentence']:10.4f} "
              f"{b['sensitivity_s_per_sentence']:12.4f} {tb:9.4f} │ {tu:16.4f} {tu / tb:8.1f}×")
    print(f"   {'6 methods':<7} {'':>9} {'':>10} {'':>12} {totals[0]:9.4f} │ {totals[1]:16.4f} "
          f"{totals[1] / totals[0]:8.1f}×")

    print(f"\n2. Reference in the same process: plain captum, one sentence per call (ferret's way), vs fairviz batched")
    for method, (plain, ours) in reference_gradients(trained, args.pairs).items():
        print(f"   {METHOD_NAMES[method]:<5} captum per sentence {plain:8.4f} s · fairviz batched {ours:8.4f} s · "
              f"ratio {plain / ours:6.1f}×")

    print("\n3. GPU: " + ("CUDA is available: rerun with --device cuda to measure it." if torch.cuda.is_available()
                           and args.device == "cpu" else
                           "measured above." if args.device == "cuda" else
                           "not measured (no CUDA device on this machine)."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
