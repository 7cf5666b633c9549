"""Which scoring path each model architecture takes, from what the tests proved (no torch here).

The engine has two paths (:mod:`olmes.logprobs.engine`):

- ``tree``: every distinct token prefix forwarded once, as packed chunks of a prefix trie with a
  tree-shaped attention mask and position ids equal to the depth. Exact only where a token's output
  depends on its keys through the mask and the position ids alone.
- ``leaves``: the safe path. Each distinct input that is not a prefix of another (a leaf of the trie)
  forwarded whole, as a plain causal sequence in a right-padded batch; every request is read off the
  leaf that extends it (the 4 letters of an MCF question share one forward). Exact for any causal
  model: each token sees its own prefix, at its own index, as when its request is scored alone.

A model takes the tree path only when its ``model_type`` is listed below with ``tree`` and
``tests/test_architectures.py`` checks a tiny random model of it against each request scored alone
(|delta| <= 1e-4, the same greedy flags). Everything else (an architecture not listed, a model that
ships its own code, a listed one with a config flag that breaks the tree) takes the leaves path.
``olmes check-model`` runs the same comparison on a real model. docs/architectures.md is the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from olmes.core.records import ScoringPath

TREE: ScoringPath = "tree"
LEAVES: ScoringPath = "leaves"
SCORING_PATHS: tuple[ScoringPath, ...] = (TREE, LEAVES)


@dataclass(frozen=True)
class Architecture:
    """One transformers ``model_type``: the path proved exact for it, and the paper's models using it.

    ``leaves_when``: config keys whose truthy value sends a model of this type to the leaves path
    (Falcon's ``alibi``: the same class, a bias from the key's index)."""

    model_type: str
    path: ScoringPath
    paper_models: tuple[str, ...] = ()
    leaves_when: tuple[str, ...] = ()
    why: str = ""


_ALIBI = "ALiBi bias from the key's index in the packed sequence, not from position_ids"
_RECURRENT = "Mamba layers carry a recurrent state along the packed sequence, across trie branches"

ARCHITECTURES: dict[str, Architecture] = {
    a.model_type: a
    for a in (
        Architecture("gpt_neox", TREE, ("Pythia-1B", "Pythia-6.7B", "RPJ-INCITE-7B")),
        Architecture("olmo", TREE, ("OLMo-1B", "OLMo-7B", "OLMo-7B-0424", "OLMo-1B-0724", "OLMo-7B-0724")),
        Architecture("olmo2", TREE),
        Architecture(
            "llama",
            TREE,
            (
                "TinyLlama-1.1B",
                "Llama2-7B",
                "Llama2-13B",
                "Llama3-8B",
                "Llama3-70B",
                "Llama3.1-8B",
                "Llama3.1-70B",
                "Llama3.2-1B",
                "Llama3.2-3B",
                "DeepSeek-7B",
                "SmolLM2-135M",
            ),
        ),  # fmt: skip
        Architecture("stablelm", TREE, ("StableLM2-1.6B",)),
        Architecture("mpt", LEAVES, ("MPT-7b",), why=_ALIBI),
        Architecture("falcon", TREE, ("Falcon-7B",), leaves_when=("alibi",), why=_ALIBI + " (alibi: true)"),
        Architecture("mistral", TREE, ("Mistral-7B-v0.1", "Mistral-7B-v0.3")),
        Architecture("gemma", TREE, ("Gemma-2B",)),
        Architecture("gemma2", TREE, ("Gemma2-2B", "Gemma2-9B")),
        Architecture("gemma3_text", TREE, ("Gemma-3-270M",)),
        Architecture("qwen2", TREE, ("Qwen2-0.5B", "Qwen2-1.5B", "Qwen2-7B", "Qwen2.5-72B")),
        Architecture("qwen2_moe", TREE, ("Qwen1.5-MoE-A2.7B",)),
        Architecture("qwen3", TREE),
        Architecture("mixtral", TREE, ("Mixtral-8x7B-v0.1",)),
        Architecture("olmoe", TREE, ("OLMoE-1B-7B-0924",)),
        Architecture("jetmoe", TREE, ("JetMoE-8B",)),
        Architecture("deepseek_v2", TREE, ("DeepSeek-V2-Lite",)),
        Architecture("zamba2", LEAVES, ("Zamba2-1.2B", "Zamba2-7B"), why=_RECURRENT),
        Architecture("bloom", LEAVES, why=_ALIBI),
        Architecture("phi3", TREE),
        Architecture("starcoder2", TREE),
        Architecture("gpt2", TREE),
        Architecture("opt", TREE),
    )
}


def verified(config: dict, remote_code: bool = False) -> bool:
    """Whether a tiny model of this config's architecture is tested here (either path)."""
    return not remote_code and config.get("model_type") in ARCHITECTURES


def scoring_path(config: dict, remote_code: bool = False) -> tuple[ScoringPath, str]:
    """The path a model with this ``config.json`` takes, and why, in a few words."""
    model_type = config.get("model_type")
    if remote_code:
        return LEAVES, "the model ships its own code, which no test here has verified"
    known = ARCHITECTURES.get(model_type)
    if known is None:
        return LEAVES, f"architecture {model_type!r} is not on the verified list"
    flags = [key for key in known.leaves_when if config.get(key)]
    if flags:
        return LEAVES, f"{model_type} with {', '.join(f'{key}: true' for key in flags)}: {known.why}"
    if known.path == LEAVES:
        return LEAVES, f"{model_type}: {known.why}"
    return TREE, f"{model_type} is verified exact on the tree path"


def sliding_windows(config) -> dict[str, int | None] | int | None:
    """Per layer type, the sliding window the mask must apply (None = full attention).

    Models mixing full and sliding layers (Gemma 2/3) get a dict of masks keyed by layer type;
    other models get one mask, windowed when the config asks for it.
    """
    layer_types = getattr(config, "layer_types", None)
    window = getattr(config, "sliding_window", None)
    if layer_types and len(set(layer_types)) > 1:
        return {kind: window if kind == "sliding_attention" else None for kind in set(layer_types)}
    if layer_types:
        return window if layer_types[0] == "sliding_attention" else None
    return window if window and getattr(config, "use_sliding_window", True) is not False else None
