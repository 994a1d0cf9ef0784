"""The devices the torch tests run on: the CPU always, CUDA when present.

A CUDA parameter carries the ``gpu`` marker, so ``make test-gpu`` (``pytest -m gpu``) runs exactly the CUDA half on a
GPU machine while CI, which has none, runs the CPU half and stays green.
"""
from __future__ import annotations

import pytest


def devices() -> list:
    params = [pytest.param("cpu", id="cpu")]
    try:
        from fairviz.core.runtime import cuda_available
        if cuda_available():
            params.append(pytest.param("cuda", id="cuda", marks=pytest.mark.gpu))
    except ImportError:                                   # no torch: the torch tests skip themselves
        pass
    return params


def tolerance(device: str, cpu: float) -> float:
    """GPU kernels are not bit-identical to the CPU's (nor across batch sizes): 10× the CPU tolerance there."""
    return cpu if str(device) == "cpu" else 10 * cpu
