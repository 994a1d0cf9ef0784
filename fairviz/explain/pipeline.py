"""The pipeline of [4] Algorithm 1 for one data set and one model family: split by pair → train → explain the
gold label of every sampled test sentence with every method → score every explanation → one per-sentence table.

``prepare`` (split + train + the model's own behaviour per group) and ``explain_dataset`` are separate so the page
can cache the trained model with ``st.cache_resource`` and the result with ``st.cache_data``.
"""
from __future__ import annotations

import dataclasses
import json
import platform
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from fairviz.core import runtime
from fairviz.core.progress import Completion, Stopped
from fairviz.explain import models as model_lib
from fairviz.explain.attribute import Attribution, AttributionParams, derive_seed, explain
from fairviz.explain.data import TextDataset, counterfactual_compas, split_by_pair
from fairviz.explain.metrics import SensitivityParams, aopc_many, normalise, pgd_deltas, sensitivity, soft_many
from fairviz.explain.registry import METHOD_NAMES, METHODS, METRICS, RANDOM
from fairviz.explain.results import ExplainResult
from importlib.metadata import PackageNotFoundError, version

Progress = Callable[[float, str], None]
# Relative cost of one sentence per method (explain + metrics + sensitivity), for an honest progress bar.
_COST = {"grad": 1.0, "gxi": 1.0, "ig": 7.0, "igxi": 7.0, "lime": 14.0, "shap": 50.0, RANDOM: 0.5}   # measured, tiny BERT


@dataclass(frozen=True)
class ExplainParams:
    methods: tuple[str, ...] = tuple(METHODS) + (RANDOM,)
    metrics: tuple[str, ...] = tuple(METRICS)
    n_pairs: int | None = 20                  # test pairs explained (unpaired data: test sentences); None = all
    seed: int = 0
    soft_draws: int = 1
    attribution: AttributionParams = field(default_factory=AttributionParams)
    sensitivity: SensitivityParams = field(default_factory=SensitivityParams)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class TrainedModel:
    classifier: model_lib.TextClassifier
    dataset: TextDataset
    train: TextDataset
    test: TextDataset
    training: model_lib.TrainingReport
    behaviour: dict


def prepare(dataset: TextDataset, spec: model_lib.ModelParams, test_share: float = 0.2,
            progress: Progress | None = None, should_stop: Callable[[], bool] | None = None,
            device: str | None = None) -> TrainedModel:
    """Split by pair (80/20, balanced), load the model, fine-tune it, and measure its own per-group behaviour."""
    train, test = split_by_pair(dataset, test_share, seed=spec.seed)
    classifier = model_lib.load(spec, device=device, label_names=dataset.label_names)
    report = model_lib.train(classifier, train.frame["text"], train.frame["label"], progress, should_stop)
    with runtime.heartbeat(progress) as beat:
        if beat is not None:
            beat.update(1.0, f"measuring the model's behaviour by group ({classifier.device_label})")
        behaviour = model_behaviour(classifier, test)
    return TrainedModel(classifier, dataset, train, test, report, behaviour)


def model_behaviour(classifier: model_lib.TextClassifier, test: TextDataset) -> dict:
    """What the model itself does by group ([4] Table 7): accuracy, TPR/TNR over the task labels,
    and whether its prediction changes when only the gender words change (twins, or COMPAS's flipped sex word)."""
    frame = test.frame
    proba = classifier.predict_proba(frame["text"])[:, 1]
    pred = (proba >= 0.5).astype(int)
    y = frame["label"].to_numpy()
    groups = {}
    for name in test.groups:
        m = (frame["group"] == name).to_numpy()
        pos, neg = m & (y == 1), m & (y == 0)
        groups[name] = {"n": int(m.sum()), "accuracy": _mean(pred[m] == y[m]),
                        "tpr": _mean(pred[pos] == 1), "tnr": _mean(pred[neg] == 0), "mean_p1": _mean(proba[m])}
    out = {"n_test": int(len(frame)), "accuracy": _mean(pred == y), "groups": groups,
           "label_depends_on_group": False, "apd": None, "twin_prediction_differs": None, "counterfactual": None}
    twins = _twin_table(frame, test.groups)
    if twins is not None and len(twins):
        i, j = twins["i"].to_numpy(), twins["j"].to_numpy()
        out["counterfactual"] = "twins"
        out["label_depends_on_group"] = bool((y[i] != y[j]).any())
        out["apd"] = float(np.mean(np.abs(proba[i] - proba[j])))
        out["twin_prediction_differs"] = float(np.mean(pred[i] != pred[j]))
        same = y[i] == y[j]
        out["twin_prediction_differs_same_label"] = float(np.mean(pred[i][same] != pred[j][same])) if same.any() else None
    elif test.key == "compas":
        flipped = classifier.predict_proba([counterfactual_compas(t) for t in frame["text"]])[:, 1]
        out["counterfactual"] = "sex word flipped"
        out["apd"] = float(np.mean(np.abs(proba - flipped)))
        out["twin_prediction_differs"] = float(np.mean(pred != (flipped >= 0.5)))
        out["twin_prediction_differs_same_label"] = out["twin_prediction_differs"]
    return out


def _twin_table(frame: pd.DataFrame, groups) -> pd.DataFrame | None:
    """Row positions (i in group 0, j in group 1) of every pair that has one member in each group."""
    g0, g1 = groups
    pos = frame.reset_index(drop=True)
    a = pos.index[pos["group"] == g0].to_series(name="i").groupby(pos.loc[pos["group"] == g0, "pair_id"]).first()
    b = pos.index[pos["group"] == g1].to_series(name="j").groupby(pos.loc[pos["group"] == g1, "pair_id"]).first()
    both = pd.concat([a, b], axis=1, join="inner")
    return both if len(both) else None


def _mean(values) -> float | None:
    values = np.asarray(values, dtype=float)
    return float(values.mean()) if values.size else None


# ----------------------------------------------------------------------------------------------- explaining

def explain_dataset(trained: TrainedModel, settings: ExplainParams = ExplainParams(), run: int = 0,
                    progress: Progress | None = None) -> ExplainResult:
    """Explain and score the sampled test sentences; returns the per-sentence result of this run.

    ``progress`` is called at every stage and, through ``runtime.beat``, after every model batch inside the
    explainers and metrics (captum's IG batches, LIME's and SHAP's model calls, PGD steps): a page's Stop ends the
    run there, within a batch's time."""
    with runtime.heartbeat(progress) as beat:
        return _explain_dataset(trained, settings, run, beat)


def _explain_dataset(trained: TrainedModel, settings: ExplainParams, run: int,
                     beat: runtime.Heartbeat | None) -> ExplainResult:
    clf = trained.classifier
    model_lib.configure_threads()
    data = trained.test.sample_pairs(settings.n_pairs, seed=settings.seed + run)
    frame = data.frame.reset_index(drop=True)
    rows = clf.encode(frame["text"])
    targets = frame["label"].astype(int).tolist()
    pairs = frame["pair_id"].to_numpy()
    instances = _instances(clf, data, frame, rows, targets, run)

    metrics = [m for m in METRICS if m in settings.metrics]
    total = sum(_COST.get(m, 1.0) for m in settings.methods) * len(rows) or 1.0
    done = 0.0

    def tick(method: str, share: float, message: str) -> None:
        if beat is not None:
            beat.update(min((done + share * _COST.get(method, 1.0) * len(rows)) / total, 1.0), message)

    deltas = None
    if "sensitivity" in metrics:
        tick(settings.methods[0], 0.0, "attacking the inputs for the sensitivity metric (PGD)")
        deltas = pgd_deltas(clf, rows, targets, settings.sensitivity, settings.attribution.batch_size)
    score_rows, attribution_rows, timings = [], [], {}

    def result(completion: Completion | None = None) -> ExplainResult:
        scores = pd.DataFrame(score_rows)
        for m in METRICS:
            if m not in scores.columns:
                scores[m] = np.nan
        meta = _meta(trained, settings, data, run, timings)
        if completion is not None:
            meta["partial"] = completion.to_dict()
        return ExplainResult(scores, instances, pd.DataFrame(attribution_rows), meta)

    for finished, method in enumerate(settings.methods):
        try:
            _explain_method(clf, rows, targets, pairs, frame, method, metrics, settings, run, deltas, tick,
                            score_rows, attribution_rows, timings)
        except Stopped as stop:     # what the finished explainers scored is kept (their rows are complete)
            raise stop.keeping(result(Completion(finished, len(settings.methods), "explainers")) if finished
                               else None)
        done += _COST.get(method, 1.0) * len(rows)
    try:
        if beat is not None:
            beat.update(1.0, "done")
    except Stopped as stop:                 # a Stop on the last report: everything finished, keep it all
        raise stop.keeping(result())
    return result()


def _explain_method(clf, rows, targets, pairs, frame, method: str, metrics, settings: ExplainParams, run: int,
                    deltas, tick, score_rows: list, attribution_rows: list, timings: dict) -> None:
    """Explain every sentence with one method and score the explanations; appends to the three collections only
    once the method has finished."""
    seeds = [derive_seed(settings.seed, run, p, method, "explain") for p in pairs]
    start = time.perf_counter()
    tick(method, 0.0, f"{_label(method)}: explaining {len(rows)} sentences")
    try:
        attributions = explain(clf, rows, targets, method, seeds, settings.attribution)
    except Exception as err:          # one failing method must not lose the others; the reason is shown
        attributions, failure = None, f"{_label(method)} failed: {type(err).__name__}: {err}"
    else:
        failure = None
    t_explain = time.perf_counter() - start
    tick(method, 0.4, f"{_label(method)}: scoring")
    values, t_metrics, t_sens = _score(clf, rows, targets, pairs, method, attributions, metrics, settings, run,
                                       deltas, seeds, failure, lambda s, msg: tick(method, 0.4 + 0.6 * s, msg))
    timings[method] = {"explain_s_per_sentence": t_explain / len(rows), "metrics_s_per_sentence": t_metrics / len(rows),
                       "sensitivity_s_per_sentence": t_sens / len(rows)}
    for k in range(len(rows)):
        score_rows.append({"run": run, "instance_id": int(frame["instance_id"][k]), "pair_id": int(pairs[k]),
                           "group": frame["group"][k], "label": targets[k], "method": method, **values[k]})
        if attributions is not None:
            s = normalise(attributions[k].scores)
            attribution_rows.append({"run": run, "instance_id": int(frame["instance_id"][k]), "method": method,
                                     "scores": json.dumps([float(f"{v:.4g}") for v in s])})


def _label(method: str) -> str:
    return METHOD_NAMES.get(method, method)


def _score(clf, rows, targets, pairs, method, attributions: list[Attribution] | None, metrics, settings, run, deltas,
           seeds, failure, tick) -> tuple[list[dict], float, float]:
    n = len(rows)
    values = [{m: np.nan for m in METRICS} | {"ig_delta": np.nan, "nan_reason": ""} for _ in range(n)]
    if attributions is None:
        for v in values:
            v["nan_reason"] = failure
        return values, 0.0, 0.0
    start = time.perf_counter()
    s_all = [normalise(a.scores) for a in attributions]
    reasons = [[] for _ in range(n)]
    for k, a in enumerate(attributions):
        values[k]["ig_delta"] = a.ig_delta
        if a.numerically_zero:          # rounding noise: its metrics are set undefined below
            reasons[k].append("the hidden-dimension sum is float32 rounding (LayerNorm after the embeddings)")
        elif not np.any(s_all[k]):
            reasons[k].append("all scores are zero")
    if "aopc_comp" in metrics or "aopc_suff" in metrics:
        proba = lambda id_rows: clf.proba_ids(id_rows, settings.attribution.model_batch)  # noqa: E731
        for k, (comp, suff) in enumerate(aopc_many(proba, [(r, s, y) for r, s, y in zip(rows, s_all, targets)])):
            values[k].update({m: v for m, v in (("aopc_comp", comp), ("aopc_suff", suff)) if m in metrics})
    tick(0.3, f"{_label(method)}: soft metrics")
    if "soft_comp" in metrics or "soft_suff" in metrics:
        items = [(r, s, y, derive_seed(settings.seed, run, p, method, "soft_comp"),
                  derive_seed(settings.seed, run, p, method, "soft_suff"))
                 for r, s, y, p in zip(rows, s_all, targets, pairs)]
        for k, (comp, suff) in enumerate(soft_many(clf, items, settings.soft_draws, settings.attribution.batch_size)):
            values[k].update({m: v for m, v in (("soft_comp", comp), ("soft_suff", suff)) if m in metrics})
    from_scores = [key for key, metric in METRICS.items() if metric.needs == "scores"]
    for k, s in enumerate(s_all):
        for key in from_scores:
            values[k][key] = METRICS[key].function(s) if key in metrics else np.nan
    t_metrics = time.perf_counter() - start
    t_sens = 0.0
    if "sensitivity" in metrics and deltas is not None:
        tick(0.4, f"{_label(method)}: sensitivity (re-explaining the attacked inputs)")
        start = time.perf_counter()
        try:
            perturbed = explain(clf, rows, targets, method, seeds, settings.attribution, deltas=deltas)
        except Exception as err:
            for k in range(n):
                reasons[k].append(f"sensitivity failed: {type(err).__name__}")
            perturbed = None
        if perturbed is not None:
            for k, a in enumerate(perturbed):
                if method in ("lime", "shap") and a.perturbed_calls == 0:
                    reasons[k].append("sensitivity: the perturbation never reached the model")
                    continue
                values[k]["sensitivity"] = sensitivity(s_all[k], normalise(a.scores))
        t_sens = time.perf_counter() - start
    for k, a in enumerate(attributions):
        if a.numerically_zero:
            values[k].update({m: np.nan for m in METRICS})
        values[k]["nan_reason"] = "; ".join(reasons[k])
    return values, t_metrics, t_sens


def _instances(clf, data: TextDataset, frame: pd.DataFrame, rows, targets, run: int) -> pd.DataFrame:
    """Per sentence: prediction, p(gold), p(gold) of the counterpart, and p(gold) once all evidence is removed in
    each of the four ways the explainers and metrics remove it (see ``readings.NO_EVIDENCE``)."""
    proba = clf.proba_ids(rows)
    y = np.asarray(targets)
    idx = np.arange(len(rows))
    out = pd.DataFrame({"run": run, "instance_id": frame["instance_id"], "pair_id": frame["pair_id"],
                        "group": frame["group"], "label": y, "text": frame["text"],
                        "pred": proba.argmax(1), "p_gold": proba[idx, y],
                        **{column: p[idx, y] for column, p in _no_evidence(clf, rows).items()},
                        "n_tokens": [len(r) for r in rows],
                        "tokens": [json.dumps(clf.tokens(r)[1:-1]) for r in rows]})
    counterpart = np.full(len(rows), np.nan)
    twins = _twin_table(frame, data.groups)
    if twins is not None:                                     # p(my gold label | my twin's text)
        for i, j in zip(twins["i"], twins["j"]):
            counterpart[i], counterpart[j] = proba[j, y[i]], proba[i, y[j]]
    elif data.key == "compas":
        flipped = clf.predict_proba([counterfactual_compas(t) for t in frame["text"]])
        counterpart = flipped[idx, y]
    out["p_gold_counterfactual"] = counterpart
    return out


def _no_evidence(clf, rows) -> dict[str, np.ndarray]:
    """Probabilities of the four "no evidence" inputs of every sentence (same length, [CLS]/[SEP] kept)."""
    import torch
    out = {"p_gold_empty": clf.proba_ids([[r[0], r[-1]] for r in rows]),
           "p_gold_masked": clf.proba_ids([[r[0]] + [clf.mask_id] * (len(r) - 2) + [r[-1]] for r in rows]),
           "p_gold_pad": clf.proba_ids([[r[0]] + [clf.pad_id] * (len(r) - 2) + [r[-1]] for r in rows])}
    zeroed = []
    with torch.inference_mode():
        for start in range(0, len(rows), 64):
            runtime.beat()
            ids, mask = clf.pad(rows[start:start + 64])
            embeds = clf.embeddings(ids).clone()
            for i, r in enumerate(rows[start:start + 64]):
                embeds[i, 1:len(r) - 1] = 0
            probs = torch.softmax(clf.logits_from_embeddings(embeds, mask).float(), -1)
            zeroed.append(probs.detach().double().cpu().numpy())
    out["p_gold_zeroed"] = np.concatenate(zeroed)
    return out


def _meta(trained: TrainedModel, settings: ExplainParams, data: TextDataset, run: int, timings: dict) -> dict:
    import torch
    spec = trained.classifier.spec
    ds = trained.dataset
    return {
        "dataset": {"key": ds.key, "title": ds.title, "description": ds.description, "label_names": list(ds.label_names),
                    "groups": list(ds.groups), "paired": ds.paired, "n": ds.n, "n_train": trained.train.n,
                    "n_test": trained.test.n, "n_explained": data.n, "details": ds.meta},
        "model": {**dataclasses.asdict(spec), "label": model_lib.MODEL_KINDS.get(spec.kind, spec.kind),
                  "description": spec.describe(), "n_parameters": trained.classifier.n_parameters(),
                  "device": trained.classifier.device, "device_label": trained.classifier.device_label},
        "settings": settings.to_dict(),
        "runs": {str(run): {"training": dataclasses.asdict(trained.training), "behaviour": trained.behaviour,
                            "timings": timings, "device": trained.classifier.device}},
        "versions": _versions(), "platform": platform.platform(), "torch_threads": torch.get_num_threads(),
    }


def _versions() -> dict:
    out = {}
    for name in ("torch", "transformers", "captum", "shap", "lime"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def combine(results: list[ExplainResult]) -> ExplainResult:
    """Several runs of the same data set and model as one result (runs keep their own metadata)."""
    if len(results) == 1:
        return results[0]
    meta = dict(results[0].meta)
    meta["runs"] = {k: v for r in results for k, v in r.meta["runs"].items()}
    return ExplainResult(pd.concat([r.scores for r in results], ignore_index=True),
                         pd.concat([r.instances for r in results], ignore_index=True),
                         pd.concat([r.attributions for r in results], ignore_index=True), meta)


def run(dataset: TextDataset, spec: model_lib.ModelParams, settings: ExplainParams = ExplainParams(),
        runs: int = 1, progress: Progress | None = None, device: str | None = None) -> ExplainResult:
    """``runs`` repetitions (paper: 5), each re-drawing the split, the initialisation and the explainer seeds."""
    results = []
    for r in range(runs):
        spec_r = dataclasses.replace(spec, seed=spec.seed + r)
        scale = (lambda lo, hi: (lambda f, m: progress(lo + (hi - lo) * f, m))) if progress else (lambda lo, hi: None)
        base = r / runs
        trained = prepare(dataset, spec_r, progress=scale(base, base + 0.2 / runs), device=device)
        results.append(explain_dataset(trained, settings, run=r, progress=scale(base + 0.2 / runs, base + 1 / runs)))
    return combine(results)
