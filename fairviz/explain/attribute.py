"""Token attributions for the gold label with the paper's six methods (captum, lime, shap) and a random baseline.

Conventions ([4] §3.2, ferret's defaults, so the numbers mean what the paper's mean):

- granularity: the model's own sub-word tokens, [CLS]/[SEP] included; one score per token (length n);
- gradient methods work on the **word embeddings** E (position/type embeddings are added inside the model) and
  sum over the hidden dimension: Grad = |∂logit_y/∂E| (captum Saliency, abs=True), GxI = E ⊙ ∂logit_y/∂E,
  IG = path-averaged gradient (``multiply_by_inputs=False``), IGxI = standard IG, both from the baseline
  [CLS] [PAD]… [SEP] with 50 Gauss–Legendre steps; the convergence delta Σ IGxI − (F(x) − F(B)) is kept per
  sentence (for IG too: it is the quadrature error of the same path integral);
- LIME (``LimeTextExplainer(bow=False)``, n² samples, at most 5,000) and Partition SHAP (500 evaluations) work on
  token ids, a removed token becomes [MASK], and they query softmax probabilities; their [CLS]/[SEP] scores are 0;
- every stochastic step takes a seed; twins get the same seed (keyed by pair id), so a model that cannot tell
  them apart gives them identical explanations.

Finding (not in [4]): summed over the hidden dimension, IG without ×input is exactly zero for BERT-style
encoders, because the word embeddings feed a LayerNorm, which is invariant to adding a constant to every hidden
dimension, so every gradient w.r.t. them sums to 0 over that dimension. What remains is float32 rounding (|Σ_d| /
Σ_d|·| ≈ 1e-8), which L1 normalisation blows up into arbitrary rankings. Such attributions are flagged
(``numerically_zero``) and their metrics are undefined, with the reason shown, instead of scoring noise.

Decision ([4] leaves it open): SHAP's Text masker runs with ``output_type="token_ids"``, i.e. masked inputs
reach the model as id rows of the original length n instead of strings that are re-tokenized. With a mask token
and ``collapse_mask_token=False`` this is what the string mode computes, minus the decode/re-tokenize round trip,
and it guarantees that every model call keeps length n (which the sensitivity perturbation relies on).

``delta`` (one [n, d] array per sentence, zero at [CLS]/[SEP]) perturbs the word embeddings: gradient methods are
run at E + δ (the IG baseline stays put), LIME and SHAP see every model call with δ added to the embeddings.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from fairviz.core import runtime
from fairviz.explain.registry import METHODS, RANDOM
from fairviz.explain.models import TextClassifier

GRADIENT_METHODS = ("grad", "gxi", "ig", "igxi")
# Below this share the per-token sum over the hidden dimension is float32 rounding, not signal. It happens to IG
# without ×input on BERT-style models: the word embeddings enter a LayerNorm, which ignores a shift of all hidden
# dimensions, so every gradient w.r.t. them sums to exactly 0 over the hidden dimension (measured: 1e-8; GxI and
# IGxI stay above 1e-2).
CANCELLATION_FLOOR = 1e-5


@dataclass(frozen=True)
class AttributionParams:
    ig_steps: int = 50
    ig_method: str = "gausslegendre"
    lime_max_samples: int = 5000         # n² samples, capped here (ferret)
    shap_max_evals: int = 500            # shap's default
    batch_size: int = 64                 # sentences per gradient / soft-metric / PGD batch
    model_batch: int = 256               # id rows per forward pass (LIME, SHAP, AOPC)
    ig_internal_batch: int = 2048        # expanded (sentence × step) rows per IG forward pass
    autocast: bool = False               # bfloat16 autocast of LIME/SHAP/AOPC forward passes, CUDA only (opt-in)

    @staticmethod
    def for_device(device: str, **changes) -> "AttributionParams":
        """Larger batches on a GPU, where one big forward pass costs little more than a small one; the same
        attributions up to float rounding (batching never changes what is computed)."""
        if str(device).startswith("cuda"):
            changes = {"batch_size": 256, "model_batch": 2048, "ig_internal_batch": 8192, **changes}
        return AttributionParams(**changes)


@dataclass(frozen=True)
class Attribution:
    """Raw scores (length n, [CLS]/[SEP] included) for one sentence and one method."""

    scores: np.ndarray
    ig_delta: float = float("nan")       # IG/IGxI: Σ IGxI − (F_y(x) − F_y(B)), in logits
    perturbed_calls: int = 0             # LIME/SHAP model calls that received δ (sensitivity check)
    model_calls: int = 0
    base_value: float = float("nan")     # SHAP: p_y of the all-masked input (Σ scores + base = p_y(x))
    cancellation: float = float("nan")   # gradient methods: Σ_t |Σ_d a_td| / Σ_td |a_td| over [CLS]/[SEP]-free tokens

    @property
    def numerically_zero(self) -> bool:
        """The hidden-dimension sum cancelled down to float32 rounding: the scores carry no signal."""
        return bool(np.isfinite(self.cancellation) and self.cancellation < CANCELLATION_FLOOR)


def derive_seed(*parts) -> int:
    """A stable 32-bit seed from (run seed, pair id, method, purpose): twins share it, runs do not."""
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little")


def explain(classifier: TextClassifier, rows: Sequence[list[int]], targets: Sequence[int], method: str,
            seeds: Sequence[int], settings: AttributionParams = AttributionParams(),
            deltas: Sequence[np.ndarray] | None = None) -> list[Attribution]:
    """Attributions for the gold ``targets`` of every id row (gradient methods batched over sentences)."""
    if method in GRADIENT_METHODS:
        out = []
        for start in range(0, len(rows), settings.batch_size):
            stop = start + settings.batch_size
            out += _gradient_batch(classifier, rows[start:stop], targets[start:stop], method, settings,
                                   None if deltas is None else deltas[start:stop])
        return out
    if method == "lime":                       # many sentences' perturbations per model pass (see _lime_batch)
        out, group, size = [], [], 0
        for i, r in enumerate(rows):
            group.append(i)
            size += _lime_samples(len(r), settings)
            if size >= LIME_ROWS_PER_PASS or i == len(rows) - 1:
                out += _lime_batch(classifier, [rows[j] for j in group], [targets[j] for j in group],
                                   [seeds[j] for j in group], settings,
                                   None if deltas is None else [deltas[j] for j in group])
                group, size = [], 0
        return out
    if method == "shap":
        out = []
        for i, (r, t, s) in enumerate(zip(rows, targets, seeds)):
            runtime.beat()                     # and every model batch inside (see _IdModel)
            out.append(_shap(classifier, r, t, s, settings, None if deltas is None else deltas[i]))
        return out
    if method == RANDOM:
        return [Attribution(_random_scores(len(r), s)) for r, s in zip(rows, seeds)]
    raise ValueError(f"Unknown method {method!r}; choose from {', '.join(list(METHODS) + [RANDOM])}.")


def _random_scores(n: int, seed: int) -> np.ndarray:
    scores = np.random.default_rng(seed).uniform(0.0, 1.0, n)
    scores[[0, -1]] = 0.0
    return scores


# ----------------------------------------------------------------------------------------------- gradients

def _embedded_batch(classifier: TextClassifier, rows, deltas):
    """Padded word embeddings E (+ δ) [B, m, d], attention mask, and the IG baselines [CLS][PAD]…[SEP]."""
    import torch
    ids, mask = classifier.pad(list(rows))
    base_rows = [[classifier.cls_id] + [classifier.pad_id] * (len(r) - 2) + [classifier.sep_id] for r in rows]
    base_ids, _ = classifier.pad(base_rows)
    with torch.no_grad():
        embeds = classifier.embeddings(ids).detach().clone()
        baseline = classifier.embeddings(base_ids).detach().clone()
        if deltas is not None:
            for i, (r, d) in enumerate(zip(rows, deltas)):
                embeds[i, :len(r)] += torch.as_tensor(np.asarray(d), dtype=embeds.dtype, device=embeds.device)
    return embeds, mask, baseline


def _gradient_batch(classifier: TextClassifier, rows, targets, method: str, settings: AttributionParams,
                    deltas) -> list[Attribution]:
    import torch
    from captum.attr import InputXGradient, IntegratedGradients, Saliency

    embeds, mask, baseline = _embedded_batch(classifier, rows, deltas)
    target = torch.as_tensor(list(targets), dtype=torch.long, device=embeds.device)

    def forward(e, attention_mask):            # captum calls it once per internal batch: a heartbeat each
        runtime.beat()
        return classifier.logits_from_embeddings(e, attention_mask)

    embeds.requires_grad_(True)
    deltas_out = np.full(len(rows), np.nan)
    if method == "grad":
        attr = Saliency(forward).attribute(embeds, target=target, abs=True, additional_forward_args=(mask,))
    elif method == "gxi":
        attr = InputXGradient(forward).attribute(embeds, target=target, additional_forward_args=(mask,))
    else:
        steps = settings.ig_steps
        internal = max(1, settings.ig_internal_batch)
        ig = IntegratedGradients(forward, multiply_by_inputs=method == "igxi")
        attr = ig.attribute(embeds, baselines=baseline, target=target, n_steps=steps, method=settings.ig_method,
                            additional_forward_args=(mask,), internal_batch_size=internal)
        full = attr if method == "igxi" else attr * (embeds - baseline)        # IGxI = (E − B) ⊙ IG
        with torch.no_grad():
            logits_x = forward(embeds, mask).gather(1, target[:, None])[:, 0]
            logits_b = forward(baseline, mask).gather(1, target[:, None])[:, 0]
            sums = (full * mask[..., None]).sum(dim=(1, 2))
            deltas_out = (sums - (logits_x - logits_b)).detach().double().cpu().numpy()
    detached = attr.detach().double()
    scores = detached.sum(-1).cpu().numpy()
    magnitude = detached.abs().sum(-1).cpu().numpy()
    out = []
    for i, r in enumerate(rows):
        inner = slice(1, len(r) - 1)
        total = magnitude[i, inner].sum()
        ratio = float(np.abs(scores[i, inner]).sum() / total) if total > 0 else float("nan")
        out.append(Attribution(scores[i, :len(r)].copy(), float(deltas_out[i]), cancellation=ratio))
    return out


# ----------------------------------------------------------------------------------------------- LIME / SHAP

class _IdModel:
    """Probabilities for id rows of one sentence's length, with δ added to the word embeddings when given."""

    def __init__(self, classifier: TextClassifier, n: int, delta: np.ndarray | None, batch_size: int,
                 autocast: bool = False):
        self.classifier, self.n, self.batch_size, self.autocast = classifier, n, batch_size, autocast
        self.delta = delta
        self.calls = self.perturbed = 0

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        import torch
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, self.n)
        self.calls += 1
        if self.delta is None:
            return self.classifier.proba_ids(rows.tolist(), self.batch_size, autocast=self.autocast)
        self.perturbed += 1
        out = []
        clf = self.classifier
        with torch.inference_mode():
            d = torch.as_tensor(np.asarray(self.delta), device=clf.device).to(clf.embeddings.weight.dtype)
            for start in range(0, len(rows), self.batch_size):
                runtime.beat()
                ids = torch.as_tensor(rows[start:start + self.batch_size], device=clf.device)
                embeds = clf.embeddings(ids) + d
                out.append(torch.softmax(clf.logits_from_embeddings(embeds).float(), -1).detach().cpu().numpy())
        return np.concatenate(out).astype(np.float64)


# LIME's perturbations of several sentences go through the model together, up to this many rows per group of
# sentences (bounded memory: the id rows of a group are held at once).
LIME_ROWS_PER_PASS = 20_000


def _lime_samples(n: int, settings: AttributionParams) -> int:
    return min(n * n, settings.lime_max_samples)


class _Captured(Exception):
    def __init__(self, rows: np.ndarray):
        super().__init__("captured")
        self.rows = rows


def _lime_run(classifier: TextClassifier, ids: list[int], target: int, seed: int, settings: AttributionParams,
              proba):
    """One ``LimeTextExplainer.explain_instance`` with a fresh explainer seeded by ``seed`` (so two runs draw the
    same perturbations); ``proba`` receives the perturbed id rows ("UNKWORDZ", a removed token, → [MASK])."""
    from lime.lime_text import LimeTextExplainer

    def strings_to_rows(strings):
        return proba(np.asarray([[classifier.mask_id if t == "UNKWORDZ" else int(t) for t in s.split(" ")]
                                 for s in strings], dtype=np.int64))

    explainer = LimeTextExplainer(bow=False, split_expression=" ", random_state=seed)
    return explainer.explain_instance(" ".join(map(str, ids)), strings_to_rows, labels=[target],
                                      num_features=len(ids), num_samples=_lime_samples(len(ids), settings))


def _lime_batch(classifier: TextClassifier, rows, targets, seeds, settings: AttributionParams,
                deltas) -> list[Attribution]:
    """LIME for several sentences with one stream of model batches for all their perturbations.

    LIME samples, calls the model once with every sample, then fits. Here each sentence is run twice with the
    same seed: the first run stops at the model call and hands over its samples; all sentences' samples then go
    through the model in large batches (what makes LIME fast on a GPU); the second run draws the same samples
    (checked) and gets those probabilities. The result equals one sentence at a time up to float rounding."""
    samples = []
    for ids, target, seed in zip(rows, targets, seeds):
        runtime.beat()
        try:
            _lime_run(classifier, ids, target, seed, settings, _capture)
        except _Captured as captured:
            samples.append(captured.rows)
        else:                                                 # pragma: no cover — lime always asks the model
            raise RuntimeError("LIME did not query the model")
    probs, calls = _proba_rows(classifier, samples, deltas, settings.model_batch, settings.autocast)
    out = []
    for k, (ids, target, seed) in enumerate(zip(rows, targets, seeds)):
        def answer(asked, k=k):
            if not np.array_equal(asked, samples[k]):
                raise RuntimeError("LIME drew different perturbations with the same seed")
            return probs[k]

        exp = _lime_run(classifier, ids, target, seed, settings, answer)
        scores = np.zeros(len(ids))
        for position, weight in exp.local_exp[target]:
            scores[position] = weight
        scores[[0, -1]] = 0.0
        out.append(Attribution(scores, perturbed_calls=calls[k] if deltas is not None else 0, model_calls=calls[k]))
    return out


def _capture(rows):
    raise _Captured(rows)


def _proba_rows(classifier: TextClassifier, samples: list[np.ndarray], deltas, batch_size: int,
                autocast: bool = False) -> tuple[list[np.ndarray], list[int]]:
    """Probabilities for every sentence's id rows (each sentence its own length), packed into batches of
    ``batch_size`` rows across sentences; with ``deltas`` each row gets its own sentence's δ on the word embeddings.
    Returns the probabilities per sentence and the number of model passes each sentence's rows took part in."""
    import torch
    clf = classifier
    results: list[list[np.ndarray]] = [[] for _ in samples]
    calls = [0] * len(samples)
    width_all = max((s.shape[1] for s in samples), default=0)
    d_all = None
    if deltas is not None:
        d_host = np.zeros((len(samples), width_all, clf.embeddings.embedding_dim), dtype=np.float32)
        for k, d in enumerate(deltas):
            d_host[k, :len(d)] = d
        d_all = torch.as_tensor(d_host, device=clf.device)
    on_gpu = str(clf.device).startswith("cuda")

    def run(parts):
        runtime.beat()
        # Every batch is padded to the group's widest sentence: a row's arithmetic then does not depend on which
        # batch it lands in (twins explained by a model that cannot tell them apart stay exactly equal).
        # For the same reason a short last batch is filled up to the full size (with copies of its first row, whose
        # results are dropped) when the group needed more than one batch: GPU kernels are chosen by shape.
        width = width_all
        used = sum(b - a for _, a, b in parts)
        total = batch_size if (multi and used < batch_size) else used
        ids = np.full((total, width), clf.pad_id, dtype=np.int64)
        mask = np.zeros(ids.shape, dtype=np.int64)
        owner = np.zeros(len(ids), dtype=np.int64)
        row = 0
        for k, a, b in parts:
            n = samples[k].shape[1]
            ids[row:row + b - a, :n] = samples[k][a:b]
            mask[row:row + b - a, :n] = 1
            owner[row:row + b - a] = k
            row += b - a
            calls[k] += 1
        ids[used:], mask[used:], owner[used:] = ids[0], mask[0], owner[0]
        ids_t, mask_t = torch.as_tensor(ids, device=clf.device), torch.as_tensor(mask, device=clf.device)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast and on_gpu):
            if d_all is None:
                logits = clf.model(input_ids=ids_t, attention_mask=mask_t).logits
            else:
                owner_t = torch.as_tensor(owner, device=clf.device)
                embeds = clf.embeddings(ids_t) + d_all[owner_t, :width].to(clf.embeddings.weight.dtype)
                logits = clf.logits_from_embeddings(embeds, mask_t)
        probs = torch.softmax(logits.float(), -1).detach().cpu().numpy().astype(np.float64)
        row = 0
        for k, a, b in parts:
            results[k].append(probs[row:row + b - a])
            row += b - a

    multi = sum(len(s) for s in samples) > batch_size
    with torch.inference_mode():
        parts, room = [], batch_size
        for k, s in enumerate(samples):
            start = 0
            while start < len(s):
                take = min(room, len(s) - start)
                parts.append((k, start, start + take))
                start, room = start + take, room - take
                if room == 0:
                    run(parts)
                    parts, room = [], batch_size
        if parts:
            run(parts)
    return [np.concatenate(r) for r in results], calls


def _shap(classifier: TextClassifier, ids: list[int], target: int, seed: int, settings: AttributionParams,
          delta) -> Attribution:
    import shap

    n = len(ids)
    model = _IdModel(classifier, n, delta, settings.model_batch, settings.autocast)
    tokenizer = _FixedIds(classifier.tokenizer, ids)
    masker = shap.maskers.Text(tokenizer, mask_token=classifier.mask_id, collapse_mask_token=False,
                               output_type="token_ids")
    explainer = shap.Explainer(model, masker, algorithm="partition")
    # shap 0.51 does not pass ``seed`` on to the Partition explainer, whose priority queue breaks ties with the
    # global np.random.randn(): unseeded, ties between equal-valued clusters are broken differently on every call
    # and, under the evaluation budget, twins get slightly different values. runtime.seeded_numpy seeds the global
    # RNG for this call only, one call at a time across sessions, and puts its state back afterwards.
    with runtime.seeded_numpy(seed):
        values = explainer([tokenizer.text], max_evals=settings.shap_max_evals, batch_size=settings.model_batch,
                           silent=True)
    v = np.asarray(values.values[0], dtype=float)
    if v.shape[0] != n:
        raise RuntimeError(f"SHAP returned {v.shape[0]} token values for {n} tokens")
    scores = v[:, target].copy()
    scores[[0, -1]] = 0.0
    base = float(np.asarray(values.base_values[0], dtype=float).reshape(-1)[target])
    return Attribution(scores, perturbed_calls=model.perturbed, model_calls=model.calls, base_value=base)


class _FixedIds:
    """Tokenizer facade for shap's Text masker that returns the sentence's already-encoded ids.

    The masker tokenizes the text it is given; truncated sentences would otherwise be re-tokenized to a different
    length. The facade answers with the ids the classifier saw and the offsets of their decoded pieces.
    """

    def __init__(self, tokenizer, ids: list[int]):
        self._tok = tokenizer
        self._ids = list(ids)
        pieces = tokenizer.convert_ids_to_tokens(self._ids)
        self.text, offsets, pos = "", [], 0
        for i, piece in enumerate(pieces):
            if i in (0, len(pieces) - 1):
                offsets.append((0, 0) if i == 0 else (pos, pos))
                continue
            word = piece[2:] if piece.startswith("##") else piece
            if self.text and not piece.startswith("##"):
                self.text += " "
                pos += 1
            offsets.append((pos, pos + len(word)))
            self.text += word
            pos += len(word)
        self._offsets = offsets
        self.mask_token = tokenizer.mask_token
        self.mask_token_id = tokenizer.mask_token_id
        self.sep_token = tokenizer.sep_token
        self.cls_token = tokenizer.cls_token
        self.pad_token = tokenizer.pad_token

    def __call__(self, text, return_offsets_mapping=False, **kwargs):
        if text != self.text:                     # shap probes its prefix/suffix rules with other strings
            return self._tok(text, return_offsets_mapping=return_offsets_mapping, **kwargs)
        out = {"input_ids": list(self._ids)}
        if return_offsets_mapping:
            out["offset_mapping"] = list(self._offsets)
        return out

    def __getattr__(self, name):
        return getattr(self._tok, name)
