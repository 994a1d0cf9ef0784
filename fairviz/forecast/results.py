"""Forecast fairness's settings and results: per-group scores, coverage gaps between groups and per-group skill of
one model over another ([3] ch. 5). Frozen dataclasses; their tables are what the page, the HTML report, the
terminal and the JSON show."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairviz.core import stats
from fairviz.forecast import crps as scores

MIN_SERIES_FOR_CI = 5          # fewer series in a group: its cluster-bootstrap intervals are undefined

@dataclass(frozen=True)
class EvalParams:
    bands: tuple[float, ...] = scores.BANDS
    resamples: int = 1000
    level: float = 0.95
    seed: int = 0


@dataclass(frozen=True)
class GroupScores:
    name: str
    n_series: int
    n_rows: int
    crps: float
    pinball: float
    coverage: dict                        # band → share inside (None: band not described by the levels)
    width: dict                           # band → mean width
    ci: dict                              # metric key ("crps", "pinball", "coverage_0.9", "width_0.9") → Interval
    pit_hist: np.ndarray
    crps_by_step: dict                    # step → mean CRPS

    def to_dict(self) -> dict:
        return {"n_series": self.n_series, "n_rows": self.n_rows, "crps": self.crps, "pinball": self.pinball,
                "coverage": {band_key(b): v for b, v in self.coverage.items()},
                "width": {band_key(b): v for b, v in self.width.items()},
                "ci": {k: v.to_list() for k, v in self.ci.items()}, "pit_histogram": self.pit_hist.tolist()}


@dataclass(frozen=True)
class CoverageGap:
    """Coverage of group i minus group j for one band (i − j), with a bootstrap interval."""
    band: float
    group_i: str
    group_j: str
    gap: float
    ci: stats.Interval

    @property
    def excludes_zero(self) -> bool:
        """The interval lies on one side of 0: the groups' coverages differ beyond resampling noise."""
        return bool(np.isfinite(self.ci.low) and (self.ci.low > 0 or self.ci.high < 0))


@dataclass(frozen=True)
class GroupSkill:
    """Model A against model B on the same (series, step) rows of one group: skill = 1 − CRPS_A / CRPS_B."""
    name: str
    n_series: int
    crps_a: float
    crps_b: float
    skill: float
    ci: stats.Interval
    share_series_better: float            # share of series where A's mean CRPS < B's


@dataclass(frozen=True)
class ForecastAudit:
    attribute: str
    model: str
    params: EvalParams
    levels: np.ndarray
    bands: tuple[float, ...]              # the bands the levels describe
    undefined_bands: tuple[float, ...]    # asked for, but outside the levels given
    overall: GroupScores
    groups: list[GroupScores]
    gaps: list[CoverageGap]               # every pair, every band
    compare_model: str | None = None
    skills: list[GroupSkill] = field(default_factory=list)
    skill_overall: GroupSkill | None = None
    warnings: tuple[str, ...] = ()
    crps_equal_weights: float = float("nan")   # the equal-weight form's mean over every row, for comparison

    def group(self, name: str) -> GroupScores:
        return next(g for g in self.groups if g.name == name)

    @property
    def headline_band(self) -> float | None:
        """The band the summary reads: 90% when it is defined, else the widest defined band."""
        return 0.9 if 0.9 in self.bands else (self.bands[-1] if self.bands else None)

    def honesty(self, name: str, band: float) -> str:
        """Whether a group's band is too wide, too narrow or about right (its coverage CI excludes the nominal
        level or not); "unknown" when the group has too few series for an interval."""
        ci = self.group(name).ci.get(f"coverage_{band_key(band)}")
        if ci is None or not np.isfinite(ci.low):
            return "unknown"
        if ci.low > band:
            return "too wide"
        if ci.high < band:
            return "too narrow"
        return "about right"

    def groups_table(self) -> pd.DataFrame:
        """One row per group and one for all: accuracy, and coverage and width per band, with intervals."""
        rows = []
        for g in [*self.groups, self.overall]:
            row = {"group": g.name, "series": g.n_series, "rows": g.n_rows, "crps": g.crps, "crps_ci": _ci(g, "crps"),
                   "pinball": g.pinball, "pinball_ci": _ci(g, "pinball")}
            for b in self.bands:
                row[f"coverage_{band_key(b)}"] = g.coverage[b]
                row[f"coverage_{band_key(b)}_ci"] = _ci(g, f"coverage_{band_key(b)}")
                row[f"width_{band_key(b)}"] = g.width[b]
            rows.append(row)
        return pd.DataFrame(rows)

    def gaps_table(self) -> pd.DataFrame:
        """Every pair and band: coverage of i minus j with its interval."""
        return pd.DataFrame([{"band": g.band, "group_i": g.group_i, "group_j": g.group_j, "gap": g.gap,
                              "ci": _pair(g.ci), "differs": g.excludes_zero} for g in self.gaps],
                            columns=["band", "group_i", "group_j", "gap", "ci", "differs"])

    def skills_table(self) -> pd.DataFrame:
        """Per group and for all: CRPS of both models, the skill of A over B and its paired-bootstrap interval."""
        return pd.DataFrame([{"group": s.name, "series": s.n_series, "crps_a": s.crps_a, "crps_b": s.crps_b,
                              "skill": s.skill, "ci": _pair(s.ci), "share_series_better": s.share_series_better}
                             for s in [*self.skills, *([self.skill_overall] if self.skill_overall else [])]],
                            columns=["group", "series", "crps_a", "crps_b", "skill", "ci", "share_series_better"])

    def largest_gap(self, band: float) -> CoverageGap | None:
        gaps = [g for g in self.gaps if g.band == band and np.isfinite(g.gap)]
        return max(gaps, key=lambda g: abs(g.gap)) if gaps else None

    def to_dict(self) -> dict:
        out = {"attribute": self.attribute, "model": self.model, "levels": self.levels.tolist(),
               "bands": [band_key(b) for b in self.bands],
               "undefined_bands": [band_key(b) for b in self.undefined_bands],
               "resamples": self.params.resamples, "seed": self.params.seed, "ci_level": self.params.level,
               "overall": self.overall.to_dict(), "groups": {g.name: g.to_dict() for g in self.groups},
               "coverage_gaps": [{"band": band_key(g.band), "group_i": g.group_i, "group_j": g.group_j,
                                  "gap": g.gap, "ci": g.ci.to_list()} for g in self.gaps],
               "warnings": list(self.warnings),
               "crps_definition": {"form": "cell-width weighted pinball", "text": scores.CRPS_DEFINITION,
                                   "level_weights": scores.level_weights(self.levels).tolist(),
                                   "equal_weight_crps": self.crps_equal_weights}}
        if self.compare_model:
            out["comparison"] = {
                "model_a": self.model, "model_b": self.compare_model,
                "overall": _skill_dict(self.skill_overall) if self.skill_overall else None,
                "groups": {s.name: _skill_dict(s) for s in self.skills}}
        return out


def _skill_dict(s: GroupSkill) -> dict:
    return {"n_series": s.n_series, "crps_a": s.crps_a, "crps_b": s.crps_b, "skill": s.skill,
            "ci": s.ci.to_list(), "share_series_better": s.share_series_better}


def band_key(band: float) -> str:
    return f"{band:g}"


def _pair(interval: stats.Interval | None) -> tuple[float, float] | None:
    return None if interval is None else (interval.low, interval.high)


def _ci(g: GroupScores, metric: str) -> tuple[float, float] | None:
    return _pair(g.ci.get(metric))

