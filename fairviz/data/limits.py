"""Bounds that keep one file from taking a shared server down: how many groups an attribute may have, and
how many of them are compared pair by pair.

Group-count limits (checked in the data model, so every concept and page inherits them):

- ``MAX_GROUPS`` (default 200, ``FAIRVIZ_MAX_GROUPS`` on a server, ``--max-groups`` in the CLI): an attribute —
  a column or an intersection 'a × b' — with more groups than this is refused with one message naming it.
  Above a few hundred groups every per-group chart, table and test is unreadable anyway, and a column with
  that many values is usually an id, not a group.
- ``MAX_PAIR_GROUPS`` (default 12, ``FAIRVIZ_MAX_PAIR_GROUPS``, ``--max-pair-groups``): all-pairs work grows
  with the square of the group count (100 groups are 4,950 pairs, each with its own resampling). Pair tables,
  pair tests and pair intervals cover the pairs among the ``MAX_PAIR_GROUPS`` largest groups; every group still
  gets its own per-group numbers, and the result says which pairs were left out.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from fairviz.core.settings import env_int


MAX_GROUPS = env_int("FAIRVIZ_MAX_GROUPS", 200, 2, 100_000)     # a bad value: named in the log, the default kept
MAX_PAIR_GROUPS = env_int("FAIRVIZ_MAX_PAIR_GROUPS", 12, 2, 1_000)


@dataclass(frozen=True)
class GroupLimits:
    """The caps one Predictions object was validated under (kept with it, so lazily built intersections and every
    analysis of it apply the same ones)."""

    max_groups: int = MAX_GROUPS
    max_pair_groups: int = MAX_PAIR_GROUPS

    def __post_init__(self):
        if self.max_groups < 2 or self.max_pair_groups < 2:
            raise ValueError("group limits must be at least 2 (fairness compares at least two groups)")

    def too_many_groups(self, attribute: str, n_groups: int) -> str | None:
        """The message for an attribute over the cap, or None when it is within it."""
        if n_groups <= self.max_groups:
            return None
        return (f"The group attribute '{attribute}' has {n_groups:,} groups; the limit is {self.max_groups:,} per "
                "attribute (an id-like column, or an intersection that is too fine?). Choose another group column, "
                "merge rare groups, or raise the limit (--max-groups in the CLI, FAIRVIZ_MAX_GROUPS on a server).")

    def pair_indices(self, n_groups: int) -> list[tuple[int, int]]:
        """Pairs (i, j), i < j, among the ``max_pair_groups`` first groups (groups are ordered largest first)."""
        return list(combinations(range(min(n_groups, self.max_pair_groups)), 2))

    def pair_groups(self, n_groups: int) -> int:
        return min(n_groups, self.max_pair_groups)

    def pair_note(self, attribute: str, n_groups: int) -> str | None:
        """What a summarised pair table says about the pairs it leaves out (None when it covers every pair)."""
        if n_groups <= self.max_pair_groups:
            return None
        total = n_groups * (n_groups - 1) // 2
        kept = self.max_pair_groups * (self.max_pair_groups - 1) // 2
        return (f"'{attribute}' has {n_groups:,} groups ({total:,} pairs): pair comparisons cover the "
                f"{kept:,} pairs among the {self.max_pair_groups} largest groups; every group keeps its own numbers. "
                "Raise the limit with --max-pair-groups (FAIRVIZ_MAX_PAIR_GROUPS on a server) to compare more.")


DEFAULT_LIMITS = GroupLimits()
