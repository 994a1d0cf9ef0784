"""Tiny deterministic stand-in text models with the probing scoring interface (list of texts → P(y = 1)).

They are real scorers (they read the words), not mocks of a result: one ignores every gendered and identity word,
one adds a fixed push when a female word is present."""
from __future__ import annotations

import hashlib
import re

import numpy as np

from fairviz.explain.data import SENTIMENT_VERBS
from fairviz.probing.lexicon import IDENTITY_TERMS, swap_map

POSITIVE, NEGATIVE = set(SENTIMENT_VERBS[1]), set(SENTIMENT_VERBS[0])
IGNORED = set(swap_map()) | {w for t in IDENTITY_TERMS for w in t.split()}
FEMALE = {"she", "her", "herself", "woman", "women", "girl", "mother", "sister", "daughter", "wife", "queen",
          "aunt", "niece", "lady", "actress", "mrs.", "madam", "grandmother", "princess"}


def _words(text: str) -> list[str]:
    return re.findall(r"[\w.']+", text.lower())


def _jitter(words: list[str]) -> float:
    """A deterministic value in [−0.35, 0.35] from the words the model reads (so residuals spread out)."""
    digest = hashlib.blake2b(" ".join(words).encode(), digest_size=4).digest()
    return (int.from_bytes(digest, "little") / 2 ** 32 - 0.5) * 0.7


def blind_scorer(texts) -> np.ndarray:
    """Sentiment from the verb plus jitter from the non-gendered words: blind to every listed word."""
    out = []
    for text in texts:
        words = [w for w in _words(text) if w not in IGNORED]
        base = 0.75 if POSITIVE & set(words) else 0.25
        out.append(float(np.clip(base + _jitter(words), 0.0, 1.0)))
    return np.array(out)


def gender_keyed_scorer(texts, push: float = 0.4) -> np.ndarray:
    """The blind model plus ``push`` whenever a female word appears: keyed on gender words."""
    blind = blind_scorer(texts)
    female = np.array([bool(FEMALE & set(_words(t))) for t in texts])
    return np.clip(blind + push * female, 0.0, 1.0)


class BagOfWords:
    """A bag-of-words logistic regression (the spec's CPU surrogate for fine-tuning, D-35): ``fine_tune`` refits on
    the new training set. Deterministic, so the seeds differ only through the selections."""

    def __init__(self, texts, labels, c: float = 0.05):
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.linear_model import LogisticRegression
        self.c = c
        self.vectorizer = CountVectorizer(token_pattern=r"[\w.']+").fit(texts)
        self.model = LogisticRegression(C=c, max_iter=500).fit(self.vectorizer.transform(texts), labels)

    def score(self, texts) -> np.ndarray:
        return self.model.predict_proba(self.vectorizer.transform(list(texts)))[:, 1]

    def fine_tune(self, texts, labels, seed, progress=None) -> "BagOfWords":
        if progress is not None:
            progress(1.0, "refit")
        return BagOfWords(list(texts), np.asarray(labels), self.c)
