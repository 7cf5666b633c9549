"""Tiny random causal LMs, one per architecture, saved as local Hugging Face folders, built offline.

Every model reuses the byte-level BPE tokenizer of ``tests.tiny_model`` (456 tokens, trained for at
most 512; the Gemma family adds a ``<bos>`` special token, as real Gemma checkpoints expect a BOS).
Each config is small (2-3 layers, hidden size 64, a few heads and experts) yet keeps what makes its
architecture distinct: partial rotary, ALiBi, sliding windows shorter than a prompt, logit softcapping,
mixture-of-experts routing, multi-head latent attention, Mamba layers. Weights are random, float32.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import torch
import transformers as tf
from transformers import AutoModelForCausalLM, AutoTokenizer, PretrainedConfig, PreTrainedTokenizerBase

from tests.tiny_model import build_tiny_model

MAX_POSITIONS = 4096
SLIDING_WINDOW = 16  # shorter than a ~100-token prompt, so the window changes the logits
GEMMA_FAMILY = frozenset({"gemma", "gemma2", "gemma3"})  # these expect a BOS token first
EOS_ID = 0  # "<|endoftext|>", the tokenizer's only special token; a Gemma's "<bos>" is appended last


def _base(vocab: int, bos: bool = False) -> dict:
    """Vocabulary, special token ids and dtype: every config gets these (EOS doubles as BOS but in Gemmas)."""
    return dict(
        vocab_size=vocab,
        eos_token_id=EOS_ID,
        bos_token_id=vocab - 1 if bos else EOS_ID,
        pad_token_id=None,
        dtype="float32",
    )


def _rope(partial_rotary_factor: float) -> dict:
    return {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": partial_rotary_factor}


def _dense(vocab: int, bos: bool = False) -> dict:
    """Keyword arguments shared by the Llama-like configs."""
    return dict(
        **_base(vocab, bos),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=MAX_POSITIONS,
    )


def _gemma(vocab: int) -> dict:
    """Llama-like, with a BOS token, multi-query attention and an explicit head size."""
    return {**_dense(vocab, bos=True), "num_key_value_heads": 1, "head_dim": 16}


def gpt_neox(vocab: int) -> PretrainedConfig:
    """Pythia: parallel residual, rotary on a quarter of each head."""
    return tf.GPTNeoXConfig(
        **_base(vocab),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=MAX_POSITIONS,
        rope_parameters=_rope(0.25),
    )


def stablelm(vocab: int) -> PretrainedConfig:
    """StableLM 2: rotary on a quarter of each head."""
    return tf.StableLmConfig(**_dense(vocab), rope_parameters=_rope(0.25))


def mpt(vocab: int) -> PretrainedConfig:
    """MPT: ALiBi, no rotary."""
    return tf.MptConfig(
        **_base(vocab),
        d_model=64,
        n_heads=4,
        n_layers=2,
        expansion_ratio=2,
        max_seq_len=MAX_POSITIONS,
        attn_config={"alibi": True, "alibi_bias_max": 8},
    )


def _falcon(vocab: int, alibi: bool) -> PretrainedConfig:
    """Falcon-7B (rotary, multi-query attention, parallel attention and MLP, no biases), or with
    ``alibi`` Falcon-RW (ALiBi, multi-head attention, sequential blocks with biases)."""
    return tf.FalconConfig(
        **_base(vocab),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        alibi=alibi,
        new_decoder_architecture=False,
        multi_query=not alibi,
        parallel_attn=not alibi,
        bias=alibi,
        max_position_embeddings=MAX_POSITIONS,
    )


def gemma2(vocab: int) -> PretrainedConfig:
    """Gemma 2: alternating sliding and full attention, attention and final logit softcapping."""
    return tf.Gemma2Config(
        **_gemma(vocab),
        query_pre_attn_scalar=16,
        sliding_window=SLIDING_WINDOW,
        layer_types=["sliding_attention", "full_attention"],
        attn_logit_softcapping=50.0,
        final_logit_softcapping=30.0,
    )


def gemma3(vocab: int) -> PretrainedConfig:
    """Gemma 3 (text): two sliding-window layers then a full one, query-key norms."""
    return tf.Gemma3TextConfig(
        **{**_gemma(vocab), "num_hidden_layers": 3},
        sliding_window=SLIDING_WINDOW,
        layer_types=["sliding_attention", "sliding_attention", "full_attention"],
    )


def qwen2_moe(vocab: int) -> PretrainedConfig:
    """Qwen1.5-MoE: 4 routed experts, top-2, plus a gated shared expert."""
    return tf.Qwen2MoeConfig(
        **_dense(vocab),
        num_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=32,
        shared_expert_intermediate_size=64,
    )


def jetmoe(vocab: int) -> PretrainedConfig:
    """JetMoE: mixture of attention heads and of MLP experts, 4 experts, top-2."""
    return tf.JetMoeConfig(
        **_base(vocab),
        hidden_size=64,
        intermediate_size=64,
        num_hidden_layers=2,
        num_key_value_heads=4,
        kv_channels=16,
        num_local_experts=4,
        num_experts_per_tok=2,
        max_position_embeddings=MAX_POSITIONS,
    )


def zamba2(vocab: int) -> PretrainedConfig:
    """Zamba 2: Mamba-2 layers plus a hybrid layer that runs the shared attention block first."""
    return tf.Zamba2Config(
        **_base(vocab),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=3,
        layers_block_type=["mamba", "hybrid", "mamba"],
        num_attention_heads=4,
        mamba_d_state=8,
        mamba_d_conv=4,
        mamba_expand=2,
        n_mamba_heads=4,
        chunk_size=32,
        max_position_embeddings=MAX_POSITIONS,
    )


def deepseek_v2(vocab: int) -> PretrainedConfig:
    """DeepSeek-V2: multi-head latent attention; one dense layer, then one with 4 routed experts."""
    return tf.DeepseekV2Config(
        **{**_dense(vocab), "num_key_value_heads": 4},
        q_lora_rank=32,
        kv_lora_rank=16,
        qk_rope_head_dim=8,
        qk_nope_head_dim=16,
        v_head_dim=16,
        first_k_dense_replace=1,
        n_routed_experts=4,
        num_experts_per_tok=2,
        n_shared_experts=1,
        moe_intermediate_size=32,
    )


def bloom(vocab: int) -> PretrainedConfig:
    """BLOOM: ALiBi; at the default init its logits barely depend on the context, hence a wider one."""
    return tf.BloomConfig(**_base(vocab), hidden_size=64, n_layer=2, n_head=4, initializer_range=0.1)


def gpt2(vocab: int) -> PretrainedConfig:
    """GPT-2: learned absolute positions."""
    return tf.GPT2Config(**_base(vocab), n_embd=64, n_layer=2, n_head=4, n_positions=MAX_POSITIONS)


def opt(vocab: int) -> PretrainedConfig:
    """OPT: learned absolute positions with an offset of 2."""
    return tf.OPTConfig(
        **_base(vocab),
        hidden_size=64,
        ffn_dim=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        word_embed_proj_dim=64,
        max_position_embeddings=MAX_POSITIONS,
    )


ARCHITECTURES: dict[str, Callable[[int], PretrainedConfig]] = {
    "gpt_neox": gpt_neox,
    "olmo": lambda vocab: tf.OlmoConfig(**_dense(vocab)),
    "olmo2": lambda vocab: tf.Olmo2Config(**_dense(vocab)),
    "llama": lambda vocab: tf.LlamaConfig(**_dense(vocab)),
    "stablelm": stablelm,
    "mpt": mpt,
    "falcon": lambda vocab: _falcon(vocab, alibi=False),
    "falcon_alibi": lambda vocab: _falcon(vocab, alibi=True),
    "mistral": lambda vocab: tf.MistralConfig(**_dense(vocab), sliding_window=SLIDING_WINDOW),
    "gemma": lambda vocab: tf.GemmaConfig(**_gemma(vocab)),
    "gemma2": gemma2,
    "gemma3": gemma3,
    "qwen2": lambda vocab: tf.Qwen2Config(**_dense(vocab)),
    "qwen2_moe": qwen2_moe,
    "mixtral": lambda vocab: tf.MixtralConfig(**_dense(vocab), num_local_experts=4, num_experts_per_tok=2),
    "olmoe": lambda vocab: tf.OlmoeConfig(**_dense(vocab), num_experts=4, num_experts_per_tok=2),
    "jetmoe": jetmoe,
    "zamba2": zamba2,
    "deepseek_v2": deepseek_v2,
    "bloom": bloom,
    "qwen3": lambda vocab: tf.Qwen3Config(**_dense(vocab), head_dim=16),
    "phi3": lambda vocab: tf.Phi3Config(**_dense(vocab), original_max_position_embeddings=MAX_POSITIONS),
    "starcoder2": lambda vocab: tf.Starcoder2Config(**_dense(vocab)),
    "gpt2": gpt2,
    "opt": opt,
}


@functools.cache
def _tokenizer_folder() -> Path:
    """A folder holding the tiny_model tokenizer (and its unused Llama), built once per process."""
    folder = Path(tempfile.mkdtemp(prefix="tiny-tokenizer-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return build_tiny_model(folder)


def tiny_tokenizer(bos: bool = False) -> PreTrainedTokenizerBase:
    """A fresh copy of the tiny_model tokenizer; with ``bos``, plus a ``<bos>`` special token."""
    tokenizer = AutoTokenizer.from_pretrained(_tokenizer_folder())
    if bos:
        tokenizer.add_special_tokens({"bos_token": "<bos>"})
    return tokenizer


def build_tiny_architecture(folder: Path, name: str, seed: int = 0) -> Path:
    """Write the tiny ``name`` model (see ARCHITECTURES) and its tokenizer into ``folder``; return it."""
    tokenizer = tiny_tokenizer(bos=name in GEMMA_FAMILY)
    config = ARCHITECTURES[name](len(tokenizer))
    assert config.eos_token_id == tokenizer.eos_token_id == EOS_ID
    assert config.bos_token_id == (tokenizer.bos_token_id if name in GEMMA_FAMILY else EOS_ID)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
