"""How ``fairviz audit``'s options map the file's columns: the task (``--task``, else guessed from the columns),
the options that belong to another task refused, and the ``ColumnMapping`` the options and the guess give (every
model's columns: ``--score``, ``--class-scores``, ``--predicted``, named by ``--model-name`` in order)."""
from __future__ import annotations

import fnmatch
from dataclasses import replace

import pandas as pd

from fairviz.data import ColumnMapping, DataError, ScoreColumn
from fairviz.data.model import plain_value
from fairviz.data.roles import class_columns, predicted_column
from fairviz.data.tasks import BINARY, TaskSpec, guess_task, spec_of, task_names


def task_of(args, frame: pd.DataFrame, guess: ColumnMapping) -> str:
    """--task; else the task with classes when class columns are named; else the task the label column suggests,
    taken only when the columns that task needs are found (a 3-valued label beside one probability column stays
    binary, and validation says why it cannot be)."""
    if args.task is not None:
        return args.task
    if args.class_scores or args.predicted:
        return task_with("per_class")
    label = args.label or guess.label
    if label not in frame.columns:
        return BINARY.name                    # validation names the missing column
    task = guess_task(frame, label)
    if spec_of(task).per_class and not any(class_columns_of(frame, label)):
        return BINARY.name
    return task


def task_with(flag: str) -> str:
    """The first registered task whose spec has ``flag`` (what a task-specific option belongs to)."""
    return next(name for name in task_names() if getattr(spec_of(name), flag))


def class_columns_of(frame: pd.DataFrame, label) -> tuple[tuple, object]:
    """The class probability columns named after the label's classes (empty unless every class has one) and a
    predicted-class column (None when none is found)."""
    classes = {str(plain_value(v)) for v in frame[label].dropna().unique()}
    return tuple(class_columns(frame, classes)), predicted_column(frame, label, classes)


# options that mean something only with a decision at τ (a thresholded task): refused for any other
THRESHOLD_ONLY = {"--thresholds": "thresholds", "--recalibrate": "recalibrate", "--dstar": "dstar",
                  "--explain": "explain", "--score-scale": "score_scale", "--score-direction": "score_direction",
                  "--positive-label": "positive_label"}


def check_task_options(args, spec: TaskSpec) -> None:
    """Options that mean nothing for the task are refused, in one sentence, rather than silently ignored."""
    if not spec.thresholded:
        given = [flag for flag, name in THRESHOLD_ONLY.items() if getattr(args, name) not in (None, False)]
        if given:
            raise DataError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to "
                            f"{task_with('thresholded')} predictions; drop {'it' if len(given) == 1 else 'them'} "
                            f"for a {spec.name} audit.")
    if not spec.per_class and (args.class_scores or args.predicted):
        raise DataError(f"--class-scores and --predicted name {task_with('per_class')} columns; this audit's task "
                        f"is {spec.name}.")
    if not spec.numeric_target and args.quantiles:
        raise DataError(f"--quantiles names a {task_with('numeric_target')}'s prediction-interval columns; this "
                        f"audit's task is {spec.name}.")
    if not spec.numeric_target and args.units:
        raise DataError(f"--units states a {task_with('numeric_target')} target's units; this audit's task is "
                        f"{spec.name}.")
    if spec.per_class and args.class_scores and args.predicted:
        raise DataError("Give --class-scores or --predicted, not both: the predicted class is the most probable one.")
    if spec.per_class and args.score and len(args.score) > max(len(args.predicted or ()), 1):
        raise DataError(f"{len(args.score)} --score for {len(args.predicted or ())} --predicted: in a {spec.name} "
                        "audit --score names the confidence of the --predicted in the same position; give one "
                        "--predicted per model.")


def class_score_columns(pattern: str, columns, option: str = "--class-scores") -> tuple[str, ...]:
    """The columns a --class-scores (or ``option``) value names: a comma list (each must exist), or a glob over
    the names."""
    names = [str(c) for c in columns]
    if "," in pattern or not any(ch in pattern for ch in "*?["):
        wanted = [p.strip() for p in pattern.split(",") if p.strip()]
        missing = [c for c in wanted if c not in names]
        if missing:
            raise DataError(f"{option} names column{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(repr(c) for c in missing)} that the file does not have (columns: "
                            f"{', '.join(names[:12])}{', …' if len(names) > 12 else ''}).")
        return tuple(wanted)
    found = tuple(c for c in names if fnmatch.fnmatchcase(c, pattern))
    if not found:
        raise DataError(f"{option} '{pattern}' matches no column (columns: {', '.join(names[:12])}"
                        f"{', …' if len(names) > 12 else ''}).")
    if option == "--class-scores" and len(found) < 3:
        raise DataError(f"--class-scores '{pattern}' matches {len(found)} column{'s' if len(found) > 1 else ''} "
                        f"({', '.join(found)}): a multiclass audit needs one probability column per class, 3 or "
                        "more.")
    return found


def mapping_of(args, spec: TaskSpec, frame: pd.DataFrame, guess: ColumnMapping) -> ColumnMapping:
    """The mapping from the options, the guess filling what they leave out (a numeric target's or classes' roles
    only when the guess is of the same task: a binary guess's probability column is no regression's prediction)."""
    label = args.label or guess.label
    same = spec_of(guess.task) == spec and guess.label == label
    groups = tuple(args.group) if args.group else guess.groups
    if spec.numeric_target:
        first_score, more_scores, first_name = model_columns(args)
        score = first_score or (guess.score if same else None)
        if not score:
            raise DataError("Name the regression's prediction column with --score (it could not be guessed).")
        quantiles = class_score_columns(args.quantiles, frame.columns, "--quantiles") if args.quantiles else ()
        return ColumnMapping(label=label, score=score, groups=groups, row_id=guess.row_id, intersect=args.intersect,
                             more_scores=more_scores, model_name=first_name, task=spec.name, quantiles=quantiles)
    if not spec.per_class:
        return probability_mapping(args, frame, guess)
    return class_mapping(args, spec, frame, ColumnMapping(label=label, score="", groups=groups, row_id=guess.row_id,
                                                          intersect=args.intersect, task=spec.name,
                                                          normalise=args.normalise), guess if same else None)


def class_mapping(args, spec: TaskSpec, frame: pd.DataFrame, base: ColumnMapping,
                  guess: ColumnMapping | None) -> ColumnMapping:
    """A model of classes per --class-scores (its probability columns) or per --predicted (its predicted-class
    column, with the --score in the same position as its confidence), named by --model-name in order; with neither,
    the columns named after the label's classes, else a predicted-class column, as guessed (``guess``: of this task
    and label, else None)."""
    if args.class_scores:
        models = [ScoreColumn("", class_scores=class_score_columns(p, frame.columns)) for p in args.class_scores]
        defaults = list(args.class_scores)                 # several models: each named by what named its columns
    else:
        found, predicted = class_columns_of(frame, base.label) if base.label in frame.columns else ((), None)
        if found and not args.predicted:
            return replace(base, class_scores=found)
        predicted = args.predicted or ([predicted] if predicted else [])
        if not predicted:
            raise DataError("Name the class probability columns with --class-scores 'p_*' or the predicted-class "
                            "column with --predicted (neither could be guessed).")
        confidences = list(args.score or []) or \
            [guess.score if guess is not None and guess.predicted == predicted[0] else ""]
        if len(predicted) > 1 and len(confidences) != len(predicted):
            raise DataError(f"{len(confidences)} --score for {len(predicted)} --predicted: give each predicted-class "
                            "column its confidence with a --score in the same position, or give no --score.")
        models = [ScoreColumn(c or "", predicted=p) for p, c in zip(predicted, confidences + [""] * len(predicted))]
        defaults = [None] * len(models)
    names = model_names(args, len(models), "--class-scores" if args.class_scores else "--predicted")
    if len(models) > 1:
        names = [name or default for name, default in zip(names, defaults)]
    first, *more = [replace(m, name=name) for m, name in zip(models, names)]
    return replace(base, score=first.column, class_scores=first.class_scores, predicted=first.predicted,
                   model_name=first.name, more_scores=tuple(more))


def probability_mapping(args, frame: pd.DataFrame, guess: ColumnMapping) -> ColumnMapping:
    """A score read as the probability of the positive label: each --score a model, its scale and direction."""
    first_score, more_scores, first_name = model_columns(args)
    return ColumnMapping(label=args.label or guess.label, score=first_score or guess.score,
                         groups=tuple(args.group) if args.group else guess.groups,
                         positive_label=args.positive_label if args.positive_label is not None else guess.positive_label,
                         text=args.text or (guess.text if guess.text in frame else None),
                         row_id=guess.row_id, intersect=args.intersect, score_scale=args.score_scale,
                         score_direction=args.score_direction, more_scores=more_scores, model_name=first_name)


def model_columns(args) -> tuple[str | None, tuple[ScoreColumn, ...], str | None]:
    """The first --score, the others as more models, and the first model's name (from --model-name, in order)."""
    scores = args.score or []
    names = model_names(args, len(scores), "--score")
    if not scores:
        return None, (), names[0]
    more = tuple(ScoreColumn(column, name=name) for column, name in zip(scores[1:], names[1:]))
    return scores[0], more, names[0]


def model_names(args, models: int, option: str) -> list[str | None]:
    """Each model's --model-name, in order (None where none is given): at most one per model."""
    names = list(args.model_name)
    if len(names) > max(models, 1):
        raise DataError(f"{len(names)} --model-name for {models} {option}: give at most one name per model.")
    return names + [None] * (max(models, 1) - len(names))
