"""What scale a score column is on, and the one conversion to a probability: percentages (0–100) are divided by
100 and logits go through the logistic function. Guessed from the values, always shown, changeable (app) or given
(``--score-scale``); a score that fits none of them is named with its range."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

SCALES = ("probability", "percent", "logit")
SCALE_TITLES = {"probability": "a probability in [0, 1]", "percent": "a percentage in [0, 100]",
                "logit": "a logit (log-odds)"}


@dataclass(frozen=True)
class ScaleGuess:
    scale: str | None            # None: none of the three fits
    low: float
    high: float
    reason: str


def guess_scale(values) -> ScaleGuess:
    """probability when every finite value is in [0, 1]; percent when they are in [0, 100] and some exceed 1;
    logit when some are negative (log-odds are unbounded both ways); otherwise none (e.g. 300–850 credit points)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return ScaleGuess(None, float("nan"), float("nan"), "the score column has no finite values")
    low, high = float(v.min()), float(v.max())
    if low >= 0 and high <= 1:
        return ScaleGuess("probability", low, high, "every value is in [0, 1]")
    if low >= 0 and high <= 100:
        return ScaleGuess("percent", low, high, f"values run {low:g} to {high:g}, within [0, 100]")
    if low < 0 and high > 0:
        return ScaleGuess("logit", low, high, f"values run {low:g} to {high:g}, on both sides of 0")
    return ScaleGuess(None, low, high, f"values run {low:g} to {high:g}: not a probability, a percentage or a logit")


def to_probability(values, scale: str) -> np.ndarray:
    """The score as a probability. Values outside the scale's range are left for validation to name."""
    v = np.asarray(values, float)
    if scale == "probability":
        return v
    if scale == "percent":
        return v / 100.0
    if scale == "logit":
        return expit(v)
    raise ValueError(f"unknown score scale '{scale}' (known: {', '.join(SCALES)})")


DIRECTIONS = ("as-is", "reversed")
SCALE_NAMES = {"probability": "a probability", "percent": "a percentage", "logit": "a logit"}
LOGIT_CLAMP = 700.0      # exp(±700) is finite in every engine (PostgreSQL raises on overflow and underflow)


def unambiguous(guess: ScaleGuess) -> bool:
    """Whether a guess is safe to act on without asking. A percentage needs some value above 10: a 1–10 rating
    (COMPAS' decile score) is no percentage. A logit needs values on both sides of 0, which guess_scale asks."""
    if guess.scale == "percent":
        return guess.high > 10
    return guess.scale is not None


def resolved_scale(values, given: str | None) -> tuple[str, str]:
    """The scale to use and a note for the reader ('' when nothing needs saying): the given scale, else the guess
    when it is unambiguous and not a probability (stated), else probability (validation then names the range)."""
    if given is not None:
        if given not in SCALES:
            raise ValueError(f"unknown score scale '{given}' (known: {', '.join(SCALES)})")
        return given, ""
    guess = guess_scale(values)
    infinite = bool(np.isinf(np.asarray(values, float)).any())     # ±inf: a broken column, not one to convert
    if guess.scale in (None, "probability") or not unambiguous(guess) or infinite:
        return "probability", ""
    return guess.scale, (f"The score was read as {SCALE_TITLES[guess.scale]} ({guess.reason}) and converted to a "
                         f"probability{' (÷ 100)' if guess.scale == 'percent' else ' (the logistic function)'}; "
                         f"give the score scale to change this.")


def oriented(probability, direction: str | None) -> np.ndarray:
    """The probability of the positive label: 1 − p when the score runs the other way."""
    p = np.asarray(probability, float)
    return 1.0 - p if direction == "reversed" else p


def probability_sql(expression: str, scale: str | None, direction: str | None, is_nan) -> str:
    """The same conversion in SQL, for the engines' reduction: ``expression`` is the score as a double, ``is_nan``
    the dialect's NaN test. Monotone in the score, so an exact reduction stays exact. NaN stays NaN (DuckDB and Spark
    order NaN above every number, so it is tested first) and NULL stays NULL."""
    s = expression
    if scale == "percent":
        s = f"({s} / 100.0)"
    elif scale == "logit":
        s = (f"(CASE WHEN {is_nan(s)} THEN {s} WHEN {s} >= 0 THEN 1.0 / (1.0 + EXP(-LEAST({s}, {LOGIT_CLAMP}))) "
             f"WHEN {s} < 0 THEN EXP(GREATEST({s}, -{LOGIT_CLAMP})) / (1.0 + EXP(GREATEST({s}, -{LOGIT_CLAMP}))) END)")
    elif scale not in (None, "probability"):
        raise ValueError(f"unknown score scale '{scale}' (known: {', '.join(SCALES)})")
    return f"(1.0 - {s})" if direction == "reversed" else s


def with_guessed_scale(mapping, values):
    """``mapping`` with its score scale settled (a given one kept, else ``resolved_scale``'s) and the note saying
    what was guessed ('' when nothing was)."""
    from dataclasses import replace
    scale, note = resolved_scale(values, mapping.score_scale)
    return replace(mapping, score_scale=scale), note


def with_guessed_scales(mapping, values_of) -> tuple[object, str]:
    """Every model's scale settled as ``with_guessed_scale`` settles the first's (``values_of(column)``: that column's
    values); the note names each model whose scale was guessed."""
    from dataclasses import replace
    mapping, note = with_guessed_scale(mapping, values_of(mapping.score))
    notes, more = [note] if note else [], []
    for model in mapping.more_scores:
        scale, model_note = resolved_scale(values_of(model.column), model.scale)
        more.append(replace(model, scale=scale))
        if model_note:
            notes.append(f"Model '{model.title}': {model_note[0].lower()}{model_note[1:]}")
    return replace(mapping, more_scores=tuple(more)), " ".join(notes)


CONVERSIONS = {"probability": "", "percent": " (÷ 100)", "logit": " (the logistic function)"}


def score_statement(mapping: dict) -> str:
    """The data line's words for the score (a mapping's ``to_dict``): its column, scale and direction."""
    scale = mapping.get("score_scale") or "probability"
    reversed_ = {"reversed": ", reversed (1 − p)", "as-is": ", direction as given"}.get(
        mapping.get("score_direction"), "") if mapping.get("direction_confirmed") else ""
    return f"score '{mapping.get('score')}' read as {SCALE_NAMES.get(scale, scale)}{CONVERSIONS.get(scale, '')}{reversed_}"
