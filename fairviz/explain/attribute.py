"""Token attributions for the gold label with the paper's six methods (captum, lime, shap) and a random baseline.

Conventions (spec §1, ferret's defaults, so the numbers mean what the paper's mean):

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

Finding (not in the spec): summed over the hidden dimension, IG without ×input is exactly zero for BERT-style
encoders, because the word embeddings feed a LayerNorm, which is invariant to adding a constant to every hidden
dimension, so every gradient w.r.t. them sums to 0 over that dimension. What remains is float32 rounding (|Σ_d| /
Σ_d|·| ≈ 1e-8), which L1 normalisation blows up into arbitrary rankings. Such attributions are flagged
(``numerically_zero``) and their metrics are undefined, with the reason shown, instead of scoring noise.

Decision (spec §1.2 offers both): SHAP's Text masker runs with ``output_type="token_ids"``, i.e. masked inputs
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

from fairviz.explain import METHODS, RANDOM
from fairviz.explain.models import TextClassifier

GRADIENT_METHODS = ("grad", "gxi", "ig", "igxi")
# Below this share the per-token sum over the hidden dimension is float32 rounding, not signal. It happens to IG
# without ×input on BERT-style models: the word embeddings enter a LayerNorm, which ignores a shift of all hidden
# dimensions, so every gradient w.r.t. them sums to exactly 0 over the hidden dimension (measured: 1e-8; GxI and
# IGxI stay above 1e-2).
CANCELLATION_FLOOR = 1e-5


@dataclass(frozen=True)
class AttributionSettings:
    ig_steps: int = 50
    ig_method: str = "gausslegendre"
    lime_max_samples: int = 5000         # n² samples, capped here (ferret)
    shap_max_evals: int = 500            # shap's default
    batch_size: int = 64                 # sentences per gradient / soft-metric / PGD batch
    model_batch: int = 256               # id rows per forward pass (LIME, SHAP, AOPC)
    ig_internal_batch: int = 2048        # expanded (sentence × step) rows per IG forward pass


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
            seeds: Sequence[int], settings: AttributionSettings = AttributionSettings(),
            deltas: Sequence[np.ndarray] | None = None) -> list[Attribution]:
    """Attributions for the gold ``targets`` of every id row (gradient methods batched over sentences)."""
    if method in GRADIENT_METHODS:
        out = []
        for start in range(0, len(rows), settings.batch_size):
            stop = start + settings.batch_size
            out += _gradient_batch(classifier, rows[start:stop], targets[start:stop], method, settings,
                                   None if deltas is None else deltas[start:stop])
        return out
    if method == "lime":
        return [_lime(classifier, r, t, s, settings, None if deltas is None else deltas[i])
                for i, (r, t, s) in enumerate(zip(rows, targets, seeds))]
    if method == "shap":
        return [_shap(classifier, r, t, s, settings, None if deltas is None else deltas[i])
                for i, (r, t, s) in enumerate(zip(rows, targets, seeds))]
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


def _gradient_batch(classifier: TextClassifier, rows, targets, method: str, settings: AttributionSettings,
                    deltas) -> list[Attribution]:
    import torch
    from captum.attr import InputXGradient, IntegratedGradients, Saliency

    embeds, mask, baseline = _embedded_batch(classifier, rows, deltas)
    target = torch.as_tensor(list(targets), dtype=torch.long, device=embeds.device)

    def forward(e, attention_mask):
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
            deltas_out = (sums - (logits_x - logits_b)).double().cpu().numpy()
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

    def __init__(self, classifier: TextClassifier, n: int, delta: np.ndarray | None, batch_size: int):
        self.classifier, self.n, self.batch_size = classifier, n, batch_size
        self.delta = delta
        self.calls = self.perturbed = 0

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        import torch
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, self.n)
        self.calls += 1
        if self.delta is None:
            return self.classifier.proba_ids(rows.tolist(), self.batch_size)
        self.perturbed += 1
        out = []
        clf = self.classifier
        d = torch.as_tensor(np.asarray(self.delta), dtype=torch.float32, device=clf.device)
        with torch.inference_mode():
            for start in range(0, len(rows), self.batch_size):
                ids = torch.as_tensor(rows[start:start + self.batch_size], device=clf.device)
                embeds = clf.embeddings(ids) + d
                out.append(torch.softmax(clf.logits_from_embeddings(embeds).float(), -1).cpu())
        return torch.cat(out).numpy().astype(np.float64)


def _lime(classifier: TextClassifier, ids: list[int], target: int, seed: int, settings: AttributionSettings,
          delta) -> Attribution:
    from lime.lime_text import LimeTextExplainer

    n = len(ids)
    model = _IdModel(classifier, n, delta, settings.model_batch)

    def proba(strings):          # lime passes strings of ids, "UNKWORDZ" where a token was removed
        rows = [[classifier.mask_id if t == "UNKWORDZ" else int(t) for t in s.split(" ")] for s in strings]
        return model(np.asarray(rows))

    explainer = LimeTextExplainer(bow=False, split_expression=" ", random_state=seed)
    exp = explainer.explain_instance(" ".join(map(str, ids)), proba, labels=[target], num_features=n,
                                     num_samples=min(n * n, settings.lime_max_samples))
    scores = np.zeros(n)
    for position, weight in exp.local_exp[target]:
        scores[position] = weight
    scores[[0, -1]] = 0.0
    return Attribution(scores, perturbed_calls=model.perturbed, model_calls=model.calls)


def _shap(classifier: TextClassifier, ids: list[int], target: int, seed: int, settings: AttributionSettings,
          delta) -> Attribution:
    import shap

    n = len(ids)
    model = _IdModel(classifier, n, delta, settings.model_batch)
    tokenizer = _FixedIds(classifier.tokenizer, ids)
    masker = shap.maskers.Text(tokenizer, mask_token=classifier.mask_id, collapse_mask_token=False,
                               output_type="token_ids")
    explainer = shap.Explainer(model, masker, algorithm="partition")
    # shap 0.51 does not pass ``seed`` on to the Partition explainer, whose priority queue breaks ties with the
    # global np.random.randn(): unseeded, ties between equal-valued clusters are broken differently on every call
    # and, under the evaluation budget, twins get slightly different values. Seed the global RNG for the call and
    # put its state back afterwards.
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        values = explainer([tokenizer.text], max_evals=settings.shap_max_evals, batch_size=settings.model_batch,
                           silent=True)
    finally:
        np.random.set_state(state)
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
