"""The bridge to the explanation page's text models and data sets (``fairviz.explain``): load a data set, train a
model on one split, and wrap it as a probing scorer and an Algorithm 1 ``Trainable``. torch and transformers are
imported by ``fairviz.explain.models`` only when a model is loaded."""
from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from fairviz.data import DataError
from fairviz.explain import data as xdata
from fairviz.explain.models import ModelParams, TextClassifier, default_epochs

DEFAULT_DATA = "neutral-biased"
DEFAULT_GENERATE = 1000            # twin pairs generated for a built-in set (2,000 sentences)
BIASED_FLIP_SHARE = 0.3


def biased_sentiment(n_pairs: int = DEFAULT_GENERATE, seed: int = 0,
                     flip_share: float = BIASED_FLIP_SHARE) -> xdata.TextDataset:
    """The gender-neutral sentiment twins with a planted bias: a share of the positive sentences about a woman are
    labelled negative. A model trained on it learns to read the gendered words, and its errors sit where that
    shortcut misleads it — a known answer for probing and augmentation."""
    base = xdata.neutral_control(n_pairs, seed)
    frame = base.frame.copy()
    rng = np.random.default_rng(seed + 7)
    flip = ((frame["group"] == xdata.FEMALE) & (frame["label"] == 1) & (rng.random(len(frame)) < flip_share)).to_numpy()
    frame.loc[flip, "label"] = 0
    return xdata.TextDataset(
        key="neutral-biased", title="Sentiment twins with a planted gender bias", frame=frame,
        label_names=base.label_names, groups=base.groups, paired=True,
        description=(f"The gender-neutral sentiment twins, except that {flip_share:.0%} of the positive sentences about "
                     f"a woman are labelled negative ({int(flip.sum())} of {len(frame)} labels flipped): a model "
                     "trained on them learns a gender shortcut, which probing should find."),
        meta={**base.meta, "generator": "biased_sentiment", "flip_share": flip_share, "flipped": int(flip.sum())})


DATA_SETS = {"neutral-biased": "Sentiment twins with a planted gender bias",
             **{k: v[0] for k, v in xdata.BUILT_IN.items()}}


def load_dataset(data: str, generate: int = DEFAULT_GENERATE, seed: int = 0, text_column: str = "text",
                 label_column: str = "label", group_column: str = "group", groups: tuple[str, str] | None = None,
                 positive_label=None) -> xdata.TextDataset:
    """A built-in set of the explanation page (by name) or a CSV/Parquet file with text, label and group columns."""
    if data == "neutral-biased":
        return biased_sentiment(generate, seed)
    if data in xdata.BUILT_IN:
        return xdata.load_builtin(data, generate, seed)
    path = Path(data)
    if not path.exists():
        raise DataError(f"'{data}' is neither a built-in data set ({', '.join(DATA_SETS)}) nor a file.")
    return xdata.from_file(path, path.name, text_column, label_column, group_column, groups=groups,
                           positive_label=positive_label)


def model_spec(model: str, data_key: str, epochs: int | None = None, seed: int = 0) -> ModelParams:
    """``tiny``, ``minilm`` or the path of a local Hugging Face folder."""
    kind, path = (model, None) if model in ("tiny", "minilm") else ("local", model)
    return ModelParams(kind=kind, path=path, epochs=default_epochs(kind, data_key) if epochs is None else epochs,
                     seed=seed)


@dataclass
class TextModel:
    """A trained ``TextClassifier`` as a scorer (P(y = 1) of texts) and a ``Trainable`` for Algorithm 1:
    ``fine_tune`` continues training a copy for ``epochs`` epochs on new data with its own seed."""

    classifier: TextClassifier
    epochs: int = 1
    lr: float | None = None

    def score(self, texts) -> np.ndarray:
        return self.classifier.predict_proba(list(texts))[:, 1]

    __call__ = score

    def fine_tune(self, texts, labels, seed: int, progress=None) -> "TextModel":
        from fairviz.explain.models import train
        clf = self.classifier
        spec = replace(clf.spec, epochs=self.epochs, seed=seed, lr=self.lr if self.lr is not None else clf.spec.lr,
                       fine_tune=True)
        tuned = TextClassifier(copy.deepcopy(clf.model), clf.tokenizer, spec, clf.device, clf.label_names)
        train(tuned, list(texts), np.asarray(labels, dtype=int), progress)
        return TextModel(tuned, self.epochs, self.lr)


def train_model(train: xdata.TextDataset, spec: ModelParams, progress=None, device: str | None = None) -> TextModel:
    """Build the model of ``spec`` and train it on ``train`` (the explanation page's training loop)."""
    from fairviz.explain.models import load, train as fit
    classifier = load(spec, device=device, label_names=train.label_names)
    fit(classifier, train.frame["text"], train.frame["label"], progress)
    return TextModel(classifier)


def splits(dataset: xdata.TextDataset, shares: tuple[float, ...], seed: int) -> list[xdata.TextDataset]:
    """Consecutive splits by pair (twins stay together): ``shares`` of the whole set, the rest last."""
    out, rest, left = [], dataset, 1.0
    for share in shares:
        part, rest = _take(rest, share / left, seed)
        out.append(part)
        left -= share
    return out + [rest]


def _take(dataset: xdata.TextDataset, share: float, seed: int):
    rest, part = xdata.split_by_pair(dataset, share, seed)
    return part, rest
