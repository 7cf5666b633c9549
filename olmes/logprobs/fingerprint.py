"""The model fingerprint that keys the log-prob cache: everything that changes the numbers."""

from __future__ import annotations

import hashlib
import json

import torch

from olmes.logprobs.architectures import TREE, ScoringPath
from olmes.logprobs.engine import ENGINE_VERSION
from olmes.logprobs.resolve import ResolvedModel


def fingerprint(
    resolved: ResolvedModel, dtype: torch.dtype, device: torch.device, path: ScoringPath = TREE
) -> str:
    """Everything that changes the numbers: weights, dtype, device type, the engine version and its
    path (named only when not the tree's, so that the tree path's fingerprints, and caches, stay
    those of the releases before the leaves path existed; a model that the tree scored wrongly gets
    a new fingerprint and is scored again)."""
    key = [resolved.content_id, str(dtype), device.type, ENGINE_VERSION] + ([] if path == TREE else [path])
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]
