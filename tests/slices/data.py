"""Synthetic binary predictions for the slice tests: independent attributes, optionally a planted slice."""
from __future__ import annotations

import numpy as np
import pandas as pd

from fairviz.data.model import ColumnMapping
from fairviz.data.validation import build_predictions

ATTRIBUTES = {"sex": ("F", "M"), "age": ("18-25", "26-40", "41-65"), "region": ("N", "S", "E", "W")}


def frame(n: int = 20_000, seed: int = 0, planted: bool = False, attributes=ATTRIBUTES) -> pd.DataFrame:
    """Labels and scores independent of the attributes (null data); ``planted``: among negatives with sex=F and
    age=18-25 the false positive rate is twice the rest's, while sex alone and age alone have equal rates."""
    rng = np.random.default_rng(seed)
    data = {a: rng.choice(values, n) for a, values in attributes.items()}
    y = rng.random(n) < 0.4
    fpr = np.full(n, 0.15)
    if planted:
        # cell FPRs with every marginal of sex and of age at 0.14 and the planted cell at twice the rest (0.24
        # against 0.12): f(F,Y) + f(M,Y) = f(F,O) + f(M,O) and f(F,Y) + 2f(F,O) = f(M,Y) + 2f(M,O)
        female, young = data["sex"] == "F", data["age"] == "18-25"
        fpr = np.select([female & young, female & ~young, ~female & young], [0.24, 0.09, 0.04], 0.19)
    positive = rng.random(n) < np.where(y, 0.7, fpr)
    score = np.where(positive, rng.uniform(0.5, 1.0, n), rng.uniform(0.0, 0.5, n))
    return pd.DataFrame({**data, "label": y.astype(int), "score": score})


def predictions(data: pd.DataFrame, groups=tuple(ATTRIBUTES)):
    return build_predictions(data, ColumnMapping(label="label", score="score", groups=tuple(groups)), source="test")


WIDE = {**ATTRIBUTES, "device": tuple("abcdef"), "channel": tuple("uvwxyz"), "plan": tuple("pqrstu")}


def regression_frame(n: int = 20_000, seed: int = 0, planted: bool = False, attributes=ATTRIBUTES) -> pd.DataFrame:
    """A target and a prediction whose residual is independent of the attributes (null data); ``planted``: for sex=F
    and age=18-25 the prediction is 0.6 too high on average, while sex alone and age alone are shifted less."""
    rng = np.random.default_rng(seed)
    data = {a: rng.choice(values, n) for a, values in attributes.items()}
    target = rng.normal(50, 10, n)
    shift = np.zeros(n)
    if planted:
        shift = np.where((data["sex"] == "F") & (data["age"] == "18-25"), 0.6, 0.0)
    prediction = target + rng.normal(0, 2, n) + shift
    return pd.DataFrame({**data, "target": target, "prediction": prediction})


def regression_predictions(data: pd.DataFrame, groups=tuple(ATTRIBUTES)):
    return build_predictions(data, ColumnMapping(label="target", score="prediction", groups=tuple(groups),
                                                 task="regression"), source="test")
