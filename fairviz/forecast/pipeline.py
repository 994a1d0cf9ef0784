"""The Lorenz → NVAR → PTN pipeline ([3] ch. 5, at demo size) shared by the page, ``fairviz ptn train`` and the
asset script.

``prepare(ForecastDataParams)`` simulates four partitions with unseen parameter draws each (NVAR fit, PTN train, PTN
architecture/validation, test), fits the NVAR and cuts the windows; ``evaluate(quantiles, data)`` scores a
model's fans against the thesis's Gaussian-NVAR baseline; ``Fans`` is what the page draws. Nothing here imports
torch: the caller passes quantiles in (``ptn.predict`` makes them).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from fairviz.core import runtime
from fairviz.forecast import crps as scores
from fairviz.forecast import lorenz, nvar
from fairviz.forecast import windows as win
from fairviz.forecast.density import mode_count
import time
import io
from fairviz.forecast import ptn

ASSET = Path(__file__).resolve().parents[2] / "assets" / "forecast" / "lorenz_ptn.npz"


@dataclass(frozen=True)
class ForecastDataParams:
    """Partitions as systems × initial conditions (a larger run uses 20×25, 10×25, 4×25, 6×25)."""
    fit_systems: int = 12
    fit_initial: int = 20
    train_systems: int = 8
    train_initial: int = 20
    arch_systems: int = 3
    arch_initial: int = 20
    test_systems: int = 4
    test_initial: int = 20
    stride: int = win.STRIDE
    seed: int = 0
    param_ranges: tuple = tuple(map(tuple, lorenz.PARAM_RANGES.tolist()))

    @staticmethod
    def from_dict(values: dict) -> "ForecastDataParams":
        known = {f.name for f in fields(ForecastDataParams)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown data settings: {', '.join(sorted(unknown))}")
        if "param_ranges" in values:
            values = {**values, "param_ranges": tuple(map(tuple, values["param_ranges"]))}
        return ForecastDataParams(**values)


@dataclass(frozen=True)
class DemoData:
    config: ForecastDataParams
    nvar: nvar.NVAR
    train: win.Windows
    arch: win.Windows
    test: win.Windows
    test_set: lorenz.LorenzSet
    baseline_sd: np.ndarray               # (16,) per-lead NVAR MAE on the architecture/validation split
    nvar_lead_mae: np.ndarray             # (16,) on the test split
    static_bounds: np.ndarray = field(default_factory=lambda: lorenz.PARAM_RANGES.copy())


def _partition_sizes(config: ForecastDataParams) -> list[tuple[int, int]]:
    return [(config.fit_systems, config.fit_initial), (config.train_systems, config.train_initial),
            (config.arch_systems, config.arch_initial), (config.test_systems, config.test_initial)]


def _partition(config: ForecastDataParams, k: int) -> lorenz.LorenzSet:
    """Partition k (0 fit, 1 train, 2 architecture/validation, 3 test), each with its own parameter draws."""
    systems, initial = _partition_sizes(config)[k]
    if systems < 1 or initial < 1:
        raise ValueError("every partition needs at least one system and one initial condition")
    return lorenz.generate(systems, initial, seed=config.seed * 10 + k,
                           param_ranges=np.asarray(config.param_ranges, dtype=float))


def test_set(config: ForecastDataParams) -> lorenz.LorenzSet:
    """The test partition alone (the same trajectories ``prepare`` makes), e.g. to forecast any test window."""
    return _partition(config, 3)


def prepare(config: ForecastDataParams = ForecastDataParams(), progress=None) -> DemoData:
    ranges = np.asarray(config.param_ranges, dtype=float)
    sets = []
    for k in range(4):
        sets.append(_partition(config, k))
        if progress:
            progress(0.15 * (k + 1), "simulating Lorenz systems")
    return prepare_from_sets(config, *sets, static_bounds=ranges, progress=progress)


def prepare_from_sets(config: ForecastDataParams, fit_set, train_set, arch_set, test_part, static_bounds,
                      progress=None) -> DemoData:
    """Fit the NVAR on ``fit_set`` and cut windows from the other three partitions."""
    model = nvar.fit(fit_set.states, stride=2)
    if progress:
        progress(0.7, "fitting the NVAR forecaster")
    cut = [win.from_set(model, s, config.stride, static_bounds) for s in (train_set, arch_set, test_part)]
    if progress:
        progress(1.0, "cutting windows")
    sd = win.baseline_sd(model, cut[1])
    test = cut[2]
    return DemoData(config, model, cut[0], cut[1], test, test_part, sd,
                    np.abs(test.latest_forecast - test.target).mean(axis=0), np.asarray(static_bounds, float))


def baseline_quantiles(data: DemoData, windows: win.Windows, c: int = scores.N_QUANTILES) -> np.ndarray:
    """[3] ch. 5's baseline: N(NVAR forecast, per-lead MAE²) at the same levels as the PTN: (N, 16, c)."""
    return scores.gaussian_quantiles(windows.latest_forecast, np.broadcast_to(data.baseline_sd, windows.target.shape),
                                     scores.levels(c))


@dataclass(frozen=True)
class Evaluation:
    """Scores of one model on the test windows, next to the Gaussian-NVAR baseline (all in x units)."""
    crps_model: np.ndarray                 # (N,) per forecast (mean over its 16 steps)
    crps_baseline: np.ndarray
    skill: scores.Skill
    coverage: dict                         # band → share of (window, step) truths inside
    coverage_baseline: dict
    width: dict                            # band → mean width
    pit_hist: np.ndarray                   # (10,)
    pit_hist_baseline: np.ndarray
    crps_by_lead: np.ndarray               # (16,)
    crps_by_lead_baseline: np.ndarray

    def to_dict(self) -> dict:
        return {"skill_vs_gaussian_nvar": self.skill.to_dict(),
                "crps_mean": float(self.crps_model.mean()), "crps_baseline_mean": float(self.crps_baseline.mean()),
                "crps_median": float(np.median(self.crps_model)),
                "crps_baseline_median": float(np.median(self.crps_baseline)),
                "coverage": {str(k): v for k, v in self.coverage.items()},
                "coverage_baseline": {str(k): v for k, v in self.coverage_baseline.items()},
                "width": {str(k): v for k, v in self.width.items()},
                "pit_histogram": self.pit_hist.tolist(), "pit_histogram_baseline": self.pit_hist_baseline.tolist(),
                "crps_by_lead": self.crps_by_lead.tolist(), "crps_by_lead_baseline": self.crps_by_lead_baseline.tolist()}


def evaluate(quantiles: np.ndarray, data: DemoData, windows: win.Windows | None = None) -> Evaluation:
    windows = windows or data.test
    tau = scores.levels(quantiles.shape[-1])
    base = baseline_quantiles(data, windows, quantiles.shape[-1])
    y = windows.target
    model_steps = scores.crps_ensemble(quantiles, y)
    base_steps = scores.crps_ensemble(base, y)
    cover = {b: float(np.nanmean(scores.inside(quantiles, y, tau, b))) for b in scores.BANDS}
    cover_b = {b: float(np.nanmean(scores.inside(base, y, tau, b))) for b in scores.BANDS}
    widths = {b: float(np.nanmean(scores.width(quantiles, tau, b))) for b in scores.BANDS}
    return Evaluation(model_steps.mean(-1), base_steps.mean(-1), scores.skill(model_steps.mean(-1), base_steps.mean(-1)),
                      cover, cover_b, widths, scores.pit_histogram(scores.pit(quantiles, y, tau)),
                      scores.pit_histogram(scores.pit(base, y, tau)), model_steps.mean(0), base_steps.mean(0))


# ----------------------------------------------------------------------------------------------- fans

@dataclass(frozen=True)
class Fans:
    """A few test windows ready to draw: history, truth, NVAR forecast and the PTN's sorted quantiles."""
    history_x: np.ndarray                  # (K, 16) x at t−15 … t
    truth: np.ndarray                      # (K, 16) x at t+1 … t+16
    nvar: np.ndarray                       # (K, 16)
    quantiles: np.ndarray                  # (K, 16, 111) sorted
    baseline: np.ndarray                   # (K, 16, 111)
    params: np.ndarray                     # (K, 3) σ, ρ, β
    origin: np.ndarray                     # (K,) time index
    dt: float = float(lorenz.TIME_GRID[1] - lorenz.TIME_GRID[0])

    @property
    def n(self) -> int:
        return int(self.truth.shape[0])

    def crps(self) -> np.ndarray:
        return scores.crps_forecast(self.quantiles, self.truth)

    def crps_baseline(self) -> np.ndarray:
        return scores.crps_forecast(self.baseline, self.truth)

    def spread(self) -> np.ndarray:
        """Mean width per window between the 6th lowest and 6th highest quantile (about the 90% band)."""
        return (self.quantiles[..., -6] - self.quantiles[..., 5]).mean(-1)

    def modes(self) -> np.ndarray:
        """The most separate modes of each window's density over its steps."""
        return np.array([mode_count(self.quantiles[i]).max() for i in range(self.n)])

    def most_multimodal(self) -> int:
        """The window whose density has the most modes ([3] Fig. 5.6), the wider fan on a tie."""
        return int(np.argmax(self.modes() + 1e-3 * self.spread()))

    def most_confident(self) -> int:
        """The narrowest fan ([3] Fig. 5.5)."""
        return int(np.argmin(self.spread()))

    def score(self, i: int) -> "FanScore":
        """One window's fan against the truth: CRPS of the PTN and of the baseline, band coverage, modes per step."""
        q, truth = self.quantiles[i], self.truth[i]
        tau = scores.levels(q.shape[-1])
        return FanScore(float(scores.crps_forecast(q[None], truth[None])[0]),
                        float(scores.crps_forecast(self.baseline[i][None], truth[None])[0]),
                        {b: float(np.mean(scores.inside(q, truth, tau, b))) for b in scores.BANDS},
                        mode_count(q))


@dataclass(frozen=True)
class FanScore:
    crps: float
    crps_baseline: float
    inside: dict                           # band → share of the steps whose truth is inside
    modes: np.ndarray                      # (steps,) modes of the density per step

    @property
    def multimodal_steps(self) -> np.ndarray:
        """Steps (1-based) where the density has two or more modes."""
        return np.flatnonzero(self.modes >= 2) + 1


def make_fans(data: DemoData, quantiles: np.ndarray, index: np.ndarray, windows: win.Windows | None = None) -> Fans:
    windows = windows or data.test
    index = np.asarray(index, dtype=int)
    w = windows.take(index)
    history_x = data.nvar.denormalise(w.history)[..., 0]
    params = data.test_set.trajectory_params[w.trajectory] if windows is data.test else \
        np.full((index.size, 3), np.nan)
    return Fans(history_x, w.target, w.latest_forecast, quantiles[index], baseline_quantiles(data, w), params, w.origin)


def pick_showcase(quantiles: np.ndarray, windows: win.Windows, k: int = 24, seed: int = 0) -> np.ndarray:
    """``k`` test windows to ship, from a random pool of 600: the most multimodal ones, the most confident ones,
    and a random rest (so the page can show both Fig 5.5 and Fig 5.6 of the thesis, and ordinary cases)."""
    rng = np.random.default_rng(seed)
    pool = np.sort(rng.choice(quantiles.shape[0], min(600, quantiles.shape[0]), replace=False))
    modes = mode_count(quantiles[pool]).max(axis=1)
    spread = (quantiles[pool][..., -6] - quantiles[pool][..., 5]).mean(-1)
    multimodal = pool[np.argsort(-modes - 1e-3 * spread, kind="stable")[: k // 4]]
    confident = [i for i in pool[np.argsort(spread, kind="stable")] if i not in set(multimodal)][: k // 4]
    rest = np.setdiff1d(pool, np.concatenate([multimodal, confident]))
    random = rng.choice(rest, min(k - len(multimodal) - len(confident), rest.size), replace=False)
    return np.sort(np.concatenate([multimodal, confident, random]).astype(int))


def fans_to_arrays(fans: Fans, prefix: str = "fans/") -> dict:
    """The baseline quantiles are left out: they follow from the NVAR forecast and the baseline sd."""
    return {f"{prefix}{f.name}": np.asarray(getattr(fans, f.name)) for f in fields(Fans) if f.name != "baseline"}


def fans_from_arrays(arrays, baseline_sd: np.ndarray, prefix: str = "fans/") -> Fans:
    values = {f.name: np.asarray(arrays[f"{prefix}{f.name}"]) for f in fields(Fans) if f.name not in ("baseline", "dt")}
    values["quantiles"] = values["quantiles"].astype(float)
    tau = scores.levels(values["quantiles"].shape[-1])
    values["baseline"] = scores.gaussian_quantiles(values["nvar"], np.broadcast_to(baseline_sd, values["nvar"].shape), tau)
    return Fans(**values, dt=float(arrays[f"{prefix}dt"]))


def config_json(data_config: ForecastDataParams, extra: dict | None = None) -> np.ndarray:
    return np.frombuffer(json.dumps({"data": asdict(data_config), **(extra or {})}).encode(), dtype=np.uint8)


def read_json(array) -> dict:
    return json.loads(bytes(np.asarray(array, dtype=np.uint8)).decode())


# ----------------------------------------------------------------------------------------------- pipeline + bundle

@dataclass(frozen=True)
class PipelineParams:
    """What ``fairviz ptn train --config`` reads: {"data": {...}, "ptn": {...}, "train": {...}, "fans": 24}."""
    data: ForecastDataParams = field(default_factory=ForecastDataParams)
    ptn: dict = field(default_factory=dict)          # PTNParams fields (kept as a dict: no torch needed here)
    train: dict = field(default_factory=dict)        # PTNTrainParams fields
    fans: int = 24

    def label(self) -> str:
        """A short name for a model trained with these settings (the page's model picker), ending in a digest of
        every setting so that two configurations never share a name."""
        digest = hashlib.blake2b(json.dumps(asdict(self), sort_keys=True, default=str).encode(),
                                 digest_size=4).hexdigest()
        return (f"d={self.ptn['d']}, {self.train['epochs']} epochs, lr {self.ptn['lr']:g}"
                f"{'' if self.ptn['use_static'] else ', no static'}, seed {self.train['seed']} [{digest}]")

    @staticmethod
    def from_dict(values: dict) -> "PipelineParams":
        unknown = set(values) - {"data", "ptn", "train", "fans"}
        if unknown:
            raise ValueError(f"unknown config sections: {', '.join(sorted(unknown))} "
                             "(expected data, ptn, train, fans)")
        fans = int(values.get("fans", 24))
        if fans < 1:
            raise ValueError("fans must be at least 1")

        ptn.PTNParams.from_dict(dict(values.get("ptn", {})))
        ptn.PTNTrainParams.from_dict(dict(values.get("train", {})))
        return PipelineParams(ForecastDataParams.from_dict(values.get("data", {})), dict(values.get("ptn", {})),
                              dict(values.get("train", {})), fans)


@dataclass(frozen=True)
class Bundle:
    """A trained PTN with everything the page shows: what the shipped asset and ``fairviz ptn train`` hold."""
    trained: object                       # ptn.TrainedPTN
    nvar: nvar.NVAR
    baseline_sd: np.ndarray
    nvar_lead_mae: np.ndarray
    static_bounds: np.ndarray
    fans: Fans
    evaluation: Evaluation
    data_config: ForecastDataParams
    meta: dict = field(default_factory=dict)


def run_pipeline(config: PipelineParams = PipelineParams(), progress=None, on_epoch=None,
                 data: DemoData | None = None) -> Bundle:
    """Simulate, fit the NVAR, train the PTN, score it on the test partition and keep showcase fans."""


    tic = time.perf_counter()
    step = (lambda lo, hi: (lambda f, m: progress(lo + (hi - lo) * f, m))) if progress else (lambda lo, hi: None)
    data = data or prepare(config.data, step(0.0, 0.1))
    data_seconds = time.perf_counter() - tic
    trained = ptn.train(data.train, data.arch, ptn.PTNParams.from_dict(config.ptn),
                        ptn.PTNTrainParams.from_dict(config.train), progress=step(0.1, 0.95), on_epoch=on_epoch)
    with runtime.heartbeat(progress, 0.95, f"forecasting {data.test.n:,} test windows"):
        quantiles = ptn.predict(trained, data.test)
    evaluation = evaluate(quantiles, data)
    index = pick_showcase(quantiles, data.test, min(config.fans, data.test.n), seed=config.data.seed)
    fans = make_fans(data, quantiles, index)
    if progress:
        progress(1.0, "done")
    meta = {"data_seconds": data_seconds, "train_seconds": trained.seconds,
            "seconds_per_epoch": trained.seconds_per_epoch, "device": trained.device,
            "device_label": runtime.describe_device(trained.device),
            "windows": {"train": data.train.n, "arch": data.arch.n, "test": data.test.n},
            "raw_order_penalty": ptn.raw_order_penalty(trained, data.test.take(np.arange(min(512, data.test.n)))),
            "showcase_index": index.tolist()}
    return Bundle(trained, data.nvar, data.baseline_sd, data.nvar_lead_mae, data.static_bounds, fans, evaluation,
                  config.data, meta)


def save_bundle(bundle: Bundle, path) -> None:


    ev = bundle.evaluation
    arrays = {**ptn.to_arrays(bundle.trained), **bundle.nvar.to_arrays(), **fans_to_arrays(_compact(bundle.fans)),
              "baseline_sd": bundle.baseline_sd, "nvar_lead_mae": bundle.nvar_lead_mae,
              "static_bounds": bundle.static_bounds,
              "eval/crps_model": ev.crps_model.astype(np.float32), "eval/crps_baseline": ev.crps_baseline.astype(np.float32),
              "meta": config_json(bundle.data_config, {"meta": bundle.meta, "evaluation": ev.to_dict()})}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    Path(path).write_bytes(buffer.getvalue())


def _compact(fans: Fans) -> Fans:
    """Quantiles as float32: the shipped file stays small and the error (~1e-6 relative) is invisible."""
    return Fans(fans.history_x, fans.truth, fans.nvar, fans.quantiles.astype(np.float32), fans.baseline,
                fans.params, fans.origin, fans.dt)


def load_bundle(path=ASSET) -> Bundle:
    """Read a bundle without torch (weights stay numpy arrays until a forecast is asked for)."""

    with np.load(path, allow_pickle=False) as arrays:
        meta = read_json(arrays["meta"])
        trained = ptn.from_arrays(arrays)
        fans = fans_from_arrays(arrays, np.asarray(arrays["baseline_sd"]))
        e = meta["evaluation"]
        bands = lambda d: {float(k): v for k, v in d.items()}  # noqa: E731
        crps_m = arrays["eval/crps_model"].astype(float)
        crps_b = arrays["eval/crps_baseline"].astype(float)
        evaluation = Evaluation(crps_m, crps_b, scores.skill(crps_m, crps_b), bands(e["coverage"]),
                                bands(e["coverage_baseline"]), bands(e["width"]), np.asarray(e["pit_histogram"]),
                                np.asarray(e["pit_histogram_baseline"]), np.asarray(e["crps_by_lead"]),
                                np.asarray(e["crps_by_lead_baseline"]))
        return Bundle(trained, nvar.NVAR.from_arrays(arrays), np.asarray(arrays["baseline_sd"]),
                      np.asarray(arrays["nvar_lead_mae"]), np.asarray(arrays["static_bounds"]), fans, evaluation,
                      ForecastDataParams.from_dict(meta["data"]), meta.get("meta", {}))


def forecast_trajectory(bundle: Bundle, states: np.ndarray, params, origin: int, module=None) -> Fans:
    """The bundle's PTN (needs torch) on a new trajectory at one origin: a single fan."""

    w = win.from_trajectory(bundle.nvar, states, params, np.array([origin]), bundle.static_bounds)
    q = ptn.predict(bundle.trained, w, module=module)
    base = scores.gaussian_quantiles(w.latest_forecast, bundle.baseline_sd[None, :], scores.levels(q.shape[-1]))
    return Fans(bundle.nvar.denormalise(w.history)[..., 0], w.target, w.latest_forecast, q, base,
                np.atleast_2d(np.asarray(params, float)), w.origin)
