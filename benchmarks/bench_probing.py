"""Benchmark of knee probing and one RDF-guided augmentation run (run by hand, never by the tests).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_probing.py [--generate 1000] [--device cuda]

Prints, for the tiny BERT on the planted-bias sentiment twins (the CLI's defaults):

1. probing: training, scoring the held-out pool, and the probe itself (counterfactual edits, their scores, knee
   analysis, bootstrap), in seconds;
2. a reference in the same process: the same pool scored one text at a time through transformers' own
   ``TextClassificationPipeline`` (the plain way), against fairviz's batched scoring, and the ratio;
3. one augmentation run (Algorithm 1, k = 100, one seed, random / uncertainty / RDF, no control): seconds in all and
   per fine-tuning;
4. the GPU: measured when ``torch.cuda.is_available()``, else reported as not measured.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairviz.probing.augment import AugmentParams, Split, augment  # noqa: E402
from fairviz.probing.probe import ProbeParams, probe, score_texts  # noqa: E402
from fairviz.probing.analysis import RunProtocol  # noqa: E402
from fairviz.probing.textmodel import TextModel, load_dataset, model_spec, splits, train_model  # noqa: E402


def clock(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def reference_scores(model: TextModel, texts: list[str]):
    """transformers' own pipeline, one text per call: the plain way to score a list of texts."""
    from transformers import TextClassificationPipeline
    clf = model.classifier
    pipe = TextClassificationPipeline(model=clf.model, tokenizer=clf.tokenizer, device=clf.device, top_k=None)
    out = []
    for t in texts:
        labels = pipe(t, truncation=True, max_length=clf.spec.max_length)
        labels = labels[0] if labels and isinstance(labels[0], list) else labels
        out.append(next(s["score"] for s in labels if s["label"].endswith("1")))
    return out


def bench(device: str | None, generate: int) -> None:
    import numpy as np
    import torch
    print(f"device: {device or ('cuda' if torch.cuda.is_available() else 'cpu')}, torch threads "
          f"{torch.get_num_threads()}, {platform.processor() or platform.machine()}")
    dataset = load_dataset("neutral-biased", generate, 0)
    spec = model_spec("tiny", dataset.key)
    pool, train = splits(dataset, (RunProtocol().pool_share,), 0)
    model, t_train = clock(lambda: train_model(train, spec, device=device))
    texts = pool.frame["text"].tolist()
    ours, t_score = clock(lambda: score_texts(model.score, texts))
    ref, t_ref = clock(lambda: reference_scores(model, texts))
    print(f"probing, {dataset.n:,} sentences ({train.n:,} train, {pool.n:,} probed pool)")
    print(f"  train tiny BERT ({spec.epochs} epochs)        {t_train:7.2f} s")
    print(f"  score pool, fairviz batched           {t_score:7.2f} s")
    print(f"  score pool, transformers pipeline     {t_ref:7.2f} s   ratio {t_ref / t_score:5.1f}×   "
          f"max |difference| {np.max(np.abs(np.asarray(ref) - ours)):.1e}")
    frame = pool.frame
    result, t_probe = clock(lambda: probe(frame["text"], frame["label"], frame["group"], model.score, ProbeParams()))
    swap = result.probes["demographic_swap"]
    print(f"  probe (score pool again, 2 edits, stats) {t_probe:5.2f} s   swap ratio {swap.ratio:.2f}, "
          f"average ratio {result.ratio_average:.2f}")

    test, validation, rest = splits(dataset, (0.3, 0.3), 0)
    base, t_base = clock(lambda: train_model(rest, spec, device=device))
    settings = AugmentParams(ks=(100,), seeds=(42,), control=False)
    out, t_aug = clock(lambda: augment(base, Split.of(rest.frame), Split.of(validation.frame), Split.of(test.frame),
                                       settings))
    fits = len(settings.strategies)
    print(f"augmentation (k = 100, one seed, {fits} strategies, {rest.n:,} train + 100 copies each)")
    print(f"  train base model                      {t_base:7.2f} s")
    print(f"  Algorithm 1 (select, {fits} fine-tunes, test) {t_aug:5.2f} s   {t_aug / fits:.2f} s per strategy")
    for r in out.records:
        print(f"    {r.strategy:<12} ΔF_pattern {r.summary('f_pattern')['mean']:+.4f}")
    if torch.cuda.is_available() and device != "cuda":
        print("GPU available: rerun with --device cuda to measure it.")
    elif not torch.cuda.is_available():
        print("GPU: not measured (no CUDA device in this environment).")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", choices=["cpu", "cuda"])
    parser.add_argument("--generate", type=int, default=1000)
    args = parser.parse_args()
    bench(args.device, args.generate)
