"""The Home page's mapping form: which column plays which role, and what the upload means — what the score is the
probability of, which outcome is good for the person, and the score's scale — with the guesses shown and checked.

The roles are guessed once per upload (cached on its hash) and only the columns that can play a role are offered
(numbers as scores, two-valued columns as labels), at most ``MAX_OFFERED`` per role, so a file of 50,000 columns
draws a form that stays responsive. After the predictions are built, the direction check runs
(``fairviz.data.checks``): a score that runs the other way stops with a plain warning and a one-click fix.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd
import streamlit as st

from fairviz.core.markup import md
from fairviz.data import ColumnMapping, DataError, ScoreColumn, build_predictions, guess_mapping, guess_positive_label, label_values
from fairviz.data.checks import ScoreDirectionError
from fairviz.data.model import plain_value
from fairviz.data.roles import (
    MAX_SCANNED,
    distinct_count,
    quantile_level,
    guess_good_outcome,
    looks_like_model_name,
    numeric_columns,
)
from fairviz.data.tasks import spec_of, task_names
from fairviz.data.tasks.multiclass import MAX_CLASSES
from fairviz.data.scales import SCALE_TITLES, SCALES, guess_scale, unambiguous
from app_pages import _ui, _upload

MAX_OFFERED = 500          # columns a role's selector offers (its guess always among them)
PENDING = "_direction_pending"   # session key: a mapping stopped by the direction check, for the one-click fix
ROW_ROLES_NOTE = ("Without text, id or feature columns the file is reduced once (DuckDB) to counts per group, label "
                  "and score, and every audit page reads that small table. Text, id and feature columns need the "
                  "rows themselves, so mapping one keeps every row in memory (slower for large files).")


@dataclass(frozen=True)
class Offer:
    """What the form offers for one upload: the guess and, per role, the columns that can play it."""

    guess: ColumnMapping
    labels: list
    scores: list
    groups: list
    others: list              # text and id columns
    features: list
    left_out: int             # columns no selector offers (beyond MAX_SCANNED or MAX_OFFERED)
    total: int
    numbers: list = ()        # numeric columns: a regression's target and predictions, class probabilities
    class_labels: list = ()   # columns with 3 to MAX_CLASSES values: a multiclass label or predicted class


@st.cache_data(show_spinner="Guessing the column roles…", max_entries=4, ttl=_ui.CACHE_TTL)
def offer(digest: str, _frame: pd.DataFrame) -> Offer:
    """The guess and the options, once per upload (keyed on its hash)."""
    frame = _frame
    guess = guess_mapping(frame)
    columns = list(frame.columns)
    scanned = columns[:MAX_SCANNED]
    numbers = set(numeric_columns(frame))
    two_valued = [c for c in scanned if frame[c].dropna().nunique() == 2]
    few = [c for c in scanned if c not in numbers and 2 <= frame[c].nunique() <= 200]

    def capped(candidates, *must) -> list:
        chosen = list(dict.fromkeys([m for m in must if m is not None and m in frame] + list(candidates)))
        return chosen[:MAX_OFFERED]

    labels = capped(two_valued or scanned, guess.label)
    # numbers only; a column guessed as the score that is mostly numbers with a few typos is offered too, so that
    # validation can name its bad values
    typos = (guess.score in frame and guess.score not in numbers and guess.score != guess.label
             and _mostly_numbers(frame[guess.score]))
    scores = capped([c for c in numeric_columns(frame)[:MAX_SCANNED] if c != guess.label],
                    *((guess.score,) if guess.score in numbers or typos else ()), *guess.candidate_scores)
    groups = capped(few, *guess.groups)
    others = capped([c for c in scanned if c not in numbers], guess.text, guess.row_id)
    features = capped([c for c in numeric_columns(frame)[:MAX_SCANNED]], *guess.features[:10])
    numbers = capped(numeric_columns(frame)[:MAX_SCANNED], guess.label if spec_of(guess).numeric_target else None)
    class_labels = capped([c for c in scanned if 3 <= distinct_count(frame[c]) <= MAX_CLASSES],
                          *((guess.label, guess.predicted) if spec_of(guess).per_class else ()))
    offered = set(labels) | set(scores) | set(groups) | set(others) | set(features) | set(numbers) | set(class_labels)
    return Offer(guess, labels, scores, groups, others, features, len(columns) - len(offered), len(columns),
                 numbers, class_labels)


def _mostly_numbers(series: pd.Series) -> bool:
    values = series.dropna()
    return len(values) > 0 and pd.to_numeric(values, errors="coerce").notna().mean() >= 0.5


ANSWER_KEYS = ("map_positive", "map_good", "map_scale", "map_task")


def answer_key(name: str, digest: str) -> str:
    """A widget key per file: with a user key the key alone is the widget's identity in the browser, so a key reused
    across files would keep the last file's answer on screen while the server computed with the new guess."""
    return f"{name}/{digest[:16]}"


def mapping_form(upload: _upload.Uploaded) -> None:
    """The form, then (when a mapping was stopped by the direction check) the warning with its one-click fixes."""
    frame, name = upload.frame, upload.name          # the first rows: enough to guess and check the roles
    keys = {name: answer_key(name, upload.digest) for name in ANSWER_KEYS}
    for stale in [k for k in st.session_state if str(k).split("/")[0] in ANSWER_KEYS and k not in keys.values()]:
        del st.session_state[stale]                  # the answers about an earlier file
    found = offer(upload.digest, frame)
    guess = found.guess
    _upload.preview(frame, name, "Check the column roles and what the score means:", rows=upload.rows)
    if found.left_out:
        st.caption(f"This file has {found.total:,} columns: each role below offers the columns that can play it "
                   f"(among the first {MAX_SCANNED:,}, at most {MAX_OFFERED:,} per role; type to search). "
                   f"{found.left_out:,} columns are not offered; the command line (`fairviz audit --label … "
                   f"--score … --group …`) takes any of them.")
    if not found.scores and not found.class_labels:
        st.error("No column of this file holds numbers, so none can be the score (a probability, a percentage or "
                 "a logit per row).")
        return
    tasks = task_names()
    task = st.radio("Task", tasks, index=tasks.index(guess.task), format_func=_choice, horizontal=True,
                    key=answer_key("map_task", upload.digest),
                    help="Guessed from the label column: " + "; ".join(
                        spec_of(t).word("guessed") for t in tasks if spec_of(t).word("guessed")) + ".")
    if not spec_of(task).thresholded:         # the form below asks about a decision at τ: which outcome, which scale
        task_form(upload, found, task)
        return
    values = label_values(frame[guess.label]) if guess.label in frame else []
    shown = [f"{guess.label} = {plain_value(v)}" for v in values]
    positive = guess_positive_label(values) if len(values) == 2 else None
    good = guess_good_outcome(guess.label, values, positive) if len(values) == 2 else None
    scale_guess = guess_scale(pd.to_numeric(frame[guess.score], errors="coerce")) if guess.score in found.scores \
        else None
    scale = scale_guess.scale if scale_guess is not None and unambiguous(scale_guess) else "probability"
    with st.form("mapping"):
        c1, c2, c3 = st.columns(3)
        label = _upload.pick(c1, "Label column (two values)", found.labels, guess.label)
        score = _upload.pick(c2, "Score column (numbers)", found.scores, guess.score)
        groups = c3.multiselect("Group column(s)", found.groups, default=[g for g in guess.groups if g in found.groups])
        c4, c5, c6 = st.columns(3)
        probability_of = c4.selectbox("The score is the probability of", shown or ["—"],
                                      index=values.index(positive) if positive in values else 0, key=keys["map_positive"],
                                      help="Which label value the score predicts: a higher score means this value is "
                                           "more likely.")
        good_for_person = c5.selectbox("The good outcome for the person is", shown or ["—"],
                                       index=values.index(good) if good in values else 0, key=keys["map_good"],
                                       help="Being approved, hired, released: the outcome a person would want. Group "
                                            "parity and MATCH count who gets it.")
        chosen_scale = c6.selectbox("Score scale", SCALES, index=SCALES.index(scale), key=keys["map_scale"],
                                    format_func=SCALE_TITLES.get,
                                    help="Percentages are divided by 100, logits go through the logistic function.")
        others = st.multiselect("Other models: more score columns for the same rows (optional)",
                                [c for c in found.scores if c != guess.label],
                                default=[c for c in guess.candidate_scores
                                         if c in found.scores and c != guess.score and looks_like_model_name(c)],
                                help="Each is audited on every page (the sidebar's Model picker) and compared with "
                                     "the score column's model, with paired tests. Its scale is guessed from its "
                                     "values; a column that is constant, outside [0, 1] or runs the other way is "
                                     "left out with a message.")
        c7, c8 = st.columns(2)
        text = _upload.pick(c7, "Text column (optional)", found.others, guess.text, optional=True)
        row_id = _upload.pick(c8, "Id column (optional)", found.others, guess.row_id, optional=True)
        features = st.multiselect("Feature columns (optional, numeric)", found.features,
                                  default=[f for f in guess.features[:10] if f in found.features])
        intersect = st.checkbox("Also compare intersections of the first two group columns", value=False)
        submitted = st.form_submit_button("Use these columns", type="primary")
        st.caption(_recognised(guess, scale_guess, values, positive, good))
        st.caption(ROW_ROLES_NOTE)
    if submitted:
        chosen = {v: k for k, v in zip(values, shown)}
        positive_value = chosen.get(probability_of) if label == guess.label else None
        mapping = ColumnMapping(label=label, score=score, groups=tuple(groups), positive_label=positive_value,
                                text=text, features=tuple(features), row_id=row_id, intersect=intersect,
                                score_scale=chosen_scale,
                                more_scores=_other_models(frame, [c for c in others if c not in (score, label)]))
        benefit = "positive" if chosen.get(good_for_person, positive_value) == positive_value else "negative"
        st.session_state.pop(PENDING, None)
        load(upload, mapping, benefit)
    _direction_fix(upload)


def _choice(task: str) -> str:
    """A task as the form's choice names it."""
    return spec_of(task).word("choice", spec_of(task).title)


def task_form(upload: _upload.Uploaded, found: Offer, task: str) -> None:
    """The roles of a task without a decision at τ: a numeric target (target, prediction, other models) or classes
    (label, and one probability column per class or a predicted class with its confidence), guessed and
    changeable."""
    spec = spec_of(task)
    guess = replace(found.guess, task=task)             # the guess, read as the task chosen
    with st.form(f"mapping_{task}"):
        c1, c2, c3 = st.columns(3)
        groups = c3.multiselect("Group column(s)", found.groups, default=[g for g in guess.groups if g in found.groups])
        if spec.numeric_target:
            label = _upload.pick(c1, "Target column (numbers)", found.numbers, guess.label)
            score = _upload.pick(c2, "Prediction column (numbers)", found.numbers, guess.score or None)
            others = st.multiselect("Other models: more prediction columns for the same rows (optional)",
                                    found.numbers, default=[c for c in guess.candidate_scores if c in found.numbers],
                                    help="Each is audited on every page (the sidebar's Model picker).")
            quantiles = tuple(st.multiselect(
                "Prediction-interval columns (optional: quantiles named by level, q0.05 and q0.95)", found.numbers,
                default=[c for c in found.numbers if quantile_level(c) is not None],
                help="Calibration shows each group's coverage of the central intervals they bound."))
            class_scores, predicted, normalise = (), None, False
        else:
            label = _upload.pick(c1, "Label column (classes)", found.class_labels, guess.label)
            class_scores = tuple(c2.multiselect(
                "Class probability columns (one per class)", found.numbers,
                default=[c for c in guess.class_scores if c in found.numbers],
                help="Named after their class (p_cat, prob_3, dog_prob). Leave empty to map a predicted class."))
            c4, c5 = st.columns(2)
            predicted = _upload.pick(c4, "Or: predicted-class column", found.class_labels, guess.predicted,
                                     optional=True)
            score = _upload.pick(c5, "Its confidence (optional)", found.numbers,
                                 guess.score if guess.predicted else None, optional=True) or ""
            quantiles = ()
            normalise = st.checkbox("Normalise the class probabilities (divide each row's by their sum)", value=False,
                                    help="Rows whose probabilities do not sum to 1 within 0.01 are noted and read "
                                         "as given unless this is ticked.")
            others = []
        c7, c8 = st.columns(2)
        text = _upload.pick(c7, "Text column (optional)", found.others, guess.text, optional=True)
        row_id = _upload.pick(c8, "Id column (optional)", found.others, guess.row_id, optional=True)
        features = st.multiselect("Feature columns (optional, numeric)", found.features,
                                  default=[f for f in guess.features[:10] if f in found.features])
        submitted = st.form_submit_button("Use these columns", type="primary")
        st.caption(f"Guessed task: {spec_of(found.guess).title}. {spec.word('pages')}")
    if submitted:
        mapping = ColumnMapping(label=label, score=score or "", groups=tuple(groups), text=text,
                                features=tuple(features), row_id=row_id, task=task,
                                class_scores=class_scores if spec.per_class else (),
                                predicted=None if class_scores else predicted, normalise=normalise,
                                quantiles=quantiles,
                                more_scores=tuple(ScoreColumn(c) for c in others if c not in (score, label)))
        load(upload, mapping, "positive")


def _other_models(frame: pd.DataFrame, columns: list[str]) -> tuple[ScoreColumn, ...]:
    """The other models' score columns, each on the scale its first rows unambiguously show (else probability:
    validation then names a range that is no probability)."""
    models = []
    for column in columns:
        guess = guess_scale(pd.to_numeric(frame[column], errors="coerce"))
        scale = guess.scale if guess.scale is not None and unambiguous(guess) else "probability"
        models.append(ScoreColumn(column, scale=scale))
    return tuple(models)


def _recognised(guess: ColumnMapping, scale_guess, values: list, positive, good) -> str:
    """One sentence on what was recognised, naming the real columns and values."""
    parts = []
    if scale_guess is not None and scale_guess.scale in ("percent", "logit") and unambiguous(scale_guess):
        parts.append(f"'{guess.score}' was recognised as {SCALE_TITLES[scale_guess.scale]} ({scale_guess.reason}): "
                     f"it is converted to a probability "
                     f"{'(÷ 100)' if scale_guess.scale == 'percent' else '(the logistic function)'}; change the "
                     f"score scale if that is wrong.")
    elif scale_guess is not None and scale_guess.scale is None:
        parts.append(f"'{guess.score}': {scale_guess.reason}; convert it to a probability before uploading.")
    elif scale_guess is not None and scale_guess.scale == "percent":
        parts.append(f"'{guess.score}' runs {scale_guess.low:g} to {scale_guess.high:g}: if these are percentages "
                     "choose that scale; as they are they are no probabilities.")
    if len(values) == 2 and positive is not None:
        parts.append(f"Guessed: '{guess.score}' is the probability of {guess.label} = {plain_value(positive)}, and "
                     f"{guess.label} = {plain_value(good)} is the good outcome for the person. The score's direction "
                     "is checked when you use these columns.")
    if guess.candidate_scores:
        parts.append(f"Other columns that look like scores (other models?): "
                     f"{', '.join(repr(c) for c in guess.candidate_scores[:10])}"
                     f"{' …' if len(guess.candidate_scores) > 10 else ''}.")
    return md(" ".join(parts))


def load(upload: _upload.Uploaded, mapping: ColumnMapping, benefit: str) -> None:
    """Build the predictions (row by row or reduced by the engine), check them and make them every page's data. A
    problem is shown and nothing is replaced; a score that runs the other way is kept for the one-click fix."""
    # text, id, feature and quantile columns need the rows themselves (the engine's table does not carry them)
    row_level = bool(mapping.text or mapping.row_id or mapping.features or mapping.quantiles)
    try:
        if row_level:
            chosen = tuple(dict.fromkeys(c for c in (
                mapping.label, mapping.score, *(m.column for m in mapping.more_scores), *mapping.groups,
                *mapping.features, *mapping.class_scores, *mapping.quantiles, mapping.predicted, mapping.text,
                mapping.row_id) if c))
            full, digest = upload.columns(chosen)     # only the mapped columns are decoded
            pred = build_predictions(full, mapping, source=upload.name, file_fingerprint=digest)
        else:                                         # the engine's reduction: counts per (group, label, score)
            pred = _upload.reduce_upload(upload.digest, upload.name, repr(mapping), upload.raw, mapping).predictions()
            _upload.remember_reduced(upload, mapping, pred.fingerprint)   # D* can fetch the file's rows again
    except ScoreDirectionError as err:
        st.session_state[PENDING] = {"digest": upload.digest, "mapping": mapping, "benefit": benefit,
                                     "message": str(err)}
        return
    except DataError as err:
        _ui.show_data_error(err)
        st.caption("Nothing was replaced: the pages keep showing the previous data until these are fixed.")
        return
    st.session_state.pop(PENDING, None)
    _ui.use_predictions(pred, benefit=benefit)
    st.session_state["sample_key"] = None
    how = ("row by row, because text, id, feature or quantile columns are mapped" if row_level else
           f"reduced to {pred.y.size:,} (group, label, score) cells that every audit page reads"
           if spec_of(pred).thresholded else
           f"{spec_of(mapping).title}, reduced to {pred.y.size:,} cells that every audit page reads")
    models = f" {len(pred.model_names)} models: {', '.join(pred.model_names)}." if pred.several_models else ""
    left_out = " ".join(note for note in pred.notes if " left out: " in note)
    st.session_state["flash"] = (f"Loaded {pred.n:,} rows from '{upload.name}' ({how}). Every page now uses this "
                                 f"file.{models}{' ' + left_out if left_out else ''}")
    st.rerun()


def _direction_fix(upload: _upload.Uploaded) -> None:
    """The warning for a score that runs the other way, with the fix (1 − score) and the way to audit it as it is."""
    pending = st.session_state.get(PENDING)
    if not pending or pending["digest"] != upload.digest:
        return
    mapping = pending["mapping"]
    st.warning(f"**Nothing was loaded yet: the score seems to run the other way.** {md(pending['message'])}")
    c1, c2 = st.columns(2)
    if c1.button("The score runs the other way", type="primary", key="direction_reversed",
                 help=f"Use 1 − {mapping.score} as the probability of the label value it was taken to predict."):
        load(upload, replace(mapping, score_direction="reversed"), pending["benefit"])
    if c2.button("Audit the score as it is", key="direction_as_is",
                 help="The audit runs, and its notes say that the check disagreed."):
        load(upload, replace(mapping, score_direction="as-is"), pending["benefit"])
