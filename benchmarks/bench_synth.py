"""Conditional HydraGAN benchmarks, run by hand (never in the test suite).

1. Encoding: fitting the mode-specific normalisation (a Bayesian Gaussian mixture per continuous column) on Adult,
   against sklearn's StandardScaler on the same columns (the simple transform it replaces).
2. Seconds per training epoch on Adult (assets/synth/adult_features.csv: 5,600 training rows, batch 500, 2 critic
   steps per generator step) on the CPU with each thread count, and on a GPU when one is present (otherwise the
   report says it was not measured).
3. The default run on Adult (30 epochs, 5 trials, as many synthetic rows as training rows): total time, the part
   spent training, and what it achieved (label JS improvement, realism AUC, accuracy), with one sklearn MLP fit on
   the real training rows as the in-process reference.
4. The encoding measured: mode-specific normalisation (≤ 10 modes) against plain standardisation (1 mode), same
   seed and epochs: per-column KS of the continuous columns and the realism AUC.

Usage: .venv/bin/python benchmarks/bench_synth.py [--threads 2] [--quick]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fairviz.synth import evaluate as ev  # noqa: E402
from fairviz.synth import model  # noqa: E402
from fairviz.synth.data import load  # noqa: E402
from fairviz.synth.encoding import fit_encoder, is_categorical  # noqa: E402
from fairviz.synth.run import SynthParams, run, split  # noqa: E402


def timed(fn):
    tic = time.perf_counter()
    value = fn()
    return time.perf_counter() - tic, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2, help="torch threads for the default run")
    parser.add_argument("--epoch-threads", default="1,2", help="thread counts for the seconds-per-epoch timing")
    parser.add_argument("--quick", action="store_true", help="3 epochs and 1 trial for the default run")
    args = parser.parse_args()
    import torch
    from sklearn.preprocessing import StandardScaler

    print(f"# bench_synth: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch "
          f"{torch.__version__}; load average at start {os.getloadavg()[0]:.1f} (timings scale with it)")
    table = load("adult")
    train_idx, _ = split(table.n, 0.3, 0)
    train = table.features.iloc[train_idx].reset_index(drop=True)
    numeric = [c for c in train.columns if c != table.label and not is_categorical(train[c])]

    t_enc, encoder = timed(lambda: fit_encoder(train, categorical={table.label}, seed=0))
    t_ref, _ = timed(lambda: StandardScaler().fit(train[numeric]))
    modes = {c.name: len(c.means) for c in encoder.columns if hasattr(c, "means")}
    print(f"1. encoding fit ({len(train):,} rows; continuous {modes}): {t_enc:.2f} s vs StandardScaler "
          f"{t_ref * 1000:.1f} ms (ratio {t_enc / max(t_ref, 1e-9):.0f}×); width {encoder.width}")

    conditions = sorted(set(table.condition))
    codes = np.array([conditions.index(c) for c in table.condition[train_idx]])
    span = encoder.category_span(table.label)
    encoded = encoder.encode(train)
    runs = [("cpu", int(t)) for t in args.epoch_threads.split(",")] + [("cuda", args.threads)]
    for device, threads in runs:
        if device == "cuda" and not torch.cuda.is_available():
            print("2. seconds per epoch on a GPU: not measured (no GPU in this session)")
            continue
        torch.set_num_threads(threads)
        heads = [model.realism_head(), model.label_diversity_head(span, [0.5, 0.5], 10.0)]
        epochs = 2
        gan = model.train(encoded, codes, encoder, conditions, heads, model.GANParams(epochs=epochs, device=device))
        print(f"2. seconds per epoch on {device} ({threads} thread(s)): {gan.seconds / epochs:.2f} s "
              f"({len(train) // 500} generator and {2 * (len(train) // 500)} critic steps of batch 500; load "
              f"{os.getloadavg()[0]:.1f})", flush=True)
    torch.set_num_threads(args.threads)

    settings = SynthParams(epochs=3, trials=1) if args.quick else SynthParams()
    t_run, result = timed(lambda: run(table, settings))
    print(f"   (torch threads {args.threads}; load average {os.getloadavg()[0]:.1f})")
    design = ev.Design.fit(train.drop(columns=[table.label]))
    x = design.matrix(train.drop(columns=[table.label]))
    t_mlp, _ = timed(lambda: ev.fit_classifier(x, (train[table.label] == table.positive).to_numpy(), 0))
    d = result.to_dict()
    js = d["distribution"]["label"]["js"]
    print(f"3. default run on Adult ({settings.epochs} epochs, {settings.trials} trials, {len(result.synthetic):,} "
          f"rows): {t_run:.1f} s total, of which training {result.seconds:.1f} s; one MLP fit on the real rows "
          f"{t_mlp:.2f} s (run / MLP = {t_run / t_mlp:.0f}×)")
    print(f"   label JS to uniform: real {js['real']:.3f} → synthetic {js['synthetic']:.3f} "
          f"({100 * js['improvement']:.1f}% better); realism AUC {d['realism']['auc']:.3f}; accuracy on the real "
          f"hold-out {d['accuracy']['real']:.3f} (real-trained) vs {d['accuracy']['synthetic']:.3f} (synthetic); "
          f"exact copies {d['privacy']['exact_copies']} of {d['privacy']['checked_rows']} (unseen real rows: "
          f"{d['privacy']['holdout_exact_matches']} of {d['privacy']['holdout_checked_rows']})")
    for group, values in d["fairness"].items():
        print(f"   {group}: " + ", ".join(f"{m.upper()} {values[m]['real']:+.3f} → {values[m]['synthetic']:+.3f}"
                                         for m in ("ofi", "dppl", "di", "dca")))
    epochs = 3 if args.quick else 15
    for modes in (10, 1):
        t, r = timed(lambda: run(table, SynthParams(epochs=epochs, trials=1, max_modes=modes)))
        ks = {m["column"]: round(m["distance"], 3) for m in r.marginals if m["kind"] == "continuous"}
        print(f"4. encoding with ≤ {modes} mode(s), {epochs} epochs: continuous KS {ks} (mean "
              f"{np.mean(list(ks.values())):.3f}); realism AUC {r.realism_auc:.3f}; {t:.1f} s", flush=True)


if __name__ == "__main__":
    main()
