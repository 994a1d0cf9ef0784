"""The tables HydraGAN learns from: a bundled sample (Adult, COMPAS) or any uploaded mixed tabular file.

A ``SynthTable`` holds the cleaned features with the label (what the generator emits) and the group column(s)
(what conditions it). Every blocking problem is one plain sentence in a ``DataError``; rows with missing values are
dropped and counted, id-like and constant columns are left out with a note.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from fairviz.data import INTERSECTION_SEP, DataError, guess_positive_label, label_values, read_table
from fairviz.synth.encoding import MAX_LEVELS, is_categorical

ASSETS = Path(__file__).resolve().parents[2] / "assets"
MIN_ROWS = 50
MAX_ROWS = 200_000                  # a GAN on a shared 2-core server: beyond this, sample the file first
MIN_CONDITION_ROWS = 2
ID_NAMES = {"id", "row_id", "index", "unnamed: 0"}


@dataclass(frozen=True)
class Preset:
    key: str
    title: str
    file: str
    label: str
    groups: tuple[str, ...]
    positive: Any
    drop: tuple[str, ...]
    about: str


PRESETS = {p.key: p for p in [
    Preset("adult", "UCI Adult (census income)", "synth/adult_features.csv", "income_gt_50k", ("sex",), 1, (),
           "Becker & Kohavi (1996), UCI Adult (census income), a seeded sample of 8,000 rows of adult.data with "
           "its features: age, workclass, education, marital status, occupation, relationship, capital gain and "
           "loss, hours per week, race, sex; label: income above $50k (the benefit)."),
    Preset("compas", "ProPublica COMPAS two-year recidivism", "compas.csv", "two_year_recid", ("race",), 0,
           ("id", "score", "decile_score"),
           "ProPublica (Larson et al. 2016), 7,214 defendants in Broward County: age, priors, juvenile felonies, "
           "charge degree, race, sex. The benefit is *no* new charge within two years (label 0), as the thesis "
           "orients COMPAS (§3.4). The COMPAS decile itself is left out: it is the model under audit."),
]}


@dataclass(frozen=True)
class SynthTable:
    features: pd.DataFrame           # features + label, cleaned (no group columns)
    groups: pd.DataFrame             # the group column(s), as text
    label: str
    positive: Any                    # the label value that is the benefit (a positive prediction)
    source: str
    fingerprint: str
    notes: tuple[str, ...] = ()

    @property
    def group_columns(self) -> tuple[str, ...]:
        return tuple(self.groups.columns)

    @property
    def condition_name(self) -> str:
        return INTERSECTION_SEP.join(self.group_columns)

    @property
    def condition(self) -> np.ndarray:
        """One condition value per row: the group, or 'a × b' for the intersection of two columns."""
        values = self.groups.iloc[:, 0].to_numpy(dtype=object)
        for col in self.group_columns[1:]:
            values = values + INTERSECTION_SEP + self.groups[col].to_numpy(dtype=object)
        return values

    @property
    def n(self) -> int:
        return len(self.features)

    @property
    def y(self) -> np.ndarray:
        return (self.features[self.label].to_numpy() == self.positive).astype(np.int8)


def load_preset(key: str) -> tuple[pd.DataFrame, str, Preset]:
    if key not in PRESETS:
        raise DataError(f"Unknown sample '{key}'; use one of: {', '.join(PRESETS)}.")
    preset = PRESETS[key]
    frame, digest = read_table(ASSETS / preset.file)
    return frame.drop(columns=list(preset.drop)), digest, preset


def prepare(frame: pd.DataFrame, label: str, groups: Sequence[str], positive: Any = None, source: str = "upload",
            file_fingerprint: str = "") -> SynthTable:
    """Validate and clean a table for training; raises ``DataError`` with one sentence per blocking problem."""
    groups = tuple(groups)
    columns = list(frame.columns)
    problems = []
    if len(frame) == 0:
        raise DataError(f"'{source}' has no rows.")
    if label not in columns:
        problems.append(f"No label column '{label}'; the file has: {_names(columns)}.")
    if not groups:
        problems.append("Choose one group column (or two, for their intersection).")
    if len(groups) > 2:
        problems.append(f"At most two group columns can form the condition; got {len(groups)}.")
    missing = [g for g in groups if g not in columns]
    if missing:
        problems.append(f"No group column {', '.join(repr(g) for g in missing)}; the file has: {_names(columns)}.")
    if label in groups:
        problems.append(f"'{label}' cannot be both the label and a group column.")
    if len(set(groups)) < len(groups):
        problems.append("The two group columns must differ.")
    if problems:
        raise DataError(problems)
    if len(frame) > MAX_ROWS:
        raise DataError(f"'{source}' has {len(frame):,} rows; training here is limited to {MAX_ROWS:,}. "
                        "Sample the file first.")
    notes = []
    frame = frame.copy()
    for name in [c for c in columns if c != label and c not in groups]:
        series = frame[name]
        if str(name).strip().lower() in ID_NAMES:
            notes.append(f"Column '{name}' looks like a row id and is left out.")
        elif series.nunique(dropna=True) <= 1:
            notes.append(f"Column '{name}' has a single value and is left out.")
        elif not pd.api.types.is_numeric_dtype(series) and series.nunique() > MAX_LEVELS:
            notes.append(f"Column '{name}' is text with {series.nunique():,} distinct values (more than {MAX_LEVELS}) "
                         "and is left out: the generator emits categories, not free text.")
        else:
            continue
        frame = frame.drop(columns=[name])
    before = len(frame)
    frame = frame.dropna()
    if len(frame) < before:
        notes.append(f"{before - len(frame):,} of {before:,} rows have missing values and were dropped.")
    if len(frame) < MIN_ROWS:
        raise DataError(f"Only {len(frame):,} complete rows; at least {MIN_ROWS} are needed to train a generator.")
    values = label_values(frame[label])
    if len(values) != 2:
        shown = ", ".join(map(str, values[:6])) + (" …" if len(values) > 6 else "")
        raise DataError(f"The label '{label}' must have exactly two values; it has {len(values)}: {shown}.")
    if positive is None:
        positive = guess_positive_label(values)
    else:
        match = [v for v in values if str(v) == str(positive)]
        if not match:
            raise DataError(f"The positive label value '{positive}' does not occur in '{label}' "
                            f"(its values: {', '.join(map(str, values))}).")
        positive = match[0]
    group_frame = frame[list(groups)].astype(str)
    for g in groups:
        if group_frame[g].nunique() < 2:
            problems.append(f"The group column '{g}' has a single group ('{group_frame[g].iloc[0]}'): "
                            "there is nothing to compare.")
    if problems:
        raise DataError(problems)
    features = frame.drop(columns=list(groups)).reset_index(drop=True)
    if features.shape[1] < 2:
        raise DataError("Besides the label and the group column(s) the table needs at least one feature column.")
    table = SynthTable(features, group_frame.reset_index(drop=True), label, _plain(positive), source, "", ())
    counts = pd.Series(table.condition).value_counts()
    tiny = counts[counts < MIN_CONDITION_ROWS]
    if len(tiny):
        raise DataError(f"The group(s) {', '.join(repr(t) for t in tiny.index[:5])} have fewer than "
                        f"{MIN_CONDITION_ROWS} rows; merge them or choose another group column.")
    small = counts[counts < 30]
    if len(small):
        notes.append(f"Small groups ({', '.join(f'{k}: {v}' for k, v in small.items())}): the generator sees few "
                     "rows of them, and their fairness metrics are noisy.")
    numeric = [c for c in features.columns if c != label and not is_categorical(features[c])]
    fingerprint = hashlib.blake2b(
        f"{file_fingerprint}|{label}|{groups}|{positive}|{list(features.columns)}".encode(),
        digest_size=16).hexdigest()
    notes.append(f"{len(features):,} rows; {len(numeric)} continuous and {features.shape[1] - 1 - len(numeric)} "
                 f"categorical feature(s); condition: {table.condition_name} ({counts.size} groups).")
    return SynthTable(features, table.groups, label, table.positive, source, fingerprint, tuple(notes))


def load(source: str, label: str | None = None, groups: Sequence[str] | None = None,
         positive: Any = None) -> SynthTable:
    """A preset name ('adult', 'compas') or a path; presets fill in their label, groups and benefit."""
    if source in PRESETS:
        frame, digest, preset = load_preset(source)
        return prepare(frame, label or preset.label, groups or preset.groups,
                       preset.positive if positive is None and (label is None or label == preset.label) else positive,
                       source=preset.file, file_fingerprint=digest)
    frame, digest = read_table(source)
    if label is None or not groups:
        raise DataError("A file needs --label and --group (the label column and one or two group columns).")
    return prepare(frame, label, groups, positive, source=Path(source).name, file_fingerprint=digest)


def _names(columns: list, limit: int = 12) -> str:
    return ", ".join(map(str, columns[:limit])) + (f" … ({len(columns)} in all)" if len(columns) > limit else "")


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value
