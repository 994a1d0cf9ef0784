"""Where torch runs: CUDA when available (or when asked for), else the CPU. torch is imported only when called."""
from __future__ import annotations


def pick_device(requested: str = "auto") -> str:
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("CUDA was requested but no GPU is available")
    return requested
