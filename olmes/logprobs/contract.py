"""What the engine scores with: the model contract of :func:`olmes.logprobs.engine.score`.

:class:`olmes.logprobs.models.LoadedModel` satisfies it, and so do the tests' fake models; the
engine reads a model through these six attributes and nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import torch

    from olmes.logprobs.architectures import ScoringPath


@runtime_checkable
class ScoringModel(Protocol):
    """A causal LM ready for scoring."""

    model: Any  # a torch.nn.Module called as model(input_ids=..., attention_mask=..., ...): logits
    tokenizer: Any  # a Hugging Face tokenizer: encodes texts, knows its pad and eos ids
    device: torch.device  # where the inputs go
    dtype: torch.dtype  # of the weights and activations
    bos_token_id: int | None  # prepended to every input when the model expects one
    scoring_path: ScoringPath  # the engine's path: olmes.logprobs.architectures
