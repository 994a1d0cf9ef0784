"""The genetic hyperparameter search of [3] Algorithm 2, at demo size.

The search itself is generic: ``search(evaluate, space, ...)`` calls ``evaluate(genes) → (f, f_v)`` (fitness and
validation fitness, lower is better: CRPS) for every new agent. ``ptn_search`` plugs in PTN training with DARTS.

Per generation: evaluate the current population A_c; add it to the archive A; stop early when the best f_v in A
has not improved for ``patience`` generations; every ``elite_every`` generations replace the worst ``n_elite``
agents of A_c by the best of A \\ A_c; breed the next population by tournament selection and proportional
crossover; each child's expected fitness is its parents' mean f_v and its mutation probability rises linearly
with the rank of that expectation, from 0.05 (best) to 0.6 (worst). Return A sorted by f² + f_v², ascending
(the seed's Algorithm 2 says "descending", a slip for a lower-is-better score).
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from fairviz.core import runtime
from fairviz.core.progress import Completion, Stopped
from fairviz.forecast import crps as scores
from fairviz.forecast import ptn

MUTATION_RANGE = (0.05, 0.6)
ODD = tuple(range(1, 16, 2))


@dataclass(frozen=True)
class Param:
    name: str
    kind: str                       # "choice" or "range"
    values: tuple = ()              # for choices
    low: float = 0.0                # for ranges
    high: float = 1.0
    log: bool = False
    ordered: bool = True            # for choices: interpolate (True) or pick a parent's value (False)

    def sample(self, rng: np.random.Generator):
        if self.kind == "choice":
            return self.values[int(rng.integers(len(self.values)))]
        if self.log:
            return float(math.exp(rng.uniform(math.log(self.low), math.log(self.high))))
        return float(rng.uniform(self.low, self.high))


# Table 5.1 of the thesis, except the hidden size: d from {24, 48, 72} (multiples of 24, the lcm of the head
# choices; the thesis uses 72 … 240) so that a candidate trains on a CPU in seconds. Both AdamW learning rates
# (architecture and other parameters) are log-uniform on the thesis's [1e-5, 1e-3].
LR_RANGE = (1e-5, 1e-3)
PTN_SPACE: tuple[Param, ...] = (
    Param("d", "choice", (24, 48, 72)),
    Param("dropout", "range", low=0.0, high=0.5),
    Param("first_dropout", "range", low=0.0, high=0.5),
    Param("slope", "range", low=0.0, high=0.3),
    Param("history_heads", "choice", (2, 3, 4, 6, 8, 12)),
    Param("forecast_heads", "choice", (2, 3, 4, 6, 8, 12)),
    Param("noise_std", "range", low=0.0, high=0.25),
    Param("arch_lr", "range", low=LR_RANGE[0], high=LR_RANGE[1], log=True),
    Param("arch_beta1", "range", low=0.5, high=0.99),
    Param("arch_beta2", "range", low=0.95, high=0.999),
    Param("lr", "range", low=LR_RANGE[0], high=LR_RANGE[1], log=True),
    Param("beta1", "range", low=0.5, high=0.99),
    Param("beta2", "range", low=0.95, high=0.999),
    Param("norm", "choice", ("layer", "batch", "none"), ordered=False),
    Param("history_embed_kernel", "choice", ODD),
    Param("history_kernel", "choice", ODD),
    Param("collapse_kernel_width", "choice", ODD),
    Param("collapse_kernel_height", "choice", ODD),
    Param("forecast_embed_kernel", "choice", ODD[:5]),
    Param("forecast_kernel", "choice", ODD),
    Param("output_kernel_time", "choice", ODD),
    Param("output_kernel_features", "choice", ODD),
)


@dataclass
class Agent:
    id: int
    generation: int
    genes: dict
    parents: tuple = ()
    expected: float | None = None        # parents' mean f_v (children only)
    mutation_probability: float | None = None
    mutated: tuple = ()                  # names of mutated genes
    fitness: float = float("nan")        # f: CRPS on the genetic-train split
    val_fitness: float = float("nan")    # f_v: CRPS on the genetic-validation split
    seconds: float = 0.0

    @property
    def evaluated(self) -> bool:
        return math.isfinite(self.fitness) and math.isfinite(self.val_fitness)

    @property
    def combined(self) -> float:
        return self.fitness**2 + self.val_fitness**2


@dataclass(frozen=True)
class SearchResult:
    ranking: list                        # every evaluated agent, by f² + f_v² ascending
    best_by_generation: list             # best f_v in the archive after each generation
    generations_run: int
    stopped_early: bool
    settings: dict = field(default_factory=dict)
    completion: Completion | None = None   # set when a Stop came first: the candidates trained before it

    def table(self) -> list[dict]:
        rows = []
        for rank, a in enumerate(self.ranking, start=1):
            rows.append({"rank": rank, "agent": a.id, "generation": a.generation, "f (CRPS)": a.fitness,
                         "f_v (CRPS)": a.val_fitness, "f² + f_v²": a.combined,
                         "parents": ", ".join(map(str, a.parents)) or "random",
                         "mutation p": a.mutation_probability, "mutated": ", ".join(a.mutated),
                         "seconds": a.seconds, **a.genes})
        return rows


def random_genes(space, rng) -> dict:
    return {p.name: p.sample(rng) for p in space}


def _weights(fa: float, fb: float) -> tuple[float, float]:
    """Parent weights proportional to fitness, where fitness is 1/CRPS (the lower CRPS weighs more)."""
    ia, ib = 1.0 / max(fa, 1e-12), 1.0 / max(fb, 1e-12)
    return ia / (ia + ib), ib / (ia + ib)


def crossover(a: dict, b: dict, fa: float, fb: float, space, rng) -> dict:
    wa, wb = _weights(fa, fb)
    child = {}
    for p in space:
        va, vb = a[p.name], b[p.name]
        if p.kind == "choice" and not p.ordered:
            child[p.name] = va if rng.random() < wa else vb
        elif p.kind == "choice":
            index = wa * p.values.index(va) + wb * p.values.index(vb)
            child[p.name] = p.values[int(round(index))]
        elif p.log:
            child[p.name] = float(math.exp(wa * math.log(va) + wb * math.log(vb)))
        else:
            child[p.name] = float(wa * va + wb * vb)
    return child


def mutate(genes: dict, space, rng) -> tuple[dict, tuple]:
    """Resample one gene (at random) with a different value where the space allows."""
    genes = dict(genes)
    p = space[int(rng.integers(len(space)))]
    for _ in range(10):
        value = p.sample(rng)
        if value != genes[p.name]:
            break
    genes[p.name] = value
    return genes, (p.name,)


def mutation_probabilities(expected: list[float]) -> np.ndarray:
    """Linear in the rank of the expected fitness: best child 0.05, worst 0.6 (our demo-size choice)."""
    low, high = MUTATION_RANGE
    n = len(expected)
    if n == 1:
        return np.array([low])
    ranks = np.argsort(np.argsort(np.asarray(expected), kind="stable"), kind="stable")
    return low + (high - low) * ranks / (n - 1)


def _tournament(pool: list[Agent], size: int, rng) -> Agent:
    picks = rng.choice(len(pool), min(size, len(pool)), replace=False)
    return min((pool[i] for i in picks), key=lambda a: a.val_fitness)


def search(evaluate: Callable[[dict], tuple[float, float]], space=PTN_SPACE, population: int = 6,
           generations: int = 3, patience: int = 2, elite_every: int = 2, n_elite: int = 1,
           tournament_size: int = 2, seed: int = 0, progress=None) -> SearchResult:
    if population < 2 or generations < 1:
        raise ValueError("the search needs a population of at least 2 and at least 1 generation")
    rng = np.random.default_rng(seed)
    next_id = 0
    current: list[Agent] = []
    for _ in range(population):
        current.append(Agent(next_id, 1, random_genes(space, rng)))
        next_id += 1
    archive: list[Agent] = []
    best_history: list[float] = []
    stale = 0
    stopped = False
    total = population * generations
    done = 0
    generation = 0
    settings = {"population": population, "generations": generations, "patience": patience,
                "elite_every": elite_every, "n_elite": n_elite, "tournament_size": tournament_size, "seed": seed}
    for generation in range(1, generations + 1):
        for agent in current:
            if not agent.evaluated:
                tic = time.perf_counter()
                # A candidate is a whole training run: its steps beat (runtime.beat) so a Stop ends it mid-way.
                try:
                    with runtime.heartbeat(progress, min(done / total, 1.0),
                                           f"generation {generation}, agent {agent.id}: training"):
                        agent.fitness, agent.val_fitness = (float(v) for v in evaluate(agent.genes))
                    agent.seconds = time.perf_counter() - tic
                    done += 1
                    if progress:
                        progress(min(done / total, 1.0), f"generation {generation}, agent {agent.id}: "
                                                         f"f_v = {agent.val_fitness:.4f}")
                except Stopped as stop:      # the candidates trained so far, ranked; the one in training is dropped
                    trained = [a for a in {id(a): a for a in archive + current}.values() if a.evaluated]
                    raise stop.keeping(SearchResult(sorted(trained, key=lambda a: a.combined), best_history,
                                                    generation, False, settings,
                                                    Completion(done, total, "candidates") if done < total else None)
                                       if trained else None)
        archive += [a for a in current if a not in archive]
        best = min(a.val_fitness for a in archive if a.evaluated) if any(a.evaluated for a in archive) else math.inf
        stale = 0 if not best_history or best < min(best_history) - 1e-12 else stale + 1
        best_history.append(best)
        if stale >= patience:
            stopped = True
            break
        if generation == generations:
            break
        if generation % elite_every == 0:
            others = sorted((a for a in archive if a not in current and a.evaluated), key=lambda a: a.val_fitness)
            keep = sorted(current, key=lambda a: a.val_fitness)[: max(population - n_elite, 0)]
            current = keep + others[:n_elite] if others else current
        pool = [a for a in current if a.evaluated] or current
        children = []
        for _ in range(population):
            pa = _tournament(pool, tournament_size, rng)
            pb = _tournament(pool, tournament_size, rng)
            genes = crossover(pa.genes, pb.genes, pa.val_fitness, pb.val_fitness, space, rng)
            children.append(Agent(next_id, generation + 1, genes, (pa.id, pb.id),
                                  (pa.val_fitness + pb.val_fitness) / 2))
            next_id += 1
        for child, prob in zip(children, mutation_probabilities([c.expected for c in children])):
            child.mutation_probability = float(prob)
            if rng.random() < prob:
                child.genes, child.mutated = mutate(child.genes, space, rng)
        current = children
    ranking = sorted((a for a in archive if a.evaluated), key=lambda a: a.combined)
    return SearchResult(ranking, best_history, generation, stopped, settings)


def split_for_search(windows, seed: int = 0):
    """[3] ch. 5's five-way split, carved from the architecture partition by trajectory (so no trajectory feeds
    two roles): α training, genetic-train (f) and genetic-validation (f_v), a third each."""
    trajectories = np.unique(windows.trajectory)
    rng = np.random.default_rng(seed)
    order = rng.permutation(trajectories)
    parts = np.array_split(order, 3)
    if any(p.size == 0 for p in parts):
        raise ValueError("the architecture partition needs at least 3 trajectories for the search")
    return tuple(windows.take(np.flatnonzero(np.isin(windows.trajectory, p))) for p in parts)


def ptn_search(data, population: int = 4, generations: int = 2, epochs: int = 6, weight_steps: int = 10,
               arch_steps: int = 5, seed: int = 0, progress=None, base=None, device: str = "auto") -> SearchResult:
    """Algorithm 2 over PTN_SPACE on a ``demo.DemoData``: each agent is a PTN trained by first-order DARTS for
    ``epochs`` epochs; f and f_v are its mean test-style CRPS (x units) on the genetic splits."""

    arch, genetic_train, genetic_val = split_for_search(data.arch, seed)
    base = base or ptn.PTNParams()
    device = ptn.pick_device(device)
    settings = ptn.PTNTrainParams(epochs=epochs, weight_steps=weight_steps, arch_steps=arch_steps, seed=seed,
                                 device=device)

    def evaluate(genes: dict) -> tuple[float, float]:
        config = ptn.PTNParams.from_dict({**_config_dict(base), **genes})
        trained = ptn.train(data.train, arch, config, settings)
        module = ptn.load_module(trained, device)
        scores_ = [float(scores.crps_forecast(ptn.predict(trained, w, module=module), w.target).mean())
                   for w in (genetic_train, genetic_val)]
        return scores_[0], scores_[1]

    result = search(evaluate, PTN_SPACE, population, generations, seed=seed, progress=progress)
    result.settings.update(device=device, device_label=runtime.describe_device(device))   # where the candidates ran
    return result


def _config_dict(config) -> dict:
    return asdict(config)
