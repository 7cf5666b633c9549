"""olmes check-model, models that ship their own code, the transformers floor, a split model's index
argument, and the GPU chunk-size rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from olmes.cli.main import main
from olmes.core.errors import OlmesError
from olmes.logprobs import models
from olmes.logprobs.placement import ModelDims, gpu_chunk_tokens
from tests.tiny_architectures import build_tiny_architecture
from tests.tiny_model import build_tiny_model

GB = 10**9


def test_check_model_says_the_fast_path_is_exact_for_a_llama(tmp_path, capsys):
    folder = build_tiny_model(tmp_path / "llama")
    assert main(["check-model", str(folder), "--device", "cpu", "--output", str(tmp_path / "r.json")]) == 0
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "the fast tree path is exact on 52 requests" in line and "scores it on the tree path" in line
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["tree_exact"] and report["ok"] and report["tree_max_share"] <= 1
    assert report["scoring_path"] == "tree" and report["tree_greedy_flips"] == 0


def test_check_model_says_the_fast_path_is_wrong_for_mpt_and_what_it_uses(tmp_path, capsys):
    folder = build_tiny_architecture(tmp_path / "mpt", "mpt")
    assert main(["check-model", str(folder), "--device", "cpu", "--output", str(tmp_path / "r.json")]) == 0
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "is NOT exact" in line and "safe leaves path" in line and "ALiBi" in line
    report = json.loads((tmp_path / "r.json").read_text())
    assert not report["tree_exact"] and report["tree_max_share"] > 10 and report["ok"]


def test_check_model_reports_a_crash_of_the_tree_path(tmp_path, capsys):
    folder = build_tiny_architecture(tmp_path / "bloom", "bloom")
    assert main(["check-model", str(folder), "--device", "cpu"]) == 0
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "fails on it" in line and "safe leaves path" in line


REMOTE_CONFIG = """
from transformers import LlamaConfig


class TinyRemoteConfig(LlamaConfig):
    model_type = "tiny-remote"
"""
REMOTE_MODEL = """
from transformers import LlamaForCausalLM

from .configuration_tiny import TinyRemoteConfig


class TinyRemoteForCausalLM(LlamaForCausalLM):
    config_class = TinyRemoteConfig
"""


def remote_code_model(folder: Path) -> Path:
    """A model folder whose config names its own code (auto_map), as DCLM's and DeepSeek-MoE's do."""
    build_tiny_model(folder)
    (folder / "configuration_tiny.py").write_text(REMOTE_CONFIG)
    (folder / "modeling_tiny.py").write_text(REMOTE_MODEL)
    config = json.loads((folder / "config.json").read_text())
    config["model_type"] = "tiny-remote"
    config["architectures"] = ["TinyRemoteForCausalLM"]
    config["auto_map"] = {
        "AutoConfig": "configuration_tiny.TinyRemoteConfig",
        "AutoModelForCausalLM": "modeling_tiny.TinyRemoteForCausalLM",
    }
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_a_model_with_its_own_code_runs_only_when_asked_and_on_the_safe_path(tmp_path, capsys):
    folder = remote_code_model(tmp_path / "remote")
    capsys.readouterr()
    requests = tmp_path / "r.jsonl"
    row = {"task": "arc_easy", "formulation": "cf", "instance_index": 0, "native_id": "0", "choice": 0,
           "label": 0, "context": "Question: Which is a trait?\nAnswer:", "continuation": " yes",
           "unconditional": False}  # fmt: skip
    requests.write_text(json.dumps(row) + "\n")
    argv = ["logprobs", "--model", str(folder), "--requests", str(requests), "--output",
            str(tmp_path / "o.parquet"), "--device", "cpu", "--cache-dir", str(tmp_path / "cache"),
            "--quiet"]  # fmt: skip
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "ships its own code (modeling_tiny.TinyRemoteForCausalLM)" in error
    assert "trust_remote_code: true" in error
    assert main([*argv, "--trust-remote-code"]) == 0
    record = json.loads((tmp_path / "o.parquet.run.json").read_text())
    assert record["trust_remote_code"] is True and record["scoring_path"] == "leaves"
    assert "ships its own code" in record["scoring_reason"]
    # an architecture no test covers is checked before it is scored, and the verdict kept
    check = record["architecture_check"]
    assert check["requests"] == 52 and check["scoring_path"] == "leaves" and check["ok"]
    assert check["tree_exact"]  # it is a Llama underneath: the check finds the tree exact (still not used)
    assert "the fast tree path is exact on 52 requests" in capsys.readouterr().err


def test_an_old_transformers_is_refused_in_one_line(monkeypatch):
    from importlib import metadata

    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: "5.10.0" if name == "transformers" else real(name))
    with pytest.raises(OlmesError, match=r"transformers 5.10.0 is installed; olmes needs transformers>=5.24"):
        models.prepare("smollm2-135m")


def test_a_split_model_keeps_the_logit_indices_where_the_engine_puts_them(tmp_path):
    """accelerate's top-level hook moves every argument to the first device but its skip keys; the
    logit indices must stay on the CPU (valid for the last layer's output on any GPU). The meta device
    stands in for a first GPU: the hook moves input_ids there, and must leave logits_to_keep."""
    from accelerate.hooks import AlignDevicesHook

    folder = build_tiny_model(tmp_path / "tiny")
    plan = models.prepare(str(folder), device="cpu")
    device_map = {"model.embed_tokens": "cpu", "model.rotary_emb": "cpu", "model.layers.0": "cpu",
                  "model.layers.1": "disk", "model.norm": "cpu", "lm_head": "cpu"}  # fmt: skip
    plan.placement = models.Placement(device_map, offload_folder=str(tmp_path / "offload"))
    model = plan.load().model
    hook = model._hf_hook
    assert "logits_to_keep" in hook.skip_keys and "cache" in hook.skip_keys
    moving = AlignDevicesHook(
        execution_device=torch.device("meta"), io_same_device=True, skip_keys=hook.skip_keys
    )
    _, kwargs = moving.pre_forward(model, input_ids=torch.ones(1, 3, dtype=torch.long),
                                   logits_to_keep=torch.tensor([0, 2]))  # fmt: skip
    assert kwargs["input_ids"].device.type == "meta" and kwargs["logits_to_keep"].device.type == "cpu"


LLAMA3_8B = ModelDims(
    hidden=4096, intermediate=14336, layers=32, heads=32, kv_heads=8, head_dim=128, vocab=128256
)
GEMMA2_9B = ModelDims(
    hidden=3584, intermediate=14336, layers=42, heads=16, kv_heads=8, head_dim=256, vocab=256000
)


def test_the_gpu_chunk_follows_free_memory_and_the_models_size():
    on_h100 = gpu_chunk_tokens(60 * GB, LLAMA3_8B, 2, eager=False)
    assert 8192 <= on_h100 <= 65536 and on_h100 % 256 == 0
    assert gpu_chunk_tokens(10 * GB, LLAMA3_8B, 2, eager=False) < on_h100  # less free memory, smaller
    assert gpu_chunk_tokens(1 * GB, LLAMA3_8B, 2, eager=False) == 256  # the floor
    # eager attention keeps a float32 score matrix per head: smaller chunks for the same memory
    eager = gpu_chunk_tokens(60 * GB, GEMMA2_9B, 2, eager=True, mask_kinds=2)
    assert eager < 0.7 * gpu_chunk_tokens(60 * GB, GEMMA2_9B, 2, eager=False, mask_kinds=2)
    assert gpu_chunk_tokens(600 * GB, LLAMA3_8B, 2, eager=False) == 65536  # the ceiling


def test_model_dims_from_configs_of_other_families():
    from transformers import GPTNeoXConfig, MixtralConfig

    neox = ModelDims.from_config(GPTNeoXConfig(hidden_size=2048, num_attention_heads=8, num_hidden_layers=16))
    assert (neox.kv_heads, neox.head_dim) == (8, 256)
    mixtral = ModelDims.from_config(MixtralConfig())
    assert mixtral.intermediate == MixtralConfig().intermediate_size * 2  # two experts per token
