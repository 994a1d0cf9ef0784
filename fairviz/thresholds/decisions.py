"""The per-group threshold policy applied to the loaded predictions: decisions per row, and the explorer's result.

A randomised rule gives some rows a "yes" with a probability p strictly between 0 and 1. The decisions here are
label-blind, as a deployed rule must be (it cannot know the outcome): within each group, the rows the rule gives a
yes with probability p get that share of yeses, rounded to a whole row (cumulative rounding in score order), and a
seeded permutation picks which of the interchangeable rows (same group and score) get them. So each group's
selection rate is its expected one within half a row's share, while its realised TPR and FPR vary around the
expected ones (which the constraint equalises) by the spread ``realised_rates`` reports. Rounding within each
(group, outcome) would hit the expected TPRs to a row, but only by reading the outcome: no rule can do that.

Weighted (engine) data: an entry stands for several identical rows and holds one score, so an entry whose rows need
different decisions cannot be kept as one: the decisions then need the rows themselves (``decision_rows``).
"""
from __future__ import annotations

import numpy as np

from fairviz.data import DataError, Predictions
from fairviz.thresholds import readings
from fairviz.thresholds.analysis import explore, fit
from fairviz.thresholds.results import (AdjustedDecisions, RealisedRates, ThresholdExplorer, ThresholdParams,
                                        ThresholdPolicy)

# Weighted data is expanded to rows (``Predictions.rows``) for decisions up to this many rows: 8 bytes of score per
# row and model, the size the pages' row analyses (D*, knees) already expand to.
MAX_DECISION_ROWS = 5_000_000


def adjusted_model(joint: Predictions, attribute: str, constraint: str, seed: int = 0,
                   params: ThresholdParams | None = None, model: str | None = None) -> tuple[np.ndarray, str, str]:
    """(the decisions as 0/1 scores aligned with ``joint.joint()``'s entries, the model's title, a note saying how
    it was made). ``params`` gives the slack (its constraint and seed are ``constraint`` and ``seed``); ``model``
    is the model adjusted (None: ``joint``'s active one). Raises ``DataError`` with one plain sentence for input
    that cannot be adjusted, and for weighted data whose decisions split an entry (call it on ``decision_rows``)."""
    adjusted = adjust(joint, attribute, constraint, seed, params, model)
    return adjusted.decisions.astype(float), adjusted.title, adjusted.note


def explore_model(joint: Predictions, attribute: str, constraint: str, tau: float, seed: int = 0,
                  params: ThresholdParams | None = None, model: str | None = None) -> ThresholdExplorer:
    """What the explorer shows: the policy, its trade-off curve, a single threshold τ for everyone on the same axes,
    and the decisions with their realised rates."""
    base, model = joint.joint(), model or joint.active_model
    score, codes, names = _inputs(base, attribute, model)
    fitted = _params(constraint, seed, params)
    audit = _checked(lambda: explore(base.y, score, codes, names, fitted, tau, base.weight, attribute))
    return ThresholdExplorer(audit, adjust(joint, attribute, constraint, seed, params, model, audit.policy), float(tau))


def adjust(joint: Predictions, attribute: str, constraint: str, seed: int = 0, params: ThresholdParams | None = None,
           model: str | None = None, policy: ThresholdPolicy | None = None) -> AdjustedDecisions:
    """The fitted policy (``policy`` when already fitted with these settings) and its decisions on
    ``joint.joint()``'s entries (see the module's note)."""
    base = joint.joint()
    model = model or joint.active_model
    score, codes, names = _inputs(base, attribute, model)
    params = _params(constraint, seed, params)
    if policy is None:
        policy = _checked(lambda: fit(base.y, score, codes, names, params, base.weight, attribute))
    weight = np.ones(base.y.size, np.int64) if base.weight is None else base.weight.astype(np.int64)
    probability = np.zeros(score.size)
    for g, name in enumerate(names):
        member = codes == g
        if member.any() and any(r.group == name for r in policy.rules):
            probability[member] = policy.rule(name).positive_probability(score[member])
    yes = allocate(probability, base.y, codes, score, weight, seed)
    split = (yes > 0) & (yes < weight)
    if split.any():
        raise DataError(f"The decisions give some rows of {int(split.sum()):,} entries of the engine's summary a yes "
                        f"and the others a no, which one entry cannot hold: per-group thresholds need the "
                        f"{base.n:,} rows themselves here.")
    decisions = (yes == weight) & (weight > 0)
    title = readings.model_title(model, constraint, attribute)
    note = readings.model_note(title, model, constraint, attribute, params.slack, seed)
    return AdjustedDecisions(model, attribute, policy, decisions, realised_rates(decisions, base.y, codes, names,
                                                                                  weight, probability), title, note)


def decision_rows(joint: Predictions) -> Predictions:
    """Predictions whose entries are rows, for decisions that may differ between identical rows: the joint
    predictions as they are, or weighted data expanded (up to ``MAX_DECISION_ROWS`` rows)."""
    base = joint.joint()
    if not base.weighted:
        return base
    if base.n > MAX_DECISION_ROWS:
        raise DataError(f"Per-group decisions need the rows, and these data hold {base.n:,} rows (the limit is "
                        f"{MAX_DECISION_ROWS:,}): audit a sample of them.")
    return base.rows().with_note(f"The engine's summary is expanded to its {base.n:,} rows, so that per-group "
                                 "decisions can differ between rows the summary held as one entry.")


def _params(constraint: str, seed: int, params: ThresholdParams | None) -> ThresholdParams:
    try:
        return ThresholdParams(constraint, (params or ThresholdParams()).slack, seed)
    except ValueError as err:
        raise DataError(str(err)) from err


def _inputs(base: Predictions, attribute: str, model: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    if base.scores and model not in base.scores:
        raise DataError(f"There is no model named '{model}' (models: {', '.join(base.scores)}).")
    score = base.scores[model] if base.scores else base.score
    try:
        view = base.groups(attribute)
    except KeyError as err:
        raise DataError(f"There is no group attribute named '{attribute}'.") from err
    if score.size and score.min() == score.max():
        raise DataError(f"The scores of '{model}' are all {score.min():g}: no threshold can tell the rows apart.")
    return np.asarray(score, float), view.codes, view.names


def _checked(run):
    """The analysis's refusals (a group with one outcome, an infeasible programme) as one plain sentence."""
    try:
        return run()
    except ValueError as err:
        message = str(err)
        raise DataError(message[0].upper() + message[1:] + ".") from err


def allocate(probability: np.ndarray, y: np.ndarray, codes: np.ndarray, score: np.ndarray, weight: np.ndarray,
             seed: int) -> np.ndarray:
    """Yeses per entry: within each group, the cumulative sum of probability × rows rounded to whole rows in score
    order (ties in a seeded order), so every entry gets within one row of its expected yeses and the group's total
    is within half a row of it. Label-blind: ``y`` is not read (kept in the signature for the callers' symmetry).
    Certain entries (p = 0 or 1) get exactly none or all."""
    p = np.where(probability > 1 - 1e-9, 1.0, np.where(probability < 1e-9, 0.0, probability))
    yes = np.where(p == 1.0, weight, 0).astype(np.int64)
    shuffle = np.random.default_rng(seed).permutation(p.size)
    cell = codes.astype(np.int64)             # never the outcome: a deployed rule cannot read it
    for key in np.unique(cell):
        chance = np.flatnonzero((cell == key) & (p > 0) & (p < 1))
        if chance.size == 0:
            continue
        chance = chance[np.lexsort((shuffle[chance], -score[chance]))]
        total = np.floor(np.cumsum(p[chance] * weight[chance]) + 0.5).astype(np.int64)
        yes[chance] = np.diff(np.r_[0, total])
    return yes


def realised_rates(decisions, y, codes, names, weight, probability) -> tuple[RealisedRates, ...]:
    """Each group's rates of the realised decisions, and the standard deviation of its TPR under a label-blind draw
    of the same rule (independent coins: √Σ w·p(1−p) over its positives, / positives)."""
    y = np.asarray(y).astype(bool)
    out = []
    for g, name in enumerate(names):
        member = codes == g
        P, N = float(weight[member & y].sum()), float(weight[member & ~y].sum())
        if P + N == 0:
            continue
        yes = weight * decisions
        tpr = float(yes[member & y].sum()) / P if P else float("nan")
        fpr = float(yes[member & ~y].sum()) / N if N else float("nan")
        spread = probability * (1 - probability) * weight
        sd = float(np.sqrt(spread[member & y].sum())) / P if P else float("nan")
        out.append(RealisedRates(str(name), int(P + N), int(P), tpr, fpr, float(yes[member].sum()) / (P + N), sd))
    return tuple(out)


def decisions_frame(rows: Predictions, adjusted: AdjustedDecisions) -> "pd.DataFrame":
    """The decisions as a table, one line per row of ``rows`` (the predictions they were made on): the row's id (the
    mapped id column) or its row number, its group, the adjusted model's score and the decision (1 = yes)."""
    import pandas as pd
    if rows.weighted:
        raise DataError("The decisions of weighted data are listed per row: make them on decision_rows(...).")
    base = rows.joint()
    view = base.groups(adjusted.attribute)
    score = base.scores[adjusted.model] if base.scores else base.score
    id_column = base.mapping.row_id if base.mapping.row_id in base.frame.columns else None
    ids = base.frame[id_column].to_numpy() if id_column else base.frame.index.to_numpy()
    return pd.DataFrame({id_column or "row": ids, adjusted.attribute: np.asarray(view.names, dtype=object)[view.codes],
                         "score": score, "decision": adjusted.decisions.astype(np.int8)})
