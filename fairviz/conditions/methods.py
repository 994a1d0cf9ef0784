"""The nine debiasing methods compared in [5] (§4.1, Appendices C–D),
over the paper's backbone at a CPU-affordable size: fixed features → 2 tanh layers → class logits, Adam, early
stopping on dev (the epoch with the smallest dev DTO is kept).

- Vanilla: cross-entropy.
- DS (downsampling): keep ⌊r·n_c⌋ rows of every group of class c, r = min_{c,g} n_{c,g}/n_c (groups equal
  within each class, class ratio kept). An empty cell empties the training set: the method fails.
- RW (reweighting, joint): w_{c,g} = n / (K·n_{c,g}), K the non-empty cells — the weighted cells are uniform and
  the weights sum to n. RW (stratified): w_{c,g} = n_c / (G_c·n_{c,g}) — groups uniform within each class, the
  weighted class shares equal the data's.
- ADV: a discriminator predicts z from the last hidden layer through gradient reversal with weight λ_adv.
- DADV: three sub-discriminators, plus λ_diverse × the squared cross-covariance of their hidden layers (so each
  looks at a different aspect of z).
- FairBatch: each epoch, the sampling share of every group within a class moves by α·(L_{c,g} − L_c) (equal
  opportunity); needs every group present in every class.
- EO_CLA: cross-entropy + λ·mean_{c,g} |L_{c,g} − L_c|; EO_GLB: cross-entropy + λ·mean_{c,g} |L_{c,g} − L| (batch
  means). The paper writes sums; a sum grows with the number of cells (56 on Bios), which is why the authors' λ
  grids for Bios reach 1e-4 — the mean keeps one λ meaningful across data sets.
- INLP: train Vanilla, then repeatedly fit a linear probe for z on the last hidden layer and project onto its
  null space; a linear softmax layer is refit on the projected representation.

Randomness: a local ``torch.Generator`` / ``np.random.default_rng`` seeded per run; tensors live on the model's
device (``cuda`` when available).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

METHODS = ("vanilla", "ds", "rw", "rw_stratified", "adv", "dadv", "fairbatch", "eo_cla", "eo_glb", "inlp")
METHOD_NAMES = {"vanilla": "Vanilla", "ds": "DS", "rw": "RW", "rw_stratified": "RW (stratified)", "adv": "ADV",
                "dadv": "DADV", "fairbatch": "FairBatch", "eo_cla": "EO_CLA", "eo_glb": "EO_GLB", "inlp": "INLP"}
DEFAULT_METHODS = ("vanilla", "ds", "rw", "eo_glb")

# hyperparameter grids: "small" (default, CPU) and "wide" (more values over the paper's ranges)
PAPER_RANGES = {"adv": "λ_adv ∈ [1e-3, 1e3], 60 trials", "dadv": "λ_adv as ADV, λ_diverse ∈ [1e-1, 1e5], 60 trials",
                "fairbatch": "α ∈ [1e-3, 1e1], 40 trials", "eo_cla": "λ ∈ [1e-3, 1e1], 40 trials",
                "eo_glb": "λ ∈ [1e-3, 1e1], 40 trials", "inlp": "300 linear SVM probes"}
GRIDS = {
    "small": {"adv": [{"lambda_adv": 1.0}], "dadv": [{"lambda_adv": 1.0, "lambda_diverse": 0.1}],
              "fairbatch": [{"alpha": 0.1}], "eo_cla": [{"lam": 1.0}], "eo_glb": [{"lam": 1.0}],
              "inlp": [{"probes": 10}]},
    "wide": {"adv": [{"lambda_adv": v} for v in (0.1, 0.3, 1.0, 3.0)],
             "dadv": [{"lambda_adv": v, "lambda_diverse": w} for v in (0.3, 1.0, 3.0) for w in (0.1, 10.0)],
             "fairbatch": [{"alpha": v} for v in (0.01, 0.03, 0.1, 0.3)],
             "eo_cla": [{"lam": v} for v in (0.1, 0.3, 1.0, 3.0)], "eo_glb": [{"lam": v} for v in (0.1, 0.3, 1.0, 3.0)],
             "inlp": [{"probes": v} for v in (5, 10, 20)]},
}
Tick = Callable[[str], None]


class MethodFailed(ValueError):
    """The method cannot train on these data (an empty cell for DS or FairBatch): no result, as in the paper."""


@dataclass(frozen=True)
class DebiasTrainParams:
    hidden: int = 64
    layers: int = 2
    epochs: int = 20
    patience: int = 3
    batch: int = 1024
    lr: float = 3e-3
    device: str | None = None
    threads: int | None = 1         # intra-op CPU threads while training: small MLPs gain nothing from more,
                                    # and on a shared CPU extra threads spin and slow every run down many-fold

    def to_dict(self) -> dict:
        return {"hidden": self.hidden, "layers": self.layers, "epochs": self.epochs, "patience": self.patience,
                "batch": self.batch, "lr": self.lr}


@dataclass
class Trained:
    method: str
    config: dict
    predict: Callable[[np.ndarray], np.ndarray]      # features → class index
    represent: Callable[[np.ndarray], np.ndarray]    # features → last hidden layer (INLP: projected)
    log_proba: Callable[[np.ndarray], np.ndarray]    # features → log class probabilities
    epochs: int
    seconds: float
    history: list = field(default_factory=list)      # dev DTO per epoch


def cell_losses(trained: Trained, split, n_classes: int, n_groups: int) -> np.ndarray:
    """Mean cross-entropy of every (class, group) cell of a split (NaN for an empty cell)."""
    loss = -trained.log_proba(split.X)[np.arange(split.n), split.y]
    out = np.full((n_classes, n_groups), np.nan)
    for c in range(n_classes):
        for g in range(n_groups):
            rows = (split.y == c) & (split.z == g)
            if rows.any():
                out[c, g] = loss[rows].mean()
    return out


def effective_batch(batch: int, n: int) -> int:
    """The batch size, shrunk on small training sets so an epoch still has at least 16 steps."""
    return int(min(batch, max(32, -(-n // 16))))


def config_label(method: str, config: dict) -> str:
    names = {"lambda_adv": "λ_adv", "lambda_diverse": "λ_div", "alpha": "α", "lam": "λ", "probes": "probes"}
    return ", ".join(f"{names.get(k, k)}={v:g}" for k, v in config.items()) or "—"


def grid(method: str, size: str = "small") -> list[dict]:
    return GRIDS[size].get(method, [{}])


# ------------------------------------------------------------------------------------------ sampling and weights

def downsample(y: np.ndarray, z: np.ndarray, n_classes: int, n_groups: int, rng: np.random.Generator) -> np.ndarray:
    """DS: groups equal within every class, the class ratio kept."""
    present = np.unique(y)
    counts = np.array([[np.sum((y == c) & (z == g)) for g in range(n_groups)] for c in range(n_classes)])
    n_c = counts.sum(1)
    groups_seen = np.unique(z)
    r = min(counts[c, g] / n_c[c] for c in present for g in groups_seen)
    keep = []
    for c in present:
        k = int(np.floor(r * n_c[c]))
        for g in groups_seen:
            rows = np.flatnonzero((y == c) & (z == g))
            keep.append(rng.permutation(rows)[:k])
    out = np.concatenate(keep) if keep else np.zeros(0, int)
    if out.size == 0:
        raise MethodFailed("DS: a (class, group) cell of the training data is empty, so downsampling keeps no rows.")
    return np.sort(out)


def instance_weights(y: np.ndarray, z: np.ndarray, n_classes: int, n_groups: int, kind: str = "joint") -> np.ndarray:
    counts = np.zeros((n_classes, n_groups))
    np.add.at(counts, (y, z), 1)
    n = y.size
    if kind == "joint":
        k = np.count_nonzero(counts)
        w = np.divide(n, k * counts, out=np.zeros_like(counts), where=counts > 0)
    elif kind == "stratified":
        n_c = counts.sum(1, keepdims=True)
        g_c = np.count_nonzero(counts, axis=1)[:, None]
        w = np.divide(n_c, g_c * counts, out=np.zeros_like(counts), where=counts > 0)
    else:
        raise ValueError(kind)
    return w[y, z]


# ------------------------------------------------------------------------------------------ training

def train(method: str, config: dict, train_split, dev_split, n_classes: int, n_groups: int,
          settings: DebiasTrainParams = DebiasTrainParams(), seed: int = 0, tick: Tick | None = None) -> Trained:
    import torch
    previous = torch.get_num_threads()
    if settings.threads:
        torch.set_num_threads(settings.threads)
    try:
        return _train(method, config, train_split, dev_split, n_classes, n_groups, settings, seed, tick)
    finally:
        torch.set_num_threads(previous)


def _train(method, config, train_split, dev_split, n_classes, n_groups, settings, seed, tick) -> Trained:
    import torch
    from torch import nn

    from fairviz.conditions.metrics import confusion, scores_of

    if method not in METHODS:
        raise ValueError(f"unknown method '{method}'")
    started = time.perf_counter()
    device = settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
    gen = torch.Generator().manual_seed(int(seed))
    rng = np.random.default_rng(seed)
    X, y, z = train_split.X, train_split.y, train_split.z
    if method == "ds":
        keep = downsample(y, z, n_classes, n_groups, rng)
        X, y, z = X[keep], y[keep], z[keep]
    if y.size == 0:
        raise MethodFailed("The training set is empty.")
    weights = None
    if method in ("rw", "rw_stratified"):
        weights = instance_weights(y, z, n_classes, n_groups, "joint" if method == "rw" else "stratified")
    if method == "fairbatch":
        present = np.unique(y)
        for c in present:
            if np.unique(z[y == c]).size < n_groups:
                raise MethodFailed("FairBatch needs every group in every class; a (class, group) cell of the "
                                   "training data is empty.")

    model = _Backbone(X.shape[1], settings.hidden, settings.layers, n_classes, n_groups, method, config, gen).to(device)
    optimiser = torch.optim.Adam(model.parameters(), lr=settings.lr, foreach=True)
    Xt = torch.as_tensor(X, dtype=torch.float32, device=device)
    yt = torch.as_tensor(y, dtype=torch.long, device=device)
    zt = torch.as_tensor(z, dtype=torch.long, device=device)
    wt = None if weights is None else torch.as_tensor(weights, dtype=torch.float32, device=device)
    Xd = torch.as_tensor(dev_split.X, dtype=torch.float32, device=device)
    ce = nn.CrossEntropyLoss(reduction="none")
    batch = effective_batch(settings.batch, y.size)
    sampler = _FairBatch(y, z, n_classes, n_groups, config.get("alpha", 0.1), rng) if method == "fairbatch" else None

    def dev_dto() -> float:
        with torch.no_grad():
            hat = model(Xd)[0].argmax(1).cpu().numpy()
        s = scores_of(confusion(dev_split.y, hat, dev_split.z, n_classes, n_groups))
        return s.dto if np.isfinite(s.dto) else np.hypot(1 - s.accuracy, 1.0)

    best, best_state, since, history, epoch = np.inf, None, 0, [], 0
    for epoch in range(1, settings.epochs + 1):
        model.train()
        if sampler is not None:
            with torch.no_grad():
                losses = ce(model(Xt)[0], yt).cpu().numpy()
            order = torch.as_tensor(sampler.epoch_indices(losses), device=device)
        else:
            order = torch.randperm(y.size, generator=gen, device="cpu").to(device)   # same order on every device
        for start in range(0, order.numel(), batch):
            idx = order[start:start + batch]
            logits, hidden, disc = model(Xt[idx], adversary=True)
            per_row = ce(logits, yt[idx])
            loss = (per_row * wt[idx]).mean() if wt is not None else per_row.mean()
            if method in ("eo_cla", "eo_glb"):
                loss = loss + config.get("lam", 1.0) * _loss_difference(per_row, yt[idx], zt[idx], n_groups,
                                                                        by_class=method == "eo_cla")
            if disc:
                for head_logits, _ in disc:
                    loss = loss + ce(head_logits, zt[idx]).mean()
                if method == "dadv":
                    loss = loss + config.get("lambda_diverse", 0.1) * _diversity([h for _, h in disc])
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
        model.eval()
        value = dev_dto()
        history.append(value)
        if tick is not None:
            tick(f"epoch {epoch}")
        if value < best - 1e-6:
            best, since = value, 0
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            since += 1
            if since >= settings.patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()

    def represent(features: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model(torch.as_tensor(features, dtype=torch.float32, device=device))[1].cpu().numpy()

    def log_proba(features: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = model(torch.as_tensor(features, dtype=torch.float32, device=device))[0]
            return torch.log_softmax(logits, 1).cpu().numpy()

    def predict(features: np.ndarray) -> np.ndarray:
        return log_proba(features).argmax(1)

    if method == "inlp":
        projection, head = inlp(represent(X), y, z, represent(dev_split.X), dev_split.z,
                                probes=int(config.get("probes", 10)), seed=seed)

        def represent(features: np.ndarray, _base=represent) -> np.ndarray:   # noqa: F811
            return _base(features) @ projection

        def log_proba(features: np.ndarray) -> np.ndarray:                     # noqa: F811
            out = np.full((features.shape[0], n_classes), -np.inf)
            out[:, head.classes_] = head.predict_log_proba(represent(features))
            return out

        def predict(features: np.ndarray) -> np.ndarray:                       # noqa: F811
            return log_proba(features).argmax(1)

    return Trained(method, dict(config), predict, represent, log_proba, epoch, time.perf_counter() - started, history)


def _loss_difference(per_row, y, z, n_groups: int, by_class: bool):
    """Mean over the cells present in the batch of |L_{c,g} − L_c| (by class) or |L_{c,g} − L|."""
    import torch
    cell = y * n_groups + z
    n_cells = int(cell.max().item()) + 1
    sums = torch.zeros(n_cells, device=per_row.device).index_add(0, cell, per_row)
    counts = torch.zeros(n_cells, device=per_row.device).index_add(0, cell, torch.ones_like(per_row))
    present = counts > 0
    cell_mean = sums[present] / counts[present]
    if not by_class:
        return (cell_mean - per_row.mean()).abs().mean()
    classes = torch.arange(n_cells, device=per_row.device)[present] // n_groups
    class_sum = torch.zeros(n_cells // n_groups + 1, device=per_row.device).index_add(0, y, per_row)
    class_n = torch.zeros(n_cells // n_groups + 1, device=per_row.device).index_add(0, y, torch.ones_like(per_row))
    class_mean = class_sum / class_n.clamp(min=1)
    return (cell_mean - class_mean[classes]).abs().mean()


def _diversity(hiddens):
    """Squared Frobenius norm of the cross-covariances of the sub-discriminators' hidden layers."""
    total = 0.0
    centred = [h - h.mean(0, keepdim=True) for h in hiddens]
    centred = [h / (h.norm(dim=0, keepdim=True) + 1e-6) for h in centred]
    for i in range(len(centred)):
        for j in range(i + 1, len(centred)):
            total = total + (centred[i].T @ centred[j]).pow(2).sum()
    return total


class _FairBatch:
    """Per-class group sampling shares, moved toward equal per-cell losses every epoch (equal opportunity)."""

    def __init__(self, y, z, n_classes, n_groups, alpha, rng):
        self.y, self.z, self.alpha, self.rng = y, z, float(alpha), rng
        self.n_groups = n_groups
        self.classes = np.unique(y)
        self.rows = {(c, g): np.flatnonzero((y == c) & (z == g)) for c in self.classes for g in range(n_groups)}
        counts = np.array([[self.rows[(c, g)].size for g in range(n_groups)] for c in self.classes], float)
        self.share = counts / counts.sum(1, keepdims=True)
        self.n_c = counts.sum(1).astype(int)
        self.history = [self.share.copy()]

    def epoch_indices(self, losses: np.ndarray) -> np.ndarray:
        for i, c in enumerate(self.classes):
            cell_loss = np.array([losses[self.rows[(c, g)]].mean() for g in range(self.n_groups)])
            class_loss = losses[self.y == c].mean()
            self.share[i] = np.clip(self.share[i] + self.alpha * (cell_loss - class_loss), 1e-3, None)
            self.share[i] /= self.share[i].sum()
        self.history.append(self.share.copy())
        parts = []
        for i, c in enumerate(self.classes):
            picks = self.rng.multinomial(self.n_c[i], self.share[i])
            for g, k in enumerate(picks):
                rows = self.rows[(c, g)]
                parts.append(rows[self.rng.integers(0, rows.size, k)])
        return self.rng.permutation(np.concatenate(parts))


def _module_classes():
    import torch
    from torch import nn

    class GradReverse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.scale = scale
            return x.view_as(x)

        @staticmethod
        def backward(ctx, grad):
            return -ctx.scale * grad, None

    return torch, nn, GradReverse


def _Backbone(d_in, hidden, layers, n_classes, n_groups, method, config, gen):
    torch, nn, GradReverse = _module_classes()

    class Backbone(nn.Module):
        def __init__(self):
            super().__init__()
            dims = [d_in] + [hidden] * layers
            self.encoder = nn.Sequential(*[m for a, b in zip(dims, dims[1:]) for m in (nn.Linear(a, b), nn.Tanh())])
            self.head = nn.Linear(dims[-1], n_classes)
            k = {"adv": 1, "dadv": 3}.get(method, 0)
            self.discriminators = nn.ModuleList(
                [nn.ModuleDict({"hidden": nn.Linear(dims[-1], hidden), "out": nn.Linear(hidden, n_groups)})
                 for _ in range(k)])
            self.scale = float(config.get("lambda_adv", 1.0))
            with torch.no_grad():                       # seeded initialisation, no process-wide seed
                for mod in self.modules():
                    if isinstance(mod, nn.Linear):
                        bound = 1 / np.sqrt(mod.in_features)
                        mod.weight.uniform_(-bound, bound, generator=gen)
                        mod.bias.uniform_(-bound, bound, generator=gen)

        def forward(self, x, adversary: bool = False):
            h = self.encoder(x)
            out = []
            if adversary and len(self.discriminators):
                reversed_h = GradReverse.apply(h, self.scale)
                for disc in self.discriminators:
                    hd = torch.tanh(disc["hidden"](reversed_h))
                    # the diversity penalty trains the discriminators only, not the encoder
                    out.append((disc["out"](hd), torch.tanh(disc["hidden"](h.detach()))))
            return self.head(h), h, out

    return Backbone()


# ------------------------------------------------------------------------------------------ INLP

def inlp(h_train, y_train, z_train, h_dev, z_dev, probes: int = 10, seed: int = 0, tolerance: float = 0.01):
    """Iterative null-space projection: returns (projection matrix P, a softmax classifier on h·P).

    Each probe is fit with (class, group)-balanced weights, so it finds group information that is not merely
    the class seen through stereotyped data (the authors' scripts probe by class for the same reason). Stops early
    once a fresh probe's balanced accuracy on dev is within ``tolerance`` of chance."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):          # small dense fits: extra BLAS threads only spin on a shared CPU
        return _inlp(h_train, y_train, z_train, h_dev, z_dev, probes, seed, tolerance)


def _inlp(h_train, y_train, z_train, h_dev, z_dev, probes, seed, tolerance):
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score

    d = h_train.shape[1]
    n_classes, n_groups = int(y_train.max()) + 1, int(max(z_train.max(), z_dev.max())) + 1
    weights = instance_weights(y_train, z_train, n_classes, n_groups, "joint")
    directions = []
    projection = np.eye(d)
    for _ in range(probes):
        probe = LogisticRegression(C=1.0, max_iter=500, random_state=seed)
        probe.fit(h_train @ projection, z_train, sample_weight=weights)
        if balanced_accuracy_score(z_dev, probe.predict(h_dev @ projection)) <= 1 / n_groups + tolerance:
            break
        directions.append(probe.coef_ @ projection)   # the probe's direction in the original space
        basis = np.linalg.svd(np.vstack(directions), full_matrices=False)[2]
        projection = np.eye(d) - basis.T @ basis
    head = LogisticRegression(max_iter=1000, random_state=seed).fit(h_train @ projection, y_train)
    return projection, head
