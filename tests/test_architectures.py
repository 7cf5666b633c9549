"""Architecture conformance: a tiny random model of every architecture the paper's models use, loaded
through olmes' own loader, scored by the engine on its path (olmes.logprobs.architectures) at a chunk
smaller than one request and at a large one, equals each request scored alone (|delta| <= 1e-4, the
same greedy flags). For the architectures sent to the leaves path, the tree path is shown wrong (or
crashing) on the same requests, so the list says why each is where it is."""

from __future__ import annotations

import dataclasses
import functools
import traceback

import numpy as np
import pytest
import torch

from olmes.logprobs import engine
from olmes.logprobs.architectures import ARCHITECTURES, LEAVES, TREE
from olmes.logprobs.models import load
from olmes.requests.build import build_requests
from tests.helpers import reference
from tests.tiny_architectures import ARCHITECTURES as TINY
from tests.tiny_architectures import build_tiny_architecture

pytestmark = pytest.mark.slow  # 25 tiny models in float64

# float64 compute is far finer than the float32 error model; eager attention still rounds its softmax in
# float32 (up to 1e-6), and a structural error moves a sum by 1e-2 or more.
TOLERANCE = 1e-5  # nats
TREE_FAILURE = {"mpt": "wrong", "falcon_alibi": "crash", "bloom": "crash", "zamba2": "crash"}
"""How the tree path fails each architecture sent to the leaves path: wrong log-probs (ALiBi from the key's
index in the packed sequence), or a crash in the model's own code on the tree's 4-D mask."""
EXPECTED_PATH = {name: LEAVES if name in TREE_FAILURE else TREE for name in TINY}


@functools.cache
def conformance_pairs() -> list[tuple[str, str]]:
    """38 real requests: shared 5-shot prefixes, an instance's choices, pmi rows (the bare "Answer:"),
    MCF letters (one-token continuations of one context), WinoGrande (contexts differ, continuation
    shared), longer than the sliding windows of the tiny models."""
    rows = []
    for task, formulation, limit in [
        ("arc_challenge", "cf", 2), ("arc_challenge", "pmi", 2), ("arc_challenge", "mcf", 2),
        ("winogrande", "cf", 3), ("hellaswag", "cf", 1),
    ]:  # fmt: skip
        rows.extend(build_requests(task, formulation, limit=limit))
    return [(row["context"], row["continuation"]) for row in rows]


@functools.cache
def tiny(name: str, folder):
    """The tiny model, loaded by olmes, then in float64: a float32 sum of 40 token log-probs of a random
    model (about -250 nats) rounds differently by up to 1e-4 between chunkings, while a structural
    error (a token seeing a wrong key or position) moves it by far more; float64 tells them apart."""
    lm = load(str(build_tiny_architecture(folder / name, name)), device="cpu")
    if hasattr(lm.model.config, "num_experts_per_tok") or hasattr(lm.model.config, "num_local_experts"):
        lm.model.set_experts_implementation("eager")  # the grouped matmul kernel has no float64
    return dataclasses.replace(lm, model=lm.model.double(), dtype=torch.float64)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("architectures")
    return lambda name: tiny(name, folder)


def max_delta(lm, pairs, max_batch_tokens) -> tuple[float, bool]:
    """max |engine - alone| over the requests, and whether every greedy flag and token count agree."""
    scores = engine.score(lm, pairs, max_batch_tokens=max_batch_tokens)
    sums, counts, greedy = reference(lm, pairs)
    same = (scores.num_tokens == counts).all() and (scores.is_greedy == greedy).all()
    return float(np.abs(scores.sum_logprob - sums).max()), bool(same)


@pytest.mark.parametrize("name", sorted(TINY))
def test_every_architecture_is_exact_on_its_path(models, name):
    lm = models(name)
    assert lm.scoring_path == EXPECTED_PATH[name], lm.scoring_reason
    pairs = conformance_pairs()
    for max_batch_tokens in (16, 4096):  # 16: smaller than any request; 4096: everything in one or two
        delta, same = max_delta(lm, pairs, max_batch_tokens)
        assert delta <= TOLERANCE and same, (name, max_batch_tokens, delta)


def _crashed_in_the_model(error: BaseException) -> bool:
    """Whether ``error`` was raised inside transformers' model code, not in olmes or in this test."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and "/transformers/" in frames[-1].filename


@pytest.mark.parametrize("name", sorted(TREE_FAILURE))
def test_the_tree_path_is_wrong_where_the_leaves_path_is_used(models, name):
    assert EXPECTED_PATH[name] == LEAVES
    lm = dataclasses.replace(models(name), scoring_path=TREE)
    if TREE_FAILURE[name] == "crash":
        with pytest.raises(Exception) as raised:  # noqa: PT011 - the model's own code fails in its own way
            max_delta(lm, conformance_pairs(), 4096)
        assert _crashed_in_the_model(raised.value), "".join(traceback.format_exception(raised.value))
    else:
        delta, _ = max_delta(lm, conformance_pairs(), 4096)
        assert delta > 100 * TOLERANCE


def test_every_listed_architecture_has_a_tiny_model():
    tested = {TINY[name](500).model_type for name in TINY}
    assert set(ARCHITECTURES) <= tested
