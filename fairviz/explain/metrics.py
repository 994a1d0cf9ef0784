"""The paper's seven explanation-quality metrics ([4] §4.2), computed per sentence.

Notation ([4] §4.2): x = token ids with [CLS]/[SEP]; t = x without its first and last token; s = the attribution
restricted to t and L1-normalised (Σ|s_i| = 1, sign kept); p(·) = softmax probability of the gold class y.

Faithfulness
  AOPC comprehensiveness  mean over the ferret rationales R of p(x) − p(t with R deleted)         ↑, in [−1, 1]
  AOPC sufficiency        mean over R of p(x) − p(only R, original order)                        ↓, in [−1, 1]
  Soft comprehensiveness  max(0, p(x) − p(x')), x'_t = x_t ⊙ Bernoulli(1 − s̃_t) per embedding dim  ↑, in [0, 1]
  Soft sufficiency        1 − max(0, p(x) − p(x')), x'_t = x_t ⊙ Bernoulli(s̃_t)                   ↑ (eq. 2), [0, 1]
Complexity
  Gini index              Σ_k (2k − n − 1)|s|_(k) / (n Σ|s|)                                       ↑, in [0, 1 − 1/n]
  Sparsity                share of tokens with |s_i| ≥ 0.1                                          ↓ (0 degenerate)
Robustness
  Sensitivity             ‖s(E + δ) − s(E)‖₂ / ‖s(E)‖₂, δ from a PGD attack on the prediction         ↓, ≥ 0

Decisions (the paper leaves these open):
- AOPC deletes tokens at the id level (no decode/re-tokenize round trip, so no token is split differently) and the
  model sees [CLS] + remaining tokens + [SEP]; rationales follow ferret: top-⌊q·n⌋ tokens for q = 0.1…1.0, only
  positive scores, repeated rationales dropped; no positive score → comprehensiveness 0, sufficiency 1.
- Soft metrics: s̃ = min-max of s over the non-special tokens (0.5 when s is constant), [CLS]/[SEP] never
  perturbed, one seeded draw (``draws`` averages more), probabilities not logits.
- Sensitivity attack ([4] §4.2, robustness): word-embedding space, non-special positions only; L2 ball of radius
  r = ε‖E_t‖_F with ε = 0.05; T = 10 steps of normalised-gradient ascent on the cross-entropy of the gold label,
  step α = 2.5r/T, projection onto the ball after each step, δ₀ = 0 (deterministic). The explainer is re-run with
  the same seed at E + δ; the IG baseline is not perturbed. ‖s(E)‖ = 0 → undefined.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from fairviz.core import runtime

AOPC_THRESHOLDS = np.arange(0.1, 1.1, 0.1)
SPARSITY_TAU = 0.1


@dataclass(frozen=True)
class SensitivityParams:
    eps: float = 0.05          # radius as a share of ‖E_t‖_F
    steps: int = 10
    step_factor: float = 2.5   # α = step_factor · r / steps


# ----------------------------------------------------------------------------------------------- normalisation

def normalise(scores: np.ndarray) -> np.ndarray:
    """s: the scores of the non-special tokens (drop first and last), L1-normalised; all-zero stays all-zero."""
    s = np.asarray(scores, dtype=float)[1:-1]
    total = np.abs(s).sum()
    return s / total if total > 0 else s.copy()


# ----------------------------------------------------------------------------------------------- complexity

def gini(s: np.ndarray) -> float:
    """Gini index of |s| (sorted ascending): 0 for uniform, 1 − 1/n for one-hot; NaN when every score is 0."""
    a = np.sort(np.abs(np.asarray(s, dtype=float)))
    n, total = a.size, a.sum()
    if n == 0 or total == 0:
        return float("nan")
    k = np.arange(1, n + 1)
    return float(np.sum((2 * k - n - 1) * a) / (n * total))


def gini_lorenz(s: np.ndarray) -> float:
    """The same index written as 1 − 2 Σ (a_(k)/‖a‖₁)(n − k + ½)/n; a cross-check for the tests."""
    a = np.sort(np.abs(np.asarray(s, dtype=float)))
    n, total = a.size, a.sum()
    if n == 0 or total == 0:
        return float("nan")
    k = np.arange(1, n + 1)
    return float(1 - 2 * np.sum(a / total * (n - k + 0.5) / n))


def sparsity(s: np.ndarray, tau: float = SPARSITY_TAU) -> float:
    """Share of (L1-normalised) scores with |s_i| ≥ τ (inclusive); at most min(1, 1/(τ n))."""
    s = np.asarray(s, dtype=float)
    return float(np.mean(np.abs(s) >= tau - 1e-12)) if s.size else float("nan")


# ----------------------------------------------------------------------------------------------- AOPC

def aopc_rationales(s: np.ndarray, thresholds: np.ndarray = AOPC_THRESHOLDS) -> list[np.ndarray]:
    """ferret's rationales: for q = 0.1…1.0 the top-⌊q·n⌋ tokens, keeping positive scores only, no repeats.

    Returned as sorted position arrays into s (order matters for sufficiency, which keeps the original order).
    """
    s = np.asarray(s, dtype=float)
    n = s.size
    order = np.argsort(-s, kind="stable")
    out, last = [], None
    for q in thresholds:
        k = int(q * n)
        if k == 0:
            continue
        chosen = order[:k]
        chosen = np.sort(chosen[s[chosen] > 0])
        if chosen.size == 0 or (last is not None and np.array_equal(chosen, last)):
            continue
        out.append(chosen)
        last = chosen
    return out


ProbaRows = Callable[[list[list[int]]], np.ndarray]      # id rows → probabilities [rows, classes]


def aopc_many(proba_rows: ProbaRows, items: Sequence[tuple[list[int], np.ndarray, int]]) -> list[tuple[float, float]]:
    """(comprehensiveness, sufficiency) for each (ids, s, y), with one batched model call for all sentences."""
    rows, plan = [], []
    for ids, s, y in items:
        inner = list(ids[1:-1])
        head, tail = [ids[0]], [ids[-1]]
        rationales = aopc_rationales(s)
        start = len(rows)
        rows.append(list(ids))
        for r in rationales:
            keep = np.ones(len(inner), dtype=bool)
            keep[r] = False
            rows.append(head + [inner[i] for i in np.flatnonzero(keep)] + tail)       # R deleted
            rows.append(head + [inner[i] for i in r] + tail)                          # only R, in order
        plan.append((start, len(rationales), y))
    probs = proba_rows(rows) if rows else np.zeros((0, 2))
    out = []
    for start, k, y in plan:
        full = probs[start, y]
        if k == 0:
            out.append((0.0, 1.0))
            continue
        deleted = probs[start + 1:start + 1 + 2 * k:2, y]
        only = probs[start + 2:start + 2 + 2 * k:2, y]
        out.append((float(np.mean(full - deleted)), float(np.mean(full - only))))
    return out


def aopc(proba_rows: ProbaRows, ids: list[int], s: np.ndarray, y: int) -> tuple[float, float]:
    return aopc_many(proba_rows, [(ids, s, y)])[0]


# ----------------------------------------------------------------------------------------------- soft metrics

def soft_keep_probabilities(s: np.ndarray) -> np.ndarray:
    """s̃ in [0, 1]: min-max of s over the non-special tokens; a constant s gives 0.5 everywhere."""
    s = np.asarray(s, dtype=float)
    lo, hi = s.min(), s.max()
    return np.full(s.shape, 0.5) if hi - lo <= 0 else (s - lo) / (hi - lo)


def soft_many(classifier, items: Sequence[tuple[list[int], np.ndarray, int, int, int]], draws: int = 1,
              batch_size: int = 64, keep_given: bool = False) -> list[tuple[float, float]]:
    """(soft comprehensiveness, soft sufficiency) per (ids, s, y, seed_comp, seed_suff).

    With ``keep_given`` the second element is s̃ itself (tests bypass the min-max step).
    """
    results = []
    for start in range(0, len(items), batch_size):
        runtime.beat()
        chunk = items[start:start + batch_size]
        rows, masks = [], []
        for ids, s, y, seed_c, seed_s in chunk:
            s_tilde = np.asarray(s, float) if keep_given else soft_keep_probabilities(s)
            keep_c = np.concatenate([[1.0], 1.0 - s_tilde, [1.0]])      # erase important tokens
            keep_s = np.concatenate([[1.0], s_tilde, [1.0]])            # keep important tokens
            d = classifier.embeddings.embedding_dim
            for seed, keep in ((seed_c, keep_c), (seed_s, keep_s)):
                rng = np.random.default_rng(seed)
                for _ in range(draws):
                    masks.append((rng.random((len(ids), d)) < keep[:, None]).astype(np.float32))
            rows.append(ids)
        probs = _soft_forward(classifier, rows, masks, draws)
        for (ids, s, y, *_), (p_full, p_c, p_s) in zip(chunk, probs):
            drop_c = np.maximum(0.0, p_full[y] - p_c[:, y])
            drop_s = np.maximum(0.0, p_full[y] - p_s[:, y])
            results.append((float(drop_c.mean()), float((1.0 - drop_s).mean())))
    return results


def _soft_forward(classifier, rows, masks, draws):
    """p(x) and p(x') for every sentence of the chunk in one padded forward pass over word embeddings.

    The 0/1 masks are assembled on the host and copied to the model's device once (one copy, not one per row)."""
    import torch
    width = max(len(r) for r in rows)
    d = classifier.embeddings.embedding_dim
    per = 1 + 2 * draws
    factor = np.ones((len(rows) * per, width, d), dtype=np.float32)
    for i, r in enumerate(rows):
        for j in range(2 * draws):
            factor[i * per + 1 + j, :len(r)] = masks[i * 2 * draws + j]
    ids, attention = classifier.pad(rows)
    with torch.inference_mode():
        emb = classifier.embeddings(ids)                                   # [B, m, d]
        batch = emb.repeat_interleave(per, dim=0)                          # rows: x, x'_c…, x'_s…
        att = attention.repeat_interleave(per, dim=0)
        factor_t = torch.as_tensor(factor, device=emb.device).to(emb.dtype)
        probs = torch.softmax(classifier.logits_from_embeddings(batch * factor_t, att).float(), -1)
        probs = probs.detach().double().cpu().numpy()
    out = []
    for i in range(len(rows)):
        block = probs[i * per:(i + 1) * per]
        out.append((block[0], block[1:1 + draws], block[1 + draws:]))
    return out


# ----------------------------------------------------------------------------------------------- sensitivity

def pgd_deltas(classifier, rows: Sequence[list[int]], targets: Sequence[int],
               settings: SensitivityParams = SensitivityParams(), batch_size: int = 64) -> list[np.ndarray]:
    """δ per sentence ([n, d], zero at [CLS]/[SEP]): projected normalised-gradient ascent on the gold-label loss."""
    import torch
    out = []
    for start in range(0, len(rows), batch_size):
        chunk = list(rows[start:start + batch_size])
        target = torch.as_tensor(list(targets[start:start + batch_size]), device=classifier.device)
        ids, attention = classifier.pad(chunk)
        with torch.no_grad():
            embeds = classifier.embeddings(ids).detach()
        free = torch.zeros(embeds.shape[:2], dtype=embeds.dtype, device=embeds.device)
        for i, r in enumerate(chunk):
            free[i, 1:len(r) - 1] = 1.0                                    # non-special, non-padding
        free = free[..., None]
        radius = settings.eps * torch.sqrt(((embeds * free) ** 2).sum(dim=(1, 2)))      # [B]
        alpha = settings.step_factor * radius / max(settings.steps, 1)
        delta = torch.zeros_like(embeds)
        for _ in range(settings.steps if settings.eps > 0 else 0):
            runtime.beat()
            delta.requires_grad_(True)
            logits = classifier.logits_from_embeddings(embeds + delta, attention)
            loss = torch.nn.functional.cross_entropy(logits, target, reduction="sum")
            grad, = torch.autograd.grad(loss, delta)
            with torch.no_grad():
                grad = grad * free
                norm = torch.sqrt((grad ** 2).sum(dim=(1, 2))).clamp_min(1e-12)
                delta = delta + (alpha / norm)[:, None, None] * grad
                size = torch.sqrt((delta ** 2).sum(dim=(1, 2))).clamp_min(1e-12)
                delta = delta * torch.clamp(radius / size, max=1.0)[:, None, None]
        delta = delta.detach().double().cpu().numpy()
        out += [delta[i, :len(r)].copy() for i, r in enumerate(chunk)]
    return out


def sensitivity(s: np.ndarray, s_perturbed: np.ndarray) -> float:
    """Relative L2 change of the normalised attribution; NaN when the unperturbed one is all zero."""
    s, s_perturbed = np.asarray(s, float), np.asarray(s_perturbed, float)
    base = np.linalg.norm(s)
    return float(np.linalg.norm(s_perturbed - s) / base) if base > 0 else float("nan")
