"""The Probabilistic Parallel Time Network ([3] §5.4) and its first-order DARTS training.

This is the only module of fairviz that imports torch, and it does so inside functions: importing it is free.

Architecture ([3] §5.4) at a CPU-affordable size: every input is embedded into an ``tokens × d`` space (the
thesis uses d × d; with d ≥ 72 that makes attention and the GRU run over 72+ tokens, which 2 CPU cores cannot
afford):

- static (σ, ρ, β): Gaussian noise (training only) → Dense → BatchNorm → LReLU → repeat over tokens →
  Dropout (first-layer rate) → Dense → LReLU;
- history (16 × 3): Dense → LReLU → Dropout → causal Conv1D with the 16 steps as channels (16 → tokens) → LReLU
  → DARTS cell {multi-head attention, causal Conv1D, bidirectional GRU};
- forecasts (10 × 16 × 3): DARTS cell {Conv2D collapse, Dense} (→ 10 × 16) → Dense → LReLU → causal Conv1D with
  the 10 forecasts as channels (10 → tokens) → DARTS cell {MHA, Conv1D, BiGRU};
- fusion: each embedding times its own learnable scalar, summed;
- head: the chosen normalisation → Conv1D (tokens → 16 steps) → LayerNorm → LReLU → Conv1D (d → 111) → LReLU →
  Dense with no activation (quantiles may leave the training range).

A DARTS cell mixes its operations with softmax(α); α are the architecture parameters, trained by their own AdamW
on a separate split (5 steps per epoch) while all other weights train on theirs (10 steps per epoch); each
optimiser has a reduce-on-plateau schedule (patience 1, factor 0.1), as in the thesis. Loss: the ordered CRPS of
Eq. 5.9 on the normalised scale. Outputs are sorted before they are read as quantiles at levels (j − ½)/111.
"""
from __future__ import annotations

import functools
import io
import json
import math
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Callable

import numpy as np

from fairviz.core import runtime
from fairviz.forecast import crps as scores
from fairviz.forecast.windows import HISTORY, HORIZON, N_FORECASTS, Windows

NORMS = ("layer", "batch", "none")
SEQUENCE_OPS = ("attention", "conv1d", "bigru")
COLLAPSE_OPS = ("conv2d_collapse", "dense")
Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class PTNParams:
    """Hyperparameters of Table 5.1 (names as there), plus the shapes of the Lorenz task."""
    d: int = 32                          # hidden size (Table 5.1: 72 … 240; 24 … 72 on a CPU)
    tokens: int = 16                     # token length (the thesis uses d)
    dropout: float = 0.05
    first_dropout: float = 0.05
    slope: float = 0.1                   # LReLU negative slope α
    history_heads: int = 4
    forecast_heads: int = 4
    noise_std: float = 0.05
    arch_lr: float = 3e-3
    arch_beta1: float = 0.5
    arch_beta2: float = 0.999
    lr: float = 5e-3                     # thesis range [1e-5, 1e-3] is for 30-epoch GPU runs; see PTNTrainParams
    beta1: float = 0.9
    beta2: float = 0.999
    norm: str = "layer"
    history_embed_kernel: int = 3
    history_kernel: int = 3
    collapse_kernel_width: int = 3
    collapse_kernel_height: int = 3
    forecast_embed_kernel: int = 3
    forecast_kernel: int = 3
    output_kernel_time: int = 3
    output_kernel_features: int = 3
    use_static: bool = True              # False: the static branch is cut (the thesis's static-context ablation)
    quantiles: int = scores.N_QUANTILES
    static_features: int = 3
    history_steps: int = HISTORY
    channels: int = 3
    n_forecasts: int = N_FORECASTS
    horizon: int = HORIZON

    def check(self) -> "PTNParams":
        problems = []
        for heads, name in ((self.history_heads, "history"), (self.forecast_heads, "forecast")):
            if heads < 2 or self.d % heads:
                problems.append(f"{name} attention heads ({heads}) must be ≥ 2 and divide d = {self.d}")
        if self.norm not in NORMS:
            problems.append(f"norm must be one of {NORMS}, got {self.norm!r}")
        kernels = [f.name for f in fields(self) if "kernel" in f.name]
        problems += [f"{k} must be a positive odd integer" for k in kernels
                     if getattr(self, k) < 1 or getattr(self, k) % 2 == 0]
        if self.d < 2 or self.d % 2 or self.tokens < 1:
            problems.append("d must be an even integer ≥ 2 and tokens ≥ 1")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @staticmethod
    def from_dict(values: dict) -> "PTNParams":
        known = {f.name for f in fields(PTNParams)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown PTN settings: {', '.join(sorted(unknown))}")
        return PTNParams(**values).check()


@dataclass(frozen=True)
class PTNTrainParams:
    epochs: int = 30                     # thesis: 30 per candidate
    weight_steps: int = 10               # thesis: 10 steps of the ordinary weights per epoch
    arch_steps: int = 5                  # thesis: 5 architecture steps per epoch, batch 64
    batch: int = 64
    omega: float = scores.OMEGA
    patience: int = 1
    factor: float = 0.1
    seed: int = 0
    device: str = "auto"                 # "auto": CUDA when available, else CPU
    eval_windows: int = 512              # fixed validation subset scored after every epoch

    @staticmethod
    def from_dict(values: dict) -> "PTNTrainParams":
        known = {f.name for f in fields(PTNTrainParams)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown training settings: {', '.join(sorted(unknown))}")
        return PTNTrainParams(**values)


@dataclass(frozen=True)
class ScaleInfo:
    """How the target was normalised: x_norm = (x − low) / (high − low)."""
    low: float
    high: float

    def normalise(self, x):
        return (x - self.low) / (self.high - self.low)

    def denormalise(self, u):
        return u * (self.high - self.low) + self.low


@dataclass(frozen=True)
class TrainedPTN:
    """A trained network as plain arrays (no torch objects): what is cached, saved and shipped."""
    config: PTNParams
    state: dict                          # parameter/buffer name → numpy array
    scale: ScaleInfo
    history: list = field(default_factory=list)      # per epoch: dict(epoch, train, val, lr, seconds)
    arch_weights: dict = field(default_factory=dict)  # cell → {op: softmax weight}
    fusion: dict = field(default_factory=dict)        # branch → learnable scalar
    device: str = "cpu"
    seconds: float = 0.0
    settings: PTNTrainParams = field(default_factory=PTNTrainParams)

    @property
    def seconds_per_epoch(self) -> float:
        return self.seconds / max(len(self.history), 1)


# ----------------------------------------------------------------------------------------------- torch parts

@functools.cache
def _torch():
    import torch
    return torch


def pick_device(requested: str = "auto") -> str:
    """'auto': CUDA when available, else the CPU; an explicit CUDA request without a GPU is a ValueError."""
    return runtime.pick_device(requested)


@functools.cache
def _modules():
    """The nn.Module classes, defined on first use so that importing this module does not import torch."""
    torch = _torch()
    from torch import nn

    class CausalConv1d(nn.Module):
        """Conv1d over the last axis with left padding only: output position i sees inputs ≤ i."""

        def __init__(self, c_in, c_out, kernel):
            super().__init__()
            self.pad = kernel - 1
            self.conv = nn.Conv1d(c_in, c_out, kernel)

        def forward(self, x):                       # (B, C_in, length) → (B, C_out, length)
            return self.conv(nn.functional.pad(x, (self.pad, 0)))

    class Dropout(nn.Module):
        """Inverted dropout drawing its masks from ``generator`` (a local torch.Generator on the model's device,
        set by ``train``), never from torch's process-wide generator; without one it is nn.Dropout."""

        def __init__(self, p):
            super().__init__()
            self.p = float(p)
            self.generator = None

        def forward(self, x):
            if not self.training or self.p <= 0:
                return x
            if self.generator is None:
                return nn.functional.dropout(x, self.p, training=True)
            keep = torch.empty_like(x).bernoulli_(1.0 - self.p, generator=self.generator)
            return x * keep / (1.0 - self.p)

    class MixedOp(nn.Module):
        """A DARTS cell: Σ_k softmax(α)_k · op_k(x)."""

        def __init__(self, ops: dict):
            super().__init__()
            self.names = list(ops)
            self.ops = nn.ModuleList(ops.values())
            self.alpha = nn.Parameter(torch.zeros(len(ops)))

        def weights(self):
            return torch.softmax(self.alpha, dim=0)

        def forward(self, x):
            w = self.weights()
            return sum(w[k] * op(x) for k, op in enumerate(self.ops))

    class Attention(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.mha = nn.MultiheadAttention(d, heads, batch_first=True)

        def forward(self, x):                       # (B, L, d)
            return self.mha(x, x, x, need_weights=False)[0]

    class TokenConv(nn.Module):
        def __init__(self, d, kernel, slope):
            super().__init__()
            self.conv = CausalConv1d(d, d, kernel)
            self.act = nn.LeakyReLU(slope)

        def forward(self, x):                       # convolve along the tokens
            return self.act(self.conv(x.transpose(1, 2)).transpose(1, 2))

    class BiGRU(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.gru = nn.GRU(d, d // 2, batch_first=True, bidirectional=True)

        def forward(self, x):
            return self.gru(x)[0]

    def sequence_cell(d, heads, kernel, slope):
        return MixedOp({"attention": Attention(d, heads), "conv1d": TokenConv(d, kernel, slope),
                        "bigru": BiGRU(d)})

    class Collapse2d(nn.Module):
        """(B, forecasts, steps, channels) → (B, forecasts, steps) by a 2-D convolution with 'same' padding."""

        def __init__(self, channels, kh, kw):
            super().__init__()
            self.conv = nn.Conv2d(channels, 1, (kh, kw), padding=(kh // 2, kw // 2))

        def forward(self, x):
            return self.conv(x.permute(0, 3, 1, 2))[:, 0]

    class DenseCollapse(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.dense = nn.Linear(channels, 1)

        def forward(self, x):
            return self.dense(x)[..., 0]

    class PTN(nn.Module):
        def __init__(self, cfg: PTNParams):
            super().__init__()
            d, L, a = cfg.d, cfg.tokens, cfg.slope
            self.cfg = cfg
            self.act = nn.LeakyReLU(a)
            # static branch
            self.static_in = nn.Linear(cfg.static_features, d)
            self.static_bn = nn.BatchNorm1d(d)
            self.static_drop = Dropout(cfg.first_dropout)
            self.static_out = nn.Linear(d, d)
            # history branch
            self.history_in = nn.Linear(cfg.channels, d)
            self.history_drop = Dropout(cfg.dropout)
            self.history_embed = CausalConv1d(cfg.history_steps, L, cfg.history_embed_kernel)
            self.history_cell = sequence_cell(d, cfg.history_heads, cfg.history_kernel, a)
            # forecasts branch
            self.collapse = MixedOp({"conv2d_collapse": Collapse2d(cfg.channels, cfg.collapse_kernel_height,
                                                                   cfg.collapse_kernel_width),
                                     "dense": DenseCollapse(cfg.channels)})
            self.forecast_in = nn.Linear(cfg.horizon, d)
            self.forecast_embed = CausalConv1d(cfg.n_forecasts, L, cfg.forecast_embed_kernel)
            self.forecast_cell = sequence_cell(d, cfg.forecast_heads, cfg.forecast_kernel, a)
            self.cell_drop = Dropout(cfg.dropout)
            self.generator = None                   # local generator for the static noise and every dropout
            # fusion scalars (never pruned; read for interpretability)
            self.fusion = nn.Parameter(torch.ones(3))
            # head
            self.norm = {"layer": nn.LayerNorm(d), "batch": nn.BatchNorm1d(d), "none": nn.Identity()}[cfg.norm]
            self.head_time = CausalConv1d(L, cfg.horizon, cfg.output_kernel_features)
            self.head_ln = nn.LayerNorm(d)
            self.head_quant = CausalConv1d(d, cfg.quantiles, cfg.output_kernel_time)
            self.out = nn.Linear(cfg.quantiles, cfg.quantiles)

        def use_generator(self, generator) -> None:
            """Draw the training noise and the dropout masks from ``generator`` (None: torch's global one)."""
            self.generator = generator
            for module in self.modules():
                if isinstance(module, Dropout):
                    module.generator = generator

        def cells(self) -> dict:
            return {"history": self.history_cell, "forecasts_collapse": self.collapse,
                    "forecasts": self.forecast_cell}

        def forward(self, static, history, forecasts):
            cfg = self.cfg
            # history: (B, 16, 3) → (B, 16, d) → conv over d with the 16 steps as channels → (B, L, d)
            h = self.history_drop(self.act(self.history_in(history)))
            h = self.history_cell(self.act(self.history_embed(h)))
            # forecasts: (B, 10, 16, 3) → (B, 10, 16) → (B, 10, d) → (B, L, d)
            f = self.act(self.forecast_in(self.collapse(forecasts)))
            f = self.forecast_cell(self.act(self.forecast_embed(f)))
            fused = self.fusion[1] * self.cell_drop(h) + self.fusion[2] * self.cell_drop(f)
            if cfg.use_static:
                if self.training and cfg.noise_std > 0:
                    noise = torch.randn(static.shape, generator=self.generator, device=static.device,
                                        dtype=static.dtype)
                    static = static + cfg.noise_std * noise
                s = self.act(self.static_bn(self.static_in(static)))              # (B, d)
                s = s[:, None, :].expand(-1, cfg.tokens, -1)                        # (B, L, d)
                s = self.act(self.static_out(self.static_drop(s)))
                fused = fused + self.fusion[0] * s
            if cfg.norm == "batch":
                fused = self.norm(fused.transpose(1, 2)).transpose(1, 2)
            else:
                fused = self.norm(fused)
            z = self.act(self.head_ln(self.head_time(fused)))                     # (B, 16, d)
            z = self.act(self.head_quant(z.transpose(1, 2)).transpose(1, 2))      # (B, 16, 111)
            return self.out(z)

    return PTN


def build(config: PTNParams):
    """A fresh network (torch.nn.Module) for ``config``."""
    return _modules()(config.check())


def crps_loss(q, y, omega: float = scores.OMEGA):
    """Eq. 5.9 in torch: mean over windows and steps of CRPS (sorted-sum T₂) + ω · ordering penalty."""
    torch = _torch()
    c = q.shape[-1]
    t1 = (q - y[..., None]).abs().mean(-1)
    ranked = torch.sort(q, dim=-1).values
    weights = 2.0 * (2.0 * torch.arange(1, c + 1, device=q.device, dtype=q.dtype) - c - 1)
    t2 = (ranked * weights).sum(-1) / c**2
    crps = (t1 - 0.5 * t2).mean()
    order = torch.clamp(q[..., :-1] - q[..., 1:], min=0).mean()
    return crps + omega * order, crps


def _tensors(windows: Windows, scale: ScaleInfo, device: str):
    torch = _torch()
    as_t = functools.partial(torch.as_tensor, dtype=torch.float32, device=device)
    return (as_t(windows.static), as_t(windows.history), as_t(windows.forecasts),
            as_t(scale.normalise(windows.target)))


def _arch_params(model):
    return [cell.alpha for cell in model.cells().values()]


def _weight_params(model):
    arch = {id(p) for p in _arch_params(model)}
    return [p for p in model.parameters() if id(p) not in arch]


def _arch_weights(model) -> dict:
    return {name: dict(zip(cell.names, cell.weights().detach().cpu().numpy().round(6).tolist()))
            for name, cell in model.cells().items()}


def _state_arrays(model) -> dict:
    return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}


def train(train_windows: Windows, arch_windows: Windows, config: PTNParams = PTNParams(),
          settings: PTNTrainParams = PTNTrainParams(), scale: ScaleInfo | None = None,
          progress: Progress | None = None, on_epoch: Callable[[list], None] | None = None) -> TrainedPTN:
    """First-order DARTS: each epoch takes ``weight_steps`` AdamW steps of the network weights on
    ``train_windows`` and ``arch_steps`` steps of the cell weights α on ``arch_windows``; then the ordered CRPS of
    a fixed subset of ``arch_windows`` drives both plateau schedules and the loss curve."""
    torch = _torch()
    config.check()
    if train_windows.n < 2 or arch_windows.n < 2:
        raise ValueError("training needs at least two windows in each split")
    device = pick_device(settings.device)
    rng = np.random.default_rng(settings.seed)
    scale = scale or ScaleInfo(float(train_windows.target.min()), float(train_windows.target.max()))
    with runtime.seeded(settings.seed):          # torch's layer constructors take no generator (see core.runtime)
        model = build(config)
    model = model.to(device)
    model.use_generator(runtime.generator(settings.seed + 1, device))    # noise and dropout: a local generator
    with runtime.heartbeat(progress) as beat:
        return _train(model, train_windows, arch_windows, config, settings, scale, device, rng, beat, on_epoch)


def _train(model, train_windows: Windows, arch_windows: Windows, config: PTNParams, settings: PTNTrainParams,
           scale: ScaleInfo, device: str, rng, beat, on_epoch) -> TrainedPTN:
    torch = _torch()
    opt_w = torch.optim.AdamW(_weight_params(model), lr=config.lr, betas=(config.beta1, config.beta2))
    opt_a = torch.optim.AdamW(_arch_params(model), lr=config.arch_lr, betas=(config.arch_beta1, config.arch_beta2))
    sched_w = torch.optim.lr_scheduler.ReduceLROnPlateau(opt_w, patience=settings.patience, factor=settings.factor)
    sched_a = torch.optim.lr_scheduler.ReduceLROnPlateau(opt_a, patience=settings.patience, factor=settings.factor)
    train_t = _tensors(train_windows, scale, device)
    arch_t = _tensors(arch_windows, scale, device)
    eval_idx = rng.choice(arch_windows.n, min(settings.eval_windows, arch_windows.n), replace=False)
    eval_t = tuple(t[torch.as_tensor(eval_idx, device=device)] for t in arch_t)
    batch = min(settings.batch, train_windows.n, arch_windows.n)
    history = []
    start = time.perf_counter()
    for epoch in range(1, settings.epochs + 1):
        tic = time.perf_counter()
        model.train()
        losses = []
        for _ in range(settings.weight_steps):
            losses.append(_step(model, opt_w, train_t, rng.choice(train_windows.n, batch, replace=False), settings))
        for _ in range(settings.arch_steps):
            _step(model, opt_a, arch_t, rng.choice(arch_windows.n, batch, replace=False), settings)
        model.eval()
        with torch.no_grad():
            val_loss, val_crps = crps_loss(model(*eval_t[:3]), eval_t[3], settings.omega)
        val = float(val_loss)
        sched_w.step(val)
        sched_a.step(val)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        history.append({"epoch": epoch, "train": float(np.mean(losses)), "val": val, "val_crps": float(val_crps),
                        "lr": opt_w.param_groups[0]["lr"], "seconds": time.perf_counter() - tic})
        if not math.isfinite(val):
            raise ValueError(f"training diverged at epoch {epoch} (loss {val}); lower the learning rate")
        if beat is not None:
            beat.update(epoch / settings.epochs, f"epoch {epoch}/{settings.epochs}, validation loss {val:.4f}")
        if on_epoch:
            on_epoch(history)
    model.use_generator(None)
    fusion = dict(zip(("static", "history", "forecasts"), model.fusion.detach().cpu().numpy().round(6).tolist()))
    if not config.use_static:
        fusion["static"] = 0.0
    return TrainedPTN(config, _state_arrays(model), scale, history, _arch_weights(model), fusion, device,
                      time.perf_counter() - start, settings)


def _step(model, optimiser, tensors, index, settings: PTNTrainParams) -> float:
    """One optimiser step; a heartbeat (``runtime.beat``) so a Stop ends training within a step."""
    torch = _torch()
    runtime.beat()
    idx = torch.as_tensor(index, device=tensors[0].device)
    static, history, forecasts, target = (t[idx] for t in tensors)
    optimiser.zero_grad(set_to_none=True)
    loss, _ = crps_loss(model(static, history, forecasts), target, settings.omega)
    loss.backward()
    optimiser.step()
    return float(loss.detach())


def load_module(trained: TrainedPTN, device: str = "auto"):
    """The network on ``device``, whatever device it was trained on (the weights are stored as numpy arrays)."""
    torch = _torch()
    device = pick_device(device)
    model = build(trained.config).to(device)
    model.load_state_dict({k: torch.as_tensor(v, device=device) for k, v in trained.state.items()})
    return model.eval()


def predict(trained: TrainedPTN, windows: Windows, batch: int = 2048, device: str = "auto",
            module=None) -> np.ndarray:
    """Sorted quantiles of x, (N, 16, 111) in original units, at levels (j − ½)/111."""
    torch = _torch()
    model = module if module is not None else load_module(trained, device)
    dev = next(model.parameters()).device
    out = []
    with torch.no_grad():
        for start in range(0, windows.n, batch):
            runtime.beat()
            part = windows.take(np.arange(start, min(start + batch, windows.n)))
            static, history, forecasts, _ = _tensors(part, trained.scale, str(dev))
            out.append(model(static, history, forecasts).detach().cpu().numpy())
    q = np.concatenate(out) if out else np.zeros((0, trained.config.horizon, trained.config.quantiles))
    return np.sort(trained.scale.denormalise(q.astype(np.float64)), axis=-1)


def raw_order_penalty(trained: TrainedPTN, windows: Windows, module=None) -> float:
    """Eq. 5.8 on the unsorted outputs (normalised scale): how far training alone made them monotone."""
    torch = _torch()
    model = module if module is not None else load_module(trained)
    dev = next(model.parameters()).device
    with torch.no_grad():
        static, history, forecasts, _ = _tensors(windows, trained.scale, str(dev))
        q = model(static, history, forecasts).detach().cpu().numpy()
    return scores.order_penalty(q)


# ----------------------------------------------------------------------------------------------- saving

def to_arrays(trained: TrainedPTN, prefix: str = "ptn/") -> dict:
    """Plain numpy arrays (an .npz needs no pickle and no torch to read): weights plus a JSON description."""
    meta = {"config": asdict(trained.config), "scale": asdict(trained.scale), "history": trained.history,
            "arch_weights": trained.arch_weights, "fusion": trained.fusion, "device": trained.device,
            "seconds": trained.seconds, "settings": asdict(trained.settings)}
    arrays = {f"{prefix}state/{k}": v for k, v in trained.state.items()}
    arrays[f"{prefix}meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    return arrays


def from_arrays(arrays, prefix: str = "ptn/") -> TrainedPTN:
    meta = json.loads(bytes(np.asarray(arrays[f"{prefix}meta"], dtype=np.uint8)).decode())
    state_prefix = f"{prefix}state/"
    state = {k[len(state_prefix):]: np.asarray(arrays[k]) for k in arrays.keys() if k.startswith(state_prefix)}
    return TrainedPTN(PTNParams.from_dict(meta["config"]), state, ScaleInfo(**meta["scale"]), meta["history"],
                      meta["arch_weights"], meta["fusion"], meta["device"], meta["seconds"],
                      PTNTrainParams.from_dict(meta["settings"]))


def save(trained: TrainedPTN, path) -> None:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **to_arrays(trained))
    with open(path, "wb") as handle:
        handle.write(buffer.getvalue())


def load(path) -> TrainedPTN:
    with np.load(path, allow_pickle=False) as arrays:
        return from_arrays(arrays)
