"""Which pair a reading names first: the reference group against one other group (Aequitas' convention), never a
group under the size floor.

The concepts' readings used to name "the most extreme pair", which is nearly always two tiny groups (COMPAS: Asian,
n = 32, against Native American, n = 18), where sampling noise alone makes the largest gaps. A reading now opens on
``reference`` against ``group`` (the Summary's top finding, or a group a link asked for); without one, on the
reference against the largest other group. All-pairs tables and heatmaps stay as detail.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

MIN_GROUP_SIZE = 100          # the Summary's default size floor (fairviz.findings.FindingsParams.min_group_size)


@dataclass(frozen=True)
class Focus:
    reference: str | None = None          # None: the largest group
    min_group_size: int = MIN_GROUP_SIZE
    group: str | None = None              # the group compared with the reference (the top finding's); None: largest

    def reference_of(self, sizes: Mapping[str, int]) -> str | None:
        """The reference when it is among ``sizes``, else the largest group (the first of equal ones)."""
        if not sizes:
            return None
        if self.reference in sizes:
            return self.reference
        names = list(sizes)
        return max(names, key=lambda g: (sizes[g], -names.index(g)))

    def large_enough(self, sizes: Mapping[str, int]) -> list[str]:
        """The groups at or above the size floor, in the given order."""
        return [g for g in sizes if sizes[g] >= self.min_group_size]

    def pair(self, sizes: Mapping[str, int]) -> tuple[str, str] | None:
        """(group, reference): ``group`` when it is another group at or above the floor, else the largest other group
        at or above it; None when no other group reaches the floor (no comparison is worth headlining)."""
        reference = self.reference_of(sizes)
        others = [g for g in self.large_enough(sizes) if g != reference]
        if not others:
            return None
        if self.group in others:
            return self.group, reference
        return max(others, key=lambda g: (sizes[g], -others.index(g))), reference

    def pair_or_largest(self, sizes: Mapping[str, int]) -> tuple[str, str] | None:
        """``pair``, or where no other group reaches the floor, the reference against the largest other group (a
        picker needs a pair; its reading says the groups are too small to tell). None with fewer than two groups."""
        found = self.pair(sizes)
        if found is not None:
            return found
        reference = self.reference_of(sizes)
        others = [g for g in sizes if g != reference]
        if not others:
            return None
        return max(others, key=lambda g: (sizes[g], -others.index(g))), reference
