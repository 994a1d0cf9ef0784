"""core.runtime (device choice, scoped seeding, the heartbeat) and a static guard that keeps the torch code
device-clean and free of process-wide seeding.

The guard is what catches a device mix-up on a machine without a GPU: on the CPU every tensor is on the same device,
so a tensor created without ``device=`` only fails once a GPU is there (issue: "index is on cpu, different from
other tensors on cuda:0"). Rules, checked on every fairviz module that imports torch:

- a tensor factory (torch.tensor, as_tensor, zeros, ones, full, empty, arange, rand*, linspace, eye) passes
  ``device=`` — except inside a module constructor (``__init__``: parameters move with ``.to(device)``) and a CPU
  draw that is turned straight into Python numbers (``….tolist()``);
- ``.numpy()`` is only called on ``.cpu()``;
- nothing seeds a process-wide generator (torch.manual_seed, torch.cuda.manual_seed*, np.random.seed,
  random.seed) outside core/runtime.py, which scopes it.
"""
from __future__ import annotations

import ast
import threading
from pathlib import Path

import numpy as np
import pytest

from fairviz.core import runtime

ROOT = Path(__file__).resolve().parents[2]
FACTORIES = {"tensor", "as_tensor", "zeros", "ones", "full", "empty", "arange", "randn", "rand", "randint",
             "randperm", "linspace", "eye"}
GLOBAL_SEEDING = {("torch", "manual_seed"), ("cuda", "manual_seed"), ("cuda", "manual_seed_all"),
                  ("random", "seed")}


def torch_modules() -> list[Path]:
    return sorted(p for p in (ROOT / "fairviz").rglob("*.py")
                  if "import torch" in p.read_text() or "_torch()" in p.read_text())


def _parents(tree):
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return parents


def _dotted(node) -> tuple[str, ...]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return tuple(reversed(parts))


def device_problems(source: str, name: str) -> list[str]:
    tree = ast.parse(source)
    parents = _parents(tree)
    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        dotted = _dotted(node.func)
        where = f"{name}:{node.lineno}"
        if len(dotted) == 2 and dotted[0] == "torch" and dotted[1] in FACTORIES:
            if any(k.arg == "device" for k in node.keywords):
                continue
            scope = node
            while scope in parents and not isinstance(scope, ast.FunctionDef):
                scope = parents[scope]
            if isinstance(scope, ast.FunctionDef) and scope.name == "__init__":
                continue
            parent = parents.get(node)
            if isinstance(parent, ast.Attribute) and parent.attr == "tolist":
                continue
            problems.append(f"{where}: torch.{dotted[1]}(…) without device= (create it on the model's device)")
        elif dotted[-1:] == ("numpy",) and isinstance(node.func, ast.Attribute):
            receiver = node.func.value
            if not (isinstance(receiver, ast.Call) and _dotted(receiver.func)[-1:] == ("cpu",)):
                problems.append(f"{where}: .numpy() not called on .cpu() (use .detach().cpu().numpy())")
        elif dotted[-2:] in GLOBAL_SEEDING or dotted[-3:] == ("np", "random", "seed") \
                or dotted[-3:] == ("numpy", "random", "seed"):
            problems.append(f"{where}: process-wide seeding {'.'.join(dotted)}(…) (use a local generator or "
                            "fairviz.core.runtime.seeded)")
    return problems


def test_the_guard_catches_each_kind_of_slip():
    bad = ("import torch\nimport numpy as np\n"
           "def f(m, rows):\n"
           "    ids = torch.tensor(rows)\n"                           # no device
           "    x = m(ids).numpy()\n"                                 # no .cpu()
           "    torch.manual_seed(0)\n    np.random.seed(0)\n    torch.cuda.manual_seed_all(0)\n")
    assert [p.split(": ")[0] for p in device_problems(bad, "bad")] == ["bad:4", "bad:5", "bad:6", "bad:7", "bad:8"]
    good = ("import torch\n"
            "class M:\n    def __init__(self):\n        self.a = torch.zeros(3)\n"
            "def f(m, rows, g):\n"
            "    ids = torch.as_tensor(rows, device=m.device)\n"
            "    order = torch.randperm(5, generator=g).tolist()\n"
            "    g2 = torch.Generator().manual_seed(1)\n"
            "    return m(ids).detach().cpu().numpy()\n")
    assert device_problems(good, "good") == []


def test_torch_code_is_device_clean_and_seeds_no_global_generator():
    files = torch_modules()
    assert {"models.py", "attribute.py", "metrics.py", "pipeline.py", "ptn.py"} <= {p.name for p in files}
    problems = [p for f in files if f.name != "runtime.py" or f.parent.name != "core"
                for p in device_problems(f.read_text(), str(f.relative_to(ROOT)))]
    assert problems == []


# ----------------------------------------------------------------------------------------------- device

def test_pick_device_on_this_machine():
    torch = pytest.importorskip("torch")
    assert runtime.pick_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert runtime.pick_device(None) == runtime.pick_device("auto") and runtime.pick_device("cpu") == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no GPU"):
            runtime.pick_device("cuda")
        assert runtime.describe_device("cpu") == "CPU (no GPU on this server)"
    else:
        assert runtime.describe_device("cuda").startswith("GPU") and runtime.describe_device("cpu") == "CPU"


def test_a_gpu_less_server_says_so_without_warnings(recwarn):
    pytest.importorskip("torch")
    runtime.describe_device(runtime.pick_device())
    assert not [w for w in recwarn if "cuda" in str(w.message).lower()]


# ----------------------------------------------------------------------------------------------- seeding

def test_seeded_is_deterministic_and_leaves_the_global_generators_alone():
    torch = pytest.importorskip("torch")
    torch.manual_seed(123)                       # the test's own global state, which seeded() must not change
    expected = torch.rand(3)
    torch.manual_seed(123)
    with runtime.seeded(7):
        a = torch.rand(4)
    with runtime.seeded(7):
        b = torch.rand(4)
    assert torch.equal(a, b)
    assert torch.equal(torch.rand(3), expected)  # as if the seeded blocks had never drawn
    state = np.random.get_state()[1].copy()
    with runtime.seeded_numpy(5):
        x = np.random.randn(3)
    with runtime.seeded_numpy(5):
        assert np.array_equal(np.random.randn(3), x)
    assert np.array_equal(np.random.get_state()[1], state)


def test_concurrent_seeded_runs_do_not_interleave():
    """Two threads drawing inside seeded() with different seeds get what each gets alone."""
    torch = pytest.importorskip("torch")

    def draws(seed):
        with runtime.seeded(seed):
            return torch.cat([torch.rand(50) for _ in range(40)])

    alone = {s: draws(s) for s in (1, 2)}
    out = {}
    threads = [threading.Thread(target=lambda s=s: out.__setitem__(s, draws(s))) for s in (1, 2, 1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(torch.equal(out[s], alone[s]) for s in (1, 2))


def test_a_waiting_run_reports_progress_and_can_be_stopped():
    pytest.importorskip("torch")
    held, release = threading.Event(), threading.Event()

    def holder():
        with runtime.seeded(1):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)

    class Stop(BaseException):
        pass

    calls = []

    def progress(fraction, message):
        calls.append(message)
        raise Stop

    try:
        with pytest.raises(Stop):
            with runtime.seeded(2, wait=progress):
                pass
    finally:
        release.set()
        thread.join()
    assert calls and "waiting" in calls[0]


# ----------------------------------------------------------------------------------------------- heartbeat

def test_heartbeat_reaches_the_innermost_progress_and_is_throttled(monkeypatch):
    seen = []
    runtime.beat()                                            # no heartbeat: nothing happens
    with runtime.heartbeat(lambda f, m: seen.append((f, m))) as hb:
        hb.update(0.25, "stage")
        monkeypatch.setattr(runtime, "BEAT_INTERVAL_S", 3600)
        runtime.beat()
        assert seen == [(0.25, "stage")]                      # throttled
        monkeypatch.setattr(runtime, "BEAT_INTERVAL_S", 0)
        with runtime.heartbeat(lambda f, m: seen.append(("inner", m))) as inner:
            runtime.beat()
        with runtime.heartbeat(None):                         # no progress: the outer one keeps the beats
            runtime.beat()
    runtime.beat()
    assert seen == [(0.25, "stage"), ("inner", ""), (0.25, "stage")] and inner.beats == 1 and hb.beats == 2
