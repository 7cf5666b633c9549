"""Which torch device a model runs on: the one asked for, checked to be on this machine; the GPUs a
model may be split over; where a split model's inputs go."""

from __future__ import annotations

import torch

from olmes.core.errors import OlmesError
from olmes.logprobs.model_files import first_line


def choose_device(device: str | None) -> torch.device:
    """The torch device asked for (default: cuda when present, else cpu), checked to be on this machine:
    torch itself finds out only when the weights are moved, with an AssertionError."""
    try:
        target = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    except RuntimeError as exc:
        raise OlmesError(f"bad --device {device!r} ({first_line(exc)}); use cpu, cuda or cuda:N") from exc
    if target.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            why = (
                "this torch is built without CUDA" if torch.version.cuda is None else "no CUDA GPU is visible"
            )
            raise OlmesError(f"--device {device}: {why}; use --device cpu, or run on a machine with a GPU")
        if target.index is not None and target.index >= count:
            raise OlmesError(
                f"--device {device}: this machine has {count} CUDA GPU(s), cuda:0 to cuda:{count - 1}"
            )
    elif target.type == "mps" and not torch.backends.mps.is_available():
        raise OlmesError(f"--device {device}: Apple's MPS is not available here; use --device cpu")
    return target


def visible_gpu_memory(target: torch.device) -> list[int]:
    """Total bytes of each visible GPU a model on ``target`` may be split over: all of them for
    plain ``cuda``, none for a CPU or a named device (``cuda:1``)."""
    if target.type != "cuda" or target.index is not None:
        return []
    return [torch.cuda.get_device_properties(i).total_memory for i in range(torch.cuda.device_count())]


def input_device(device_map: dict) -> torch.device:
    """The device of a split model's first placed module (its embeddings), where inputs go."""
    for where in device_map.values():
        if where != "disk":
            return torch.device("cuda", where) if isinstance(where, int) else torch.device(where)
    return torch.device("cpu")
