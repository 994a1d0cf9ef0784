"""What every torch concept shares at run time: the device, seeding without touching other runs, and a heartbeat.

- ``pick_device``/``describe_device``: CUDA when ``torch.cuda.is_available()``, else the CPU; a GPU-less server
  says so in plain words and without warnings (a CUDA build of torch without a driver warns on the probe).
- ``seeded(seed)``: for code that draws from torch's process-wide generator and cannot be given a local one
  (module constructors' default initialisation, the dropout inside Hugging Face attention). Under one process-wide
  lock it forks the generator state, seeds it, and puts it back afterwards, so two sessions' runs cannot
  interleave their draws and neither changes what any other code draws. Where fairviz draws random numbers
  itself it uses local generators (``np.random.default_rng``, ``torch.Generator``) instead.
- ``heartbeat(progress)`` / ``beat()``: long loops inside libraries (captum's IG batches, LIME's and SHAP's model
  calls) reach the caller's ``progress(fraction, message)`` through ``beat()``, called once per model batch.
  That call is where a page's Stop interrupts (Streamlit raises at the next element call), so every batch is a
  point where a run can end. The state is a context variable: sessions (threads) never see each other's.

torch is imported inside the functions; importing this module costs nothing.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
import time
import warnings
from typing import Callable, Iterator

Progress = Callable[[float, str], None]

# Seconds between two progress calls made by beat() (a Streamlit progress update per model batch would flood the
# page); the tests set it to 0 to count every beat.
BEAT_INTERVAL_S = 0.2


# ----------------------------------------------------------------------------------------------- device

def cuda_available() -> bool:
    """torch.cuda.is_available(), silently (a CUDA build without a driver warns; a GPU-less server is normal)."""
    import torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bool(torch.cuda.is_available())


def pick_device(requested: str | None = "auto") -> str:
    """'auto' (or None/''): 'cuda' when a GPU is usable, else 'cpu'. An explicit CUDA device without a GPU is an
    error with a clear message, not a crash deep inside torch."""
    if not requested or requested == "auto":
        return "cuda" if cuda_available() else "cpu"
    if str(requested).startswith("cuda") and not cuda_available():
        raise ValueError("CUDA was requested but no GPU is available on this server")
    return str(requested)


def describe_device(device: str) -> str:
    """Plain words for the page: 'GPU (NVIDIA H100 …)' or 'CPU (no GPU on this server)'."""
    if str(device).startswith("cuda"):
        import torch
        try:
            return f"GPU ({torch.cuda.get_device_name(torch.device(device))})"
        except Exception:                                     # noqa: BLE001 — a name is a nicety
            return "GPU"
    return "CPU" if cuda_available() else "CPU (no GPU on this server)"


def generator(seed: int, device: str = "cpu"):
    """A local torch generator on ``device`` (CUDA draws need a CUDA generator)."""
    import torch
    return torch.Generator(device=device).manual_seed(int(seed))


# ----------------------------------------------------------------------------------------------- seeding

_TORCH_RNG = threading.RLock()
_NUMPY_RNG = threading.RLock()


def _acquire(lock, wait: Progress | None) -> None:
    """Take ``lock``; while another run holds it, report every half second (``wait`` or the current heartbeat), so
    a Stop can end the wait."""
    while not lock.acquire(timeout=0.5):
        if wait is not None:
            wait(0.0, "waiting for another run to release the random-number generator")
        else:
            beat()


@contextlib.contextmanager
def seeded(seed: int, device: str = "cpu", wait: Progress | None = None) -> Iterator[None]:
    """Seed torch's process-wide generators for the block only, one run at a time (see the module docstring).

    A training run holds them for its whole length (Hugging Face dropout draws at every step); ``wait`` (or the
    current heartbeat) is called every half second while another run holds them.
    """
    import torch
    _acquire(_TORCH_RNG, wait)
    try:
        devices = list(range(torch.cuda.device_count())) if str(device).startswith("cuda") else []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(int(seed))                      # seeds the CUDA generators too
            yield
    finally:
        _TORCH_RNG.release()


@contextlib.contextmanager
def seeded_numpy(seed: int) -> Iterator[None]:
    """The same for numpy's legacy global generator (shap's Partition explainer breaks ties with it)."""
    import numpy as np
    _acquire(_NUMPY_RNG, None)
    try:
        state = np.random.get_state()
        np.random.seed(int(seed) % 2**32)
        try:
            yield
        finally:
            np.random.set_state(state)
    finally:
        _NUMPY_RNG.release()


# ----------------------------------------------------------------------------------------------- heartbeat

class Heartbeat:
    """The current stage of a run: ``update`` reports a new fraction/message now, ``beat`` repeats it (throttled)."""

    def __init__(self, progress: Progress, fraction: float = 0.0, message: str = ""):
        self.progress, self.fraction, self.message = progress, fraction, message
        self.last = time.monotonic()
        self.beats = 0

    def update(self, fraction: float, message: str) -> None:
        self.fraction, self.message = fraction, message
        self.last = time.monotonic()
        self.progress(fraction, message)

    def beat(self) -> None:
        self.beats += 1
        now = time.monotonic()
        if now - self.last >= BEAT_INTERVAL_S:
            self.last = now
            self.progress(self.fraction, self.message)


_CURRENT: contextvars.ContextVar[Heartbeat | None] = contextvars.ContextVar("fairviz_heartbeat", default=None)


@contextlib.contextmanager
def heartbeat(progress: Progress | None, fraction: float = 0.0, message: str = "") -> Iterator[Heartbeat | None]:
    """Within the block, ``beat()`` calls ``progress(fraction, message)`` (at most every BEAT_INTERVAL_S)."""
    if progress is None:
        yield None
        return
    state = Heartbeat(progress, fraction, message)
    token = _CURRENT.set(state)
    try:
        yield state
    finally:
        _CURRENT.reset(token)


def beat() -> None:
    """One unit of work done (a model batch, an optimiser step): a chance for the caller to stop the run."""
    state = _CURRENT.get()
    if state is not None:
        state.beat()
