"""Placing a model over several devices, loading it once for many request files, and the cluster
resources rule. No GPU here: the CUDA decisions are pure functions tested on simulated GPUs, and a
split model is simulated with the devices CPU-only torch has (CPU plus accelerate's disk offload)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from olmes.cli.main import main
from olmes.core.errors import OlmesError
from olmes.core.numerics import within_tolerance
from olmes.core.records import write_records
from olmes.logprobs import models
from olmes.logprobs.placement import (
    BALANCED,
    WEIGHTS_SHARE,
    Placement,
    choose_placement,
    job_resources,
    safetensors_parameters,
)
from olmes.logprobs.runner import score_files
from tests.tiny_model import build_tiny_model

GB = 10**9
H100 = 85_031_714_816  # bytes torch reports for an 80 GB GPU
LLAMA3_70B = 70.55e9  # parameters
LLAMA2_7B = 6.74e9


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


def _requests(path: Path, task: str, contexts: list[str]) -> Path:
    rows = [
        {"task": task, "formulation": "cf", "instance_index": i, "native_id": i, "choice": c, "label": 0,
         "context": context, "continuation": f" {answer}", "unconditional": False}
        for i, context in enumerate(contexts) for c, answer in enumerate(["yes", "no", "the size of it"])
    ]  # fmt: skip
    write_records(rows, path)
    return path


# -- run-time placement: pure decisions on simulated GPUs --------------------------------------


def test_a_model_that_fits_one_gpu_stays_on_one() -> None:
    assert choose_placement(int(LLAMA2_7B * 2), [H100, H100]) == Placement()
    assert choose_placement(int(LLAMA3_70B * 2), []) == Placement()  # a CPU (or a named device)
    assert choose_placement(None, [H100]) == Placement()  # size unknown: one device


def test_a_model_larger_than_one_gpu_is_balanced_over_all_with_a_budget_each() -> None:
    placement = choose_placement(int(LLAMA3_70B * 2), [H100, H100])
    assert placement.split and placement.device_map == BALANCED
    assert placement.max_memory == {0: int(H100 * WEIGHTS_SHARE), 1: int(H100 * WEIGHTS_SHARE)}
    # the budget leaves every GPU room for activations, and two hold the weights
    assert all(H100 - budget >= 8 * GB for budget in placement.max_memory.values())
    assert sum(placement.max_memory.values()) >= LLAMA3_70B * 2


def test_split_modes_and_the_gpu_memory_budget() -> None:
    small = int(LLAMA2_7B * 2)
    assert choose_placement(small, [H100, H100], split="always").max_memory == {
        0: int(H100 * WEIGHTS_SHARE), 1: int(H100 * WEIGHTS_SHARE)
    }  # fmt: skip
    assert choose_placement(int(LLAMA3_70B * 2), [H100, H100], split="never") == Placement()
    # a 10 GB budget per GPU: the 7B model (13.5 GB) no longer fits one
    assert choose_placement(small, [H100, H100], gpu_memory=10).max_memory == {0: 10 * GB, 1: 10 * GB}
    with pytest.raises(OlmesError, match=r"do not fit the 1 visible GPU.*resources: gpus"):
        choose_placement(int(LLAMA3_70B * 2), [H100])
    with pytest.raises(OlmesError, match="unknown split mode"):
        choose_placement(small, [H100], split="sometimes")


def test_parameters_are_read_from_the_safetensors_headers(tiny_dir: Path) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    assert safetensors_parameters(tiny_dir) == model.num_parameters()
    assert safetensors_parameters(tiny_dir.parent) is None


# -- the cluster resources rule ----------------------------------------------------------------


def test_cluster_resources_follow_the_models_size() -> None:
    tiny = job_resources(None, 4, 80)  # an embedded model (size not computed): the smallest job
    small = job_resources(135e6, 4, 80)  # SmolLM2-135M in float32
    seven = job_resources(LLAMA2_7B, 2, 80)
    seventy = job_resources(LLAMA3_70B, 2, 80)
    assert tiny.gpus == small.gpus == seven.gpus == 1
    assert seventy.gpus >= 2  # 141 GB of weights: more than one 80 GB GPU
    assert job_resources(LLAMA3_70B, 2, 40).gpus > seventy.gpus  # smaller GPUs: more of them
    assert tiny.mem_mb < small.mem_mb < seven.mem_mb < seventy.mem_mb
    assert seventy.mem_mb * 1e6 > LLAMA3_70B * 2  # the host holds the weights while loading
    assert tiny.runtime <= small.runtime <= seven.runtime < seventy.runtime
    assert job_resources(LLAMA3_70B, 4, 80).gpus > seventy.gpus  # float32 doubles the weights


def test_a_config_entry_overrides_the_rule() -> None:
    rule = job_resources(LLAMA3_70B, 2, 80)
    given = job_resources(LLAMA3_70B, 2, 80, {"gpus": 4, "runtime": 30})
    assert (given.gpus, given.mem_mb, given.runtime) == (4, rule.mem_mb, 30)


# -- the same log-probs split over devices, and one load for many files ------------------------


def test_split_over_cpu_and_disk_gives_the_same_logprobs(tiny_dir: Path, tmp_path: Path, capsys) -> None:
    jobs = [
        (_requests(tmp_path / "a.jsonl", "arc_easy", ["Question: Which is a trait?\nAnswer:"]),
         tmp_path / "whole-a.parquet"),
        (_requests(tmp_path / "b.jsonl", "piqa", ["Goal: How do I ready a cage?\nAnswer:", "Fill in:"]),
         tmp_path / "whole-b.parquet"),
    ]  # fmt: skip
    whole = models.prepare(str(tiny_dir), device="cpu")
    records = score_files(whole, jobs, tmp_path / "cache-whole")
    assert capsys.readouterr().err.count("olmes: loaded ") == 1  # two files, one load
    assert records[0]["load_time_s"] > 0 and records[1]["load_time_s"] is None
    assert records[0]["placement"] == {
        "devices": ["cpu"], "device_map": None, "hf_device_map": None, "max_memory": None
    }  # fmt: skip

    device_map = {"model.embed_tokens": "cpu", "model.rotary_emb": "cpu", "model.layers.0": "cpu",
                  "model.layers.1": "disk", "model.norm": "cpu", "lm_head": "cpu"}  # fmt: skip
    offloaded = Placement(device_map, offload_folder=str(tmp_path / "offload"))
    split = replace(whole, placement=offloaded, loaded=None)
    split_jobs = [(requests, output.with_name(f"split-{output.name}")) for requests, output in jobs]
    split_records = score_files(split, split_jobs, tmp_path / "cache-split")
    assert capsys.readouterr().err.count("olmes: loaded ") == 1
    assert split.loaded.model.hf_device_map["model.layers.1"] == "disk"
    assert split_records[0]["placement"] == {
        "devices": ["cpu", "disk"], "device_map": "explicit", "hf_device_map": {"cpu": 5, "disk": 1},
        "max_memory": None,
    }  # fmt: skip
    assert split_records[0]["model_fingerprint"] == records[0]["model_fingerprint"]  # same cache key
    for (_, one), (_, other) in zip(jobs, split_jobs, strict=True):
        expected, got = pd.read_parquet(one), pd.read_parquet(other)
        assert (expected["sum_logprob"] != 0).all()
        pd.testing.assert_frame_equal(expected.drop(columns="sum_logprob"), got.drop(columns="sum_logprob"))
        assert within_tolerance(expected["sum_logprob"], got["sum_logprob"], expected["num_tokens"]).all()


def test_cli_scores_several_files_with_one_load_and_resumes_from_the_cache(
    tiny_dir: Path, tmp_path: Path, capsys
) -> None:
    first = _requests(tmp_path / "first.jsonl", "arc_easy", ["Question: Which is a trait?\nAnswer:"])
    second = _requests(tmp_path / "second.jsonl", "piqa", ["Goal: How do I ready a cage?\nAnswer:"])
    common = ["logprobs", "--model", str(tiny_dir), "--device", "cpu", "--quiet",
              "--cache-dir", str(tmp_path)]  # fmt: skip
    pairs = ["--requests", str(first), "--output", str(tmp_path / "1.parquet"),
             "--requests", str(second), "--output", str(tmp_path / "2.parquet")]  # fmt: skip
    assert main([*common, *pairs]) == 0
    err = capsys.readouterr().err
    assert err.count("olmes: loaded ") == 1 and err.count(" requests (0 from cache)") == 2
    alone = main([*common, "--requests", str(second), "--output", str(tmp_path / "alone.parquet")])
    assert alone == 0 and "olmes: loaded " not in capsys.readouterr().err  # all cached: no load
    assert (tmp_path / "alone.parquet").read_bytes() == (tmp_path / "2.parquet").read_bytes()
    record = json.loads((tmp_path / "2.parquet.run.json").read_text())
    assert record["requests_file"] == str(second) and record["placement"]["devices"] == ["cpu"]
    assert main([*common, "--requests", str(first), "--requests", str(second), "--output", "x.parquet"]) == 2
    assert "got 2 --requests but 1 --output" in capsys.readouterr().err
