"""The engine's model contract (olmes.logprobs.contract.ScoringModel): olmes's loaded model and a fake
satisfy it, and the engine scores a fake that has nothing but its six attributes."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from olmes.logprobs import engine
from olmes.logprobs.architectures import LEAVES
from olmes.logprobs.contract import ScoringModel
from olmes.logprobs.models import LoadedModel
from olmes.logprobs.resolve import ResolvedModel
from olmes.logprobs.spec import ModelSpec

VOCAB = 128


class CharTokenizer:
    """One token per character (its code point), no special tokens added."""

    pad_token_id = None
    eos_token_id = 0
    bos_token_id = None

    def __call__(self, texts, add_special_tokens=False):
        return {"input_ids": [[ord(c) % VOCAB for c in text] for text in texts]}


class UniformModel(torch.nn.Module):
    """Equal logits everywhere: each token's log-prob is -log(VOCAB)."""

    def forward(self, input_ids, attention_mask=None, use_cache=False, logits_to_keep=None):
        kept = input_ids.shape[1] if logits_to_keep is None else len(logits_to_keep)
        return SimpleNamespace(logits=torch.zeros(input_ids.shape[0], kept, VOCAB))


@dataclasses.dataclass
class FakeModel:
    """The six attributes and nothing else."""

    model: object
    tokenizer: object
    device: torch.device = torch.device("cpu")
    dtype: torch.dtype = torch.float32
    bos_token_id: int | None = None
    scoring_path: str = LEAVES


def test_the_loaded_model_and_a_fake_satisfy_the_contract():
    spec = ModelSpec("tiny", "local", Path("tiny"))
    loaded = LoadedModel(
        ResolvedModel(spec, Path("tiny"), "test:tiny"),
        torch.nn.Linear(1, 1),
        CharTokenizer(),
        torch.float32,
        torch.device("cpu"),
        None,
    )
    assert isinstance(loaded, ScoringModel)
    assert isinstance(FakeModel(UniformModel(), CharTokenizer()), ScoringModel)
    assert not isinstance(SimpleNamespace(model=None, tokenizer=None, device=None), ScoringModel)


def test_the_engine_scores_a_model_through_the_contract_alone():
    lm = FakeModel(UniformModel(), CharTokenizer())
    pairs = [("Question: a?\nAnswer:", " yes"), ("Question: a?\nAnswer:", " no"), ("Q:", " x")]
    scores = engine.score(lm, pairs)
    lengths = np.array([len(continuation) for _, continuation in pairs])
    assert scores.num_tokens.tolist() == lengths.tolist()
    assert np.allclose(scores.sum_logprob, -lengths * math.log(VOCAB))
    assert scores.scoring_path == LEAVES and scores.max_batch_tokens == engine.default_max_batch_tokens(lm)
