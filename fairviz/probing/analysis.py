"""The probing and augmentation pipelines ([1] §7–8) on the explanation page's text models: split → train →
probe / augment.

One function per command, shared by the CLI (``fairviz probe``, ``fairviz augment``), the page's "Compute now" and
``scripts/make_probing_demo.py``, so all three produce the same result for the same settings.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

from fairviz.explain import ModelParams, TextDataset
from fairviz.probing.augment import AugmentParams, Split, augment
from fairviz.probing.probe import ProbeParams, probe
from fairviz.probing.results import AugmentResult, ProbeResult
from fairviz.probing.textmodel import TextModel, splits, train_model

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class RunProtocol:
    """How the data are split and the model is trained (hashable: part of every cache key)."""
    pool_share: float = 0.5            # probing: share of pairs held out and probed (the rest trains the model)
    test_share: float = 0.3            # augmentation: held-out test set
    validation_share: float = 0.3      # augmentation: the selection pool V
    fine_tune_epochs: int = 1          # [1] §8.3: one epoch
    fine_tune_lr: float | None = None  # None → the model's own learning rate (the paper's 2e-5 is for RoBERTa)
    split_seed: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


def _meta(dataset: TextDataset, spec: ModelParams, protocol: RunProtocol, model: TextModel, sizes: dict) -> dict:
    return {"data": {"key": dataset.key, "title": dataset.title, "n": dataset.n, "groups": list(dataset.groups),
                     "label_names": list(dataset.label_names), "fingerprint": dataset.fingerprint},
            "model": {"kind": spec.kind, "path": spec.path, "description": spec.describe(),
                      "parameters": model.classifier.n_parameters()},
            "protocol": protocol.to_dict(), "sizes": sizes}


def _sub(progress: Progress | None, start: float, span: float) -> Progress:
    def update(fraction: float, message: str = "") -> None:
        if progress is not None:
            progress(start + span * min(max(fraction, 0.0), 1.0), message)
    return update


def run_probe(dataset: TextDataset, spec: ModelParams, settings: ProbeParams = ProbeParams(),
              protocol: RunProtocol = RunProtocol(), progress: Progress | None = None,
              device: str | None = None) -> ProbeResult:
    pool, train = splits(dataset, (protocol.pool_share,), protocol.split_seed)
    model = train_model(train, spec, _sub(progress, 0.0, 0.5), device)
    meta = _meta(dataset, spec, protocol, model, {"train": train.n, "pool": pool.n})
    frame = pool.frame
    return probe(frame["text"], frame["label"], frame["group"], model.score, settings, _sub(progress, 0.5, 0.5), meta)


def run_augment(dataset: TextDataset, spec: ModelParams, settings: AugmentParams = AugmentParams(),
                protocol: RunProtocol = RunProtocol(), progress: Progress | None = None,
                device: str | None = None) -> AugmentResult:
    test, validation, train = splits(dataset, (protocol.test_share, protocol.validation_share), protocol.split_seed)
    model = train_model(train, spec, _sub(progress, 0.0, 0.2), device)
    model = TextModel(model.classifier, protocol.fine_tune_epochs, protocol.fine_tune_lr)
    meta = _meta(dataset, spec, protocol, model, {"train": train.n, "validation": validation.n, "test": test.n})
    return augment(model, Split.of(train.frame), Split.of(validation.frame), Split.of(test.frame), settings,
                   _sub(progress, 0.2, 0.8), meta)
