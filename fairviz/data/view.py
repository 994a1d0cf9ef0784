"""The View: which part of the data an audit reads — model × attribute × class × τ × benefit × reference.

One frozen value for every place that names a view: the CLI's options, the app's frame, a link's address, the
Python API. ``Predictions.at(view)`` is the one way to its table (its class one vs rest, every model kept, then its
model); ``Predictions.groups(view.attribute)`` the one way to its groups (a column, an intersection 'a × b', or a
slice 'slice: sex=F ∧ age=18-25' as the slice search names it). Each is built once, then kept on the predictions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Mapping

from fairviz.data.model import DataError, GroupView, Predictions, UnknownName

BENEFITS = ("positive", "negative")      # which prediction helps a person: score ≥ τ, or score < τ
# the address parameter of each field (a link carries them; the app's frame reads them back)
PARAMS = {"attribute": "attribute", "threshold": "tau", "benefit": "benefit", "reference": "reference",
          "model": "model", "class_name": "class"}


@dataclass(frozen=True)
class View:
    """Which part of the data an audit reads. None means the default: the first model, the first attribute, no
    class (every class; a binary page reads a class one vs rest), the largest group as the reference."""

    model: str | None = None
    attribute: str | None = None         # a column, an intersection 'a × b' or a slice
    class_name: str | None = None
    threshold: float = 0.5
    benefit: str = "positive"
    reference: str | None = None

    def __post_init__(self):
        try:
            threshold = float(self.threshold)
        except (TypeError, ValueError):
            raise DataError(f"The threshold τ must be a number in [0, 1] (got {self.threshold!r}).") from None
        if not (math.isfinite(threshold) and 0 <= threshold <= 1):
            raise DataError(f"The threshold τ must be a number in [0, 1] (got {self.threshold!r}).")
        object.__setattr__(self, "threshold", threshold)
        if self.benefit not in BENEFITS:
            raise DataError(f"The beneficial outcome must be {' or '.join(BENEFITS)} (got {self.benefit!r}).")

    @classmethod
    def of(cls, pred: Predictions, **chosen) -> "View":
        """The view ``chosen`` of ``pred``, every name checked (a model, attribute, class or reference group the
        data lack is a ``DataError`` naming it) and the attribute filled in (None: the first)."""
        return cls(**chosen).checked(pred)

    def replace(self, **changes) -> "View":
        return replace(self, **changes)

    def key(self) -> tuple:
        """A stable, hashable key for caches: the fields in their order."""
        return tuple(getattr(self, f.name) for f in fields(self))

    def table(self, pred: Predictions) -> Predictions:
        """The table this view audits (``Predictions.at``)."""
        return pred.at(self)

    def groups(self, pred: Predictions) -> GroupView:
        """The groups this view compares, on its table."""
        return self.table(pred).groups(self.attribute)

    def checked(self, pred: Predictions) -> "View":
        """This view with its attribute filled in, once every name it holds is one of ``pred``'s."""
        table = pred.at(self)                            # an unknown model or class is named here
        attribute = self.attribute or table.attribute_names[0]
        groups = table.groups(attribute)                 # … an unknown attribute or slice here
        if self.reference is not None and self.reference not in groups.names:
            raise UnknownName(f"There is no group '{self.reference}' in '{attribute}' (groups: "
                              f"{', '.join(groups.names)}).")
        return replace(self, attribute=attribute)

    # ------------------------------------------------------------------------------------------ the address

    def to_params(self) -> dict[str, str]:
        """The view as address parameters (a link's ``?attribute=…&tau=…``), the defaults (None) left out; τ with
        two decimals, as the app's slider steps."""
        params = {}
        for name, param in PARAMS.items():
            value = getattr(self, name)
            if value is not None:
                params[param] = f"{value:.2f}" if name == "threshold" else str(value)
        return params

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> "View":
        """The view an address names (``to_params``' parameters; others are ignored). An unreadable τ or benefit is
        a ``DataError`` naming it; whether the names fit the data is ``checked``'s to say."""
        chosen = {name: params[param] for name, param in PARAMS.items() if params.get(param) is not None}
        if "threshold" in chosen:
            try:
                chosen["threshold"] = float(chosen["threshold"])
            except ValueError:
                raise DataError(f"The address's τ ('tau') must be a number in [0, 1] (got "
                                f"{params[PARAMS['threshold']]!r}).") from None
        return cls(**chosen)
