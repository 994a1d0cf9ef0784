"""The Conditional HydraGAN network and its training ([3] §3.5): one generator, several objectives ("heads").

- **Generator**: input = latent vector z ⊕ condition vector (one-hot of the sensitive group, or of the
  intersection of two attributes: CGAN's conditioning). Output = the encoded row (see ``encoding``): tanh for the
  continuous scalars, a Gumbel-softmax (soft, temperature τ) for every mode and category block, so categories stay
  softmax vectors during training as in the thesis. Noise comes from a local ``torch.Generator``, so a seed
  reproduces a run without touching torch's global state.
- **Heads**: a list of (objective, weight). The realism head is a WGAN-GP critic (Gulrajani et al. 2017, gradient
  penalty weight 10): the generator minimises −E[critic(fake)]. The label-diversity head is the thesis's soft quota:
  the MSE between the label proportions of each generated batch (the mean of the label softmax) and the requested
  proportions. Group representation needs no head: it is a hard quota through the condition vector (HydraGAN's
  individual-diversity critic is dropped for that reason in the thesis). Further heads plug in as ``Head(name,
  weight, loss)`` with ``loss(FakeBatch) → scalar tensor``.
- The critic sees the condition too (a conditional WGAN), so each group's rows must look like that group's real
  rows; the thesis's realism critic is condition-free, which would let the generator give every group the same
  features (see the NOTE).

Training reports ``progress(fraction, message)`` at least every half second (that is how Stop works on a page).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, fields
from typing import Callable, Sequence

import numpy as np

from fairviz.core.runtime import pick_device
from fairviz.synth.encoding import Span, TabularEncoder

Progress = Callable[[float, str], None]
GP_WEIGHT = 10.0
REPORT_EVERY_S = 0.5


@dataclass(frozen=True)
class GANParams:
    epochs: int = 30
    batch: int = 500
    latent: int = 64
    hidden: int = 128
    critic_steps: int = 2           # critic updates per generator update
    gp_weight: float = GP_WEIGHT
    diversity_weight: float = 10.0  # weight of the label-diversity head (realism has weight 1)
    lr: float = 1e-3                # CTGAN uses 2e-4 for 300 epochs; 1e-3 measured better at 30 CPU epochs
    tau: float = 0.2                # Gumbel-softmax temperature of the softmax blocks
    seed: int = 0
    device: str = "auto"            # "auto": CUDA when available, else CPU

    def check(self) -> "GANParams":
        problems = [f"{f.name} must be ≥ 1, got {getattr(self, f.name)}"
                    for f in fields(self) if f.name in ("epochs", "batch", "latent", "hidden", "critic_steps")
                    and getattr(self, f.name) < 1]
        if self.batch < 2:
            problems.append("batch must be ≥ 2 (the gradient penalty and batch proportions need two rows)")
        if self.gp_weight < 0 or self.diversity_weight < 0 or self.lr <= 0 or self.tau <= 0:
            problems.append("gp_weight and diversity_weight must be ≥ 0; lr and tau > 0")
        if problems:
            raise ValueError("; ".join(problems))
        return self


def _torch():
    import torch
    return torch


# ----------------------------------------------------------------------------------------------- networks

def _modules():
    torch = _torch()
    nn = torch.nn

    class Generator(nn.Module):
        def __init__(self, latent: int, n_cond: int, hidden: int, spans: Sequence[Span], tau: float):
            super().__init__()
            width = spans[-1].stop
            self.body = nn.Sequential(
                nn.Linear(latent + n_cond, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                nn.Linear(hidden, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Linear(hidden, width))
            self.spans = list(spans)
            self.tau = tau

        def forward(self, z, cond, generator=None):
            raw = self.body(torch.cat([z, cond], dim=1))
            parts = []
            for span in self.spans:
                block = raw[:, span.start:span.stop]
                if span.kind == "scalar":
                    parts.append(torch.tanh(block))
                else:
                    parts.append(gumbel_softmax(block, self.tau, generator))
            return torch.cat(parts, dim=1)

    class Critic(nn.Module):
        def __init__(self, width: int, n_cond: int, hidden: int):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(width + n_cond, hidden), nn.LeakyReLU(0.2),
                                      nn.Linear(hidden, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))

        def forward(self, x, cond):
            return self.body(torch.cat([x, cond], dim=1)).squeeze(1)

    return Generator, Critic


def gumbel_softmax(logits, tau: float, generator=None):
    """Soft Gumbel-softmax with noise from ``generator`` (torch's own uses the global generator)."""
    torch = _torch()
    u = torch.rand(logits.shape, generator=generator, device=logits.device, dtype=logits.dtype)
    g = -torch.log((-torch.log(u.clamp_min(1e-10))).clamp_min(1e-10))
    return torch.softmax((logits + g) / tau, dim=1)


def _init(module, generator) -> None:
    """PyTorch's default Linear initialisation, U(±1/√fan_in), drawn from a local generator."""
    torch = _torch()
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, torch.nn.Linear):
                bound = 1.0 / math.sqrt(layer.in_features)
                for p in (layer.weight, layer.bias):
                    p.copy_((torch.rand(p.shape, generator=generator, device=generator.device) * 2 - 1) * bound)


# ----------------------------------------------------------------------------------------------- losses

def penalty_at(critic, points, cond, weight: float = GP_WEIGHT):
    """weight · E[(‖∇ₓ critic(x, c)‖₂ − 1)²] at the given points (the WGAN-GP term)."""
    torch = _torch()
    points = points.detach().requires_grad_(True)
    scores = critic(points, cond)
    (grad,) = torch.autograd.grad(scores.sum(), points, create_graph=True)
    return weight * ((grad.norm(2, dim=1) - 1) ** 2).mean()


def gradient_penalty(critic, real, fake, cond, weight: float = GP_WEIGHT, generator=None):
    """The penalty at random points on the segments between real and fake rows (ε ~ U(0, 1) per row)."""
    torch = _torch()
    eps = torch.rand((real.shape[0], 1), generator=generator, device=real.device, dtype=real.dtype)
    return penalty_at(critic, eps * real + (1 - eps) * fake.detach(), cond, weight)


def diversity_loss(probabilities, target):
    """MSE between the batch's label proportions (mean softmax) and the requested proportions ([3] §3.5)."""
    return ((probabilities.mean(dim=0) - target) ** 2).mean()


@dataclass
class FakeBatch:
    """What a head sees: the generated rows, their conditions and the realism critic's scores."""

    rows: object            # (B, width) tensor
    cond: object            # (B, n_cond) tensor
    critic: object          # (B,) tensor


@dataclass(frozen=True)
class Head:
    name: str
    weight: float
    loss: Callable[[FakeBatch], object]


def realism_head(weight: float = 1.0) -> Head:
    return Head("realism", weight, lambda batch: -batch.critic.mean())


def label_diversity_head(span: Span, target: Sequence[float], weight: float) -> Head:
    torch = _torch()
    target_t = torch.as_tensor(np.asarray(target, dtype=np.float32), device="cpu")  # moved to each batch's device

    def loss(batch: FakeBatch):
        return diversity_loss(batch.rows[:, span.start:span.stop], target_t.to(batch.rows.device))

    return Head("label diversity", weight, loss)


# ----------------------------------------------------------------------------------------------- training

@dataclass(frozen=True)
class TrainedGAN:
    encoder: TabularEncoder
    conditions: tuple[str, ...]          # the condition values, in one-hot order
    settings: GANParams
    generator_state: dict                # name → numpy array (CPU), so the object is cheap to cache and pickle
    history: dict                        # "critic", "gradient penalty", and each head's name → per-epoch mean
    heads: tuple[tuple[str, float], ...]
    device: str
    seconds: float
    module_cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def seconds_per_epoch(self) -> float:
        return self.seconds / max(1, len(self.history.get("critic", ())))

    def module(self, device: str | None = None):
        device = device or pick_device(self.settings.device)
        if device not in self.module_cache:
            torch = _torch()
            Generator, _ = _modules()
            s = self.settings
            gen = Generator(s.latent, len(self.conditions), s.hidden, self.encoder.spans, s.tau)
            gen = gen.to(device)
            gen.load_state_dict({k: torch.as_tensor(v, device=device) for k, v in self.generator_state.items()})
            self.module_cache[device] = gen.eval()
        return self.module_cache[device]


def train(encoded: np.ndarray, cond_codes: np.ndarray, encoder: TabularEncoder, conditions: Sequence[str],
          heads: Sequence[Head], settings: GANParams = GANParams(),
          progress: Progress | None = None) -> TrainedGAN:
    """Train the generator against the WGAN-GP critic and the heads; one epoch = one pass over the real rows."""
    torch = _torch()
    settings = settings.check()
    device = pick_device(settings.device)
    n = encoded.shape[0]
    if n < 2:
        raise ValueError("at least two rows are needed to train")
    n_cond = len(conditions)
    cpu_gen = torch.Generator().manual_seed(settings.seed)
    noise = torch.Generator(device=device).manual_seed(settings.seed + 1)
    Generator, Critic = _modules()
    gen = Generator(settings.latent, n_cond, settings.hidden, encoder.spans, settings.tau)
    critic = Critic(encoder.width, n_cond, settings.hidden)
    _init(gen, cpu_gen)
    _init(critic, cpu_gen)
    gen, critic = gen.to(device), critic.to(device)
    opt_g = torch.optim.Adam(gen.parameters(), lr=settings.lr, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(critic.parameters(), lr=settings.lr, betas=(0.5, 0.9))
    real_all = torch.as_tensor(encoded, dtype=torch.float32, device=device)
    cond_all = torch.nn.functional.one_hot(torch.as_tensor(cond_codes, dtype=torch.long, device=device),
                                           n_cond).float()
    batch = min(settings.batch, n)
    steps = max(1, n // batch)
    names = ["critic", "gradient penalty", *[h.name for h in heads]]
    history = {name: [] for name in names}
    start = last_report = time.monotonic()
    report = progress or (lambda fraction, message: None)
    report(0.0, f"training on {device}")
    for epoch in range(settings.epochs):
        perm = torch.randperm(n, generator=cpu_gen, device="cpu").to(device)   # same order on every device
        sums = dict.fromkeys(names, 0.0)
        for step in range(steps):
            idx = perm[step * batch:(step + 1) * batch]
            real, cond = real_all[idx], cond_all[idx]
            for _ in range(settings.critic_steps):
                z = torch.randn((len(idx), settings.latent), generator=noise, device=device)
                with torch.no_grad():
                    fake = gen(z, cond, noise)
                gp = gradient_penalty(critic, real, fake, cond, settings.gp_weight, noise)
                wasserstein = critic(fake, cond).mean() - critic(real, cond).mean()
                opt_d.zero_grad(set_to_none=True)
                (wasserstein + gp).backward()
                opt_d.step()
            z = torch.randn((len(idx), settings.latent), generator=noise, device=device)
            fake = gen(z, cond, noise)
            fake_batch = FakeBatch(fake, cond, critic(fake, cond))
            losses = [h.loss(fake_batch) for h in heads]
            total = sum(h.weight * loss for h, loss in zip(heads, losses))
            opt_g.zero_grad(set_to_none=True)
            total.backward()
            opt_g.step()
            sums["critic"] += wasserstein.item()
            sums["gradient penalty"] += gp.item()
            for h, loss in zip(heads, losses):
                sums[h.name] += loss.item()
            now = time.monotonic()
            if now - last_report >= REPORT_EVERY_S:
                last_report = now
                report((epoch + (step + 1) / steps) / settings.epochs,
                       f"epoch {epoch + 1}/{settings.epochs}, step {step + 1}/{steps}")
        for name in names:
            history[name].append(sums[name] / steps)
        report((epoch + 1) / settings.epochs, f"epoch {epoch + 1}/{settings.epochs}: critic "
                                              f"{history['critic'][-1]:+.3f}")
    state = {k: v.detach().cpu().numpy().copy() for k, v in gen.state_dict().items()}
    return TrainedGAN(encoder, tuple(conditions), settings, state, history,
                      tuple((h.name, h.weight) for h in heads), device, time.monotonic() - start)


def sample(trained: TrainedGAN, cond_codes: np.ndarray, seed: int, chunk: int = 4096) -> np.ndarray:
    """Generated encoded rows (softmax blocks) for the given condition codes, with noise from ``seed``."""
    torch = _torch()
    gen = trained.module()
    device = next(gen.parameters()).device
    noise = torch.Generator(device=device).manual_seed(seed)
    out = []
    with torch.no_grad():
        for start in range(0, len(cond_codes), chunk):
            codes = torch.as_tensor(cond_codes[start:start + chunk], dtype=torch.long, device=device)
            cond = torch.nn.functional.one_hot(codes, len(trained.conditions)).float()
            z = torch.randn((len(codes), trained.settings.latent), generator=noise, device=device)
            out.append(gen(z, cond, noise).cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, trained.encoder.width), dtype=np.float32)
