"""A tiny causal LM saved as a local Hugging Face folder, built offline from a config.

The tokenizer is a byte-level BPE trained in a second on a few OLMES-like sentences, so that
real request text tokenizes into a realistic number of tokens; the weights are random.
"""

from __future__ import annotations

from pathlib import Path

TRAINING_TEXT = [
    "Question: Which of the following is a trait that a dog does NOT inherit from its parents?",
    "Answer: the size of its appetite",
    "Goal: How do I ready a guinea pig cage for it's new occupants?",
    "Fill in the blank: Sarah was a much better surgeon than Maria so ___ always got the easier cases.",
    "The following are multiple choice questions (with answers) about abstract algebra.",
    " A. yes\n B. no\n C. maybe\n D. never\nAnswer: B",
]


def build_tiny_model(folder: Path, seed: int = 0) -> Path:
    """Write a 2-layer Llama with a 512-token BPE vocabulary into ``folder``; return it."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=512, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(TRAINING_TEXT * 20, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>")
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
