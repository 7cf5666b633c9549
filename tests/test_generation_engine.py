"""The greedy generation engine: token for token what each prompt generated alone gives (batch 1, the
whole prompt forwarded, then greedy decoding with the model's own KV cache, cut as
lm-evaluation-harness cuts), on tiny random models of the tree-path and leaves-path architectures; and
the shared-prefix counts, exactly.

The tiny models run in float64: a structural error (a token seeing a wrong key or position) changes the
argmax at once, float rounding (1e-15) never does; each reference step's top-2 margin is checked too."""

from __future__ import annotations

import copy
import dataclasses
import functools

import numpy as np
import pytest
import torch

from olmes.logprobs import generation
from olmes.logprobs.architectures import LEAVES, TREE
from olmes.logprobs.generation import Generation, GenerationRequest, encode_prompts, generate
from olmes.logprobs.models import load
from tests.tiny_architectures import build_tiny_architecture

TREE_MODELS = (
    "llama",
    "gemma3",
    "gpt_neox",
    "opt",
    "deepseek_v2",
)  # plain, sliding+BOS, partial rotary, learned positions, MLA
LEAVES_MODELS = ("mpt", "zamba2")  # ALiBi, Mamba
SHARPEN = 5.0  # weights scaled so that attention, hence the output, depends on each key and position
MARGIN = 1e-9  # the reference's argmax must win by more than float64 rounding

SHOTS = "".join(
    f"Passage: The dog{' is' * i} a trait of its parents.\n"
    f"Question: Which size{'s' * i}?\nAnswer: the size {i}\n\n"
    for i in range(5)
)
QUESTIONS = [
    "Passage: Sarah was a much better surgeon.\nQuestion: Who?\nAnswer:",
    "Passage: A guinea pig cage.\n"
    "Question: How do I ready a guinea pig cage for it's new occupants?\nAnswer:",
    "Passage: Maria.\nQuestion: Which of the following is a trait that a dog does NOT inherit?\nAnswer:",
    "Passage: abstract algebra\nQuestion: yes\nAnswer:",
    "Passage: The following are multiple choice questions (with answers) about abstract algebra.\nAnswer:",
    "Passage: never\nQuestion: maybe\nAnswer:",
]


def coqa_prompts() -> list[str]:
    """Two stories, each with its turns: turn k's prompt is the story and turns 1..k-1 with answers."""
    prompts = []
    for story in ("Goal: How do I ready a guinea pig cage?", "Sarah was a much better surgeon than Maria."):
        turns = ""
        for question, answer in [("Who?", "Sarah"), ("Which trait?", "the size"), ("Why so?", "yes")]:
            prompts.append(f"{story}\n\nQ: {turns}{question}\nA:")
            turns += f"{question}\nA: {answer}\n\nQ: "
    return prompts


@functools.cache
def _model(name: str, folder):
    lm = load(str(build_tiny_architecture(folder / name, name)), device="cpu")
    if hasattr(lm.model.config, "num_experts_per_tok"):
        lm.model.set_experts_implementation("eager")  # the grouped matmul kernel has no float64
    with torch.no_grad():  # at the default init attention is nearly uniform: positions barely matter
        for weight in lm.model.parameters():
            if weight.dim() >= 2:
                weight.mul_(SHARPEN)
    return dataclasses.replace(lm, model=lm.model.double(), dtype=torch.float64)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("generation")
    return lambda name: _model(name, folder)


@torch.inference_mode()
def greedy_alone(lm, prompt: np.ndarray, budget: int) -> list[int]:
    """Batch 1: the whole prompt forwarded, then greedy decoding with the model's own KV cache, for the
    whole budget or until EOS (no stop sequences: lm-evaluation-harness cuts the text afterwards)."""
    tokens: list[int] = []
    output = lm.model(input_ids=torch.from_numpy(prompt)[None], use_cache=True)
    while True:
        logits = output.logits[0, -1]
        top = torch.topk(logits, 2).values
        assert float(top[0] - top[1]) > MARGIN, "a near tie in the reference: pick other prompts"
        tokens.append(int(logits.argmax()))
        if tokens[-1] == lm.tokenizer.eos_token_id or len(tokens) == budget:
            return tokens
        output = lm.model(input_ids=torch.tensor([[tokens[-1]]]), cache=output.cache, use_cache=True)


def expected(lm, request: GenerationRequest) -> Generation:
    """What oe-eval / lm-evaluation-harness return: generate alone, decode, cut at the stops; and the
    tokens kept: up to the one after which the decoded text first holds a stop (or EOS, or all)."""
    prompt = encode_prompts(lm.tokenizer, [request], lm.bos_token_id)[0]
    tokens = greedy_alone(lm, prompt, request.max_gen_toks)
    text = lm.tokenizer.decode(tokens, skip_special_tokens=True)
    for term in request.stop_sequences:
        text = text.split(term)[0]
    for count in range(1, len(tokens) + 1):
        partial = lm.tokenizer.decode(tokens[:count], skip_special_tokens=True)
        if tokens[count - 1] == lm.tokenizer.eos_token_id:
            return Generation(text, tokens[:count], count, "eos")
        if any(stop in partial for stop in request.stop_sequences):
            return Generation(text, tokens[:count], count, "stop")
    return Generation(text, tokens, len(tokens), "length")


def assert_engine_matches(lm, requests, batch_size):
    run = generate(lm, requests, batch_size=batch_size)
    want = [expected(lm, r) for r in requests]
    assert [g.token_ids for g in run.generations] == [w.token_ids for w in want]
    assert run.generations == want
    assert run.generated_tokens == sum(w.num_tokens for w in want)
    return run, want


def mid_token_stops(lm, requests: list[GenerationRequest]) -> list[GenerationRequest]:
    """Each request with a stop sequence taken from its own greedy text, ending one character into a
    token of it (a stop the harness finds only once the next token is decoded)."""
    out = []
    for request in requests:
        prompt = encode_prompts(lm.tokenizer, [request], lm.bos_token_id)[0]
        tokens = greedy_alone(lm, prompt, request.max_gen_toks)
        stop = None
        for k in range(2, len(tokens) - 1):
            before = lm.tokenizer.decode(tokens[:k])
            after = lm.tokenizer.decode(tokens[: k + 1])[len(before) :]
            candidate = before[-2:] + after[:1]
            if len(after) >= 2 and candidate.isascii() and candidate.isprintable():
                stop = candidate
                break
        out.append(dataclasses.replace(request, stop_sequences=(*request.stop_sequences, stop or "\n\n")))
    return out


@pytest.mark.parametrize("name", TREE_MODELS + LEAVES_MODELS)
def test_engine_equals_each_prompt_alone(models, name):
    lm = models(name)
    assert lm.scoring_path == (LEAVES if name in LEAVES_MODELS else TREE)
    few_shot = [GenerationRequest(SHOTS + q, ("Passage:", "\n\n"), 12) for q in QUESTIONS]
    coqa = [GenerationRequest(p, ("\n\nQ:",), 8 + i) for i, p in enumerate(coqa_prompts())]
    requests = few_shot + coqa + [GenerationRequest("Answer:", (), 5)]  # no shared prefix at all
    batch_sizes = (3, 64) if name in TREE_MODELS else (4,)
    for batch_size in batch_sizes:
        run, _ = assert_engine_matches(lm, requests, batch_size)
        if name in TREE_MODELS:
            assert run.shared_prefix_tokens_saved > 0 and run.path == TREE
        else:
            assert run.shared_prefix_tokens_saved == 0 and run.path == LEAVES


@pytest.mark.parametrize("name", ["llama", "gemma3", "mpt"])
def test_stop_sequences_ending_mid_token_and_eos(models, name):
    lm = models(name)
    base = [GenerationRequest(SHOTS + q, (), 16) for q in QUESTIONS] + [
        GenerationRequest(p, (), 16) for p in coqa_prompts()
    ]
    stopped = mid_token_stops(lm, base)
    run, want = assert_engine_matches(lm, stopped, batch_size=4)
    reasons = [g.stop_reason for g in run.generations]
    assert "stop" in reasons
    mid = [
        g for g, r in zip(run.generations, stopped, strict=True)
        if g.stop_reason == "stop" and not lm.tokenizer.decode(g.token_ids).endswith(r.stop_sequences[-1])
    ]  # fmt: skip
    assert mid, "no stop ended inside a token"
    # EOS: the token that one prompt generates third becomes the tokenizer's EOS
    prompt = encode_prompts(lm.tokenizer, base[:1], lm.bos_token_id)[0]
    eos = greedy_alone(lm, prompt, 3)[-1]
    tokenizer = copy.deepcopy(lm.tokenizer)
    tokenizer.eos_token = tokenizer.convert_ids_to_tokens(eos)
    assert tokenizer.eos_token_id == eos
    with_eos = dataclasses.replace(lm, tokenizer=tokenizer)
    run, _ = assert_engine_matches(with_eos, base, batch_size=4)
    assert run.generations[0].stop_reason == "eos" and run.generations[0].token_ids[-1] == eos
    assert "length" in [g.stop_reason for g in run.generations]


def test_long_prompts_are_cut_from_the_left(models):
    lm = models("llama")
    long = SHOTS * 40  # about 4000 tokens
    requests = [GenerationRequest(long + q, ("\n\n",), 50) for q in QUESTIONS[:2]]
    requests.append(GenerationRequest(long + QUESTIONS[2], ("\n\n",), 7))
    prompts = encode_prompts(lm.tokenizer, requests, lm.bos_token_id)
    assert [len(p) for p in prompts] == [1998, 1998, 2041]
    assert_engine_matches(lm, requests, batch_size=8)


def test_shared_prefix_counts_are_exact(models):
    lm = models("llama")
    tokenizer = lm.tokenizer
    # one batch of n few-shot prompts: the longest common prefix L forwarded once, saved (n - 1) * L
    requests = [GenerationRequest(SHOTS + q, ("\n\n",), 2) for q in QUESTIONS]
    prompts = encode_prompts(tokenizer, requests, lm.bos_token_id)
    common = generation._common_length(prompts)
    assert common >= len(tokenizer(SHOTS)["input_ids"]) - 1
    run = generate(lm, requests, batch_size=len(requests))
    assert run.prompt_tokens == sum(len(p) for p in prompts)
    assert run.shared_prefix_tokens_saved == (len(requests) - 1) * common
    assert run.prefill_tokens_forwarded == run.prompt_tokens - (len(requests) - 1) * common
    # CoQA: a story's 3 turns in one batch, each turn's prompt a prefix of the next one's, so the
    # batch's prefix is the first turn less its last token: (2 turns) x (len(turn 1) - 1) saved per story
    turns = coqa_prompts()
    requests = [GenerationRequest(p, (), 2) for p in turns]
    prompts = encode_prompts(tokenizer, requests, lm.bos_token_id)
    for story in (prompts[:3], prompts[3:]):
        assert all((story[k + 1][: len(story[k])] == story[k]).all() for k in range(2))
    assert generation._common_length([prompts[0], prompts[3]]) == 0  # the stories share nothing
    run = generate(lm, requests, batch_size=3)
    assert run.shared_prefix_tokens_saved == 2 * (len(prompts[0]) - 1) + 2 * (len(prompts[3]) - 1)
    # the few-shot block kept across batches: batch 2's prefix extends batch 1's
    requests = [GenerationRequest(SHOTS + q, (), 2) for q in QUESTIONS[:4]]
    requests = requests + [GenerationRequest(SHOTS + QUESTIONS[0] + " x", (), 2)]
    prompts = encode_prompts(tokenizer, requests, lm.bos_token_id)
    order = sorted(range(5), key=lambda i: prompts[i].astype(">i4").tobytes())
    first, second = [prompts[i] for i in order[:3]], [prompts[i] for i in order[3:]]
    c1 = min(generation._common_length(first), min(map(len, first)) - 1)
    c2 = min(generation._common_length(second), min(map(len, second)) - 1)
    reused = generation._common_length([first[0][:c1], second[0][:c2]])
    run = generate(lm, requests, batch_size=3)
    assert run.prefill_tokens_forwarded == c1 + (c2 - reused) + sum(len(p) for p in prompts) - 3 * c1 - 2 * c2
    assert reused >= common  # the block was not computed twice


def test_an_engine_with_positions_off_by_one_fails(models, monkeypatch):
    """The comparison catches a structural error: the generated tokens' position ids one too far from
    the prompt's (a shift of every position would change nothing under rotary embeddings)."""
    lm = models("llama")
    requests = [GenerationRequest(SHOTS + q, (), 8) for q in QUESTIONS[:4]]
    want = [expected(lm, r) for r in requests]
    forward = lm.model.forward

    def shifted(*args, **kwargs):
        if kwargs["input_ids"].shape[1] == 1:  # a decoding step
            kwargs["position_ids"] = kwargs["position_ids"] + 1
        return forward(*args, **kwargs)

    monkeypatch.setattr(lm.model, "forward", shifted)
    run = generate(lm, requests, batch_size=4)
    monkeypatch.undo()
    assert [g.token_ids for g in run.generations] != [w.token_ids for w in want]


def test_out_of_memory_halves_the_batch(models, monkeypatch):
    lm = models("llama")
    requests = [GenerationRequest(SHOTS + q, ("\n\n",), 6) for q in QUESTIONS]
    forward, rows, failures = lm.model.forward, [], []

    def small_memory(*args, **kwargs):
        rows.append(kwargs["input_ids"].shape[0])
        if rows[-1] > 2 and len(failures) < 2:
            failures.append(rows[-1])
            raise torch.OutOfMemoryError("simulated")
        return forward(*args, **kwargs)

    monkeypatch.setattr(lm.model, "forward", small_memory)
    run = generate(lm, requests, batch_size=8)
    monkeypatch.undo()
    assert failures == [6, 4]
    assert run.generations == [expected(lm, r) for r in requests]


def test_on_done_reports_every_request_once(models):
    lm = models("llama")
    requests = [GenerationRequest(p, (), 3) for p in coqa_prompts()]
    seen = []
    run = generate(lm, requests, batch_size=2, on_done=lambda indices, gens: seen.extend(indices.tolist()))
    assert sorted(seen) == list(range(len(requests)))
    assert all(g is not None for g in run.generations)


def test_generate_file_caches_resumes_and_scores_the_gold(models, tmp_path):
    import pandas as pd

    from olmes.core.records import read_run_record
    from olmes.core.records.generative import GENERATION_COLUMNS
    from olmes.logprobs import engine
    from olmes.logprobs.generation_cache import GenerationCache
    from olmes.logprobs.generation_runner import generate_file

    lm = models("llama")
    rows = [
        {"task": "drop", "instance_index": i, "native_id": 100 + i, "context": SHOTS + q,
         "stop_sequences": ["\n\n"], "max_gen_toks": 6, "gold_context": SHOTS + q,
         "gold_continuation": " the size"}
        for i, q in enumerate(QUESTIONS)
    ]  # fmt: skip
    requests = tmp_path / "requests.jsonl"
    requests.write_text("{}\n")
    cache = tmp_path / "cache"
    first = generate_file(lm, rows[:3], requests, tmp_path / "first.parquet", cache, batch_size=2)
    assert first["generation"]["from_cache"] == 0 and first["generation"]["generated_tokens"] > 0
    record = generate_file(lm, rows, requests, tmp_path / "out.parquet", cache, batch_size=2)
    counts = record["generation"]
    assert counts["from_cache"] == 3 and counts["requests"] == 6 and record["requests_from_cache"] == 3
    assert (
        counts["shared_prefix_tokens_saved"]
        == counts["prompt_tokens"] - counts["prefill_tokens_forwarded"]
        > 0
    )
    table = pd.read_parquet(tmp_path / "out.parquet")
    assert list(table.columns) == [c.name for c in GENERATION_COLUMNS]
    want = [expected(lm, GenerationRequest(r["context"], ("\n\n",), 6)) for r in rows]
    assert table["generation"].tolist() == [w.text for w in want]
    assert table["num_tokens"].tolist() == [w.num_tokens for w in want]
    assert table["native_id"].tolist() == [str(100 + i) for i in range(6)]
    gold = engine.score(lm, [(r["gold_context"], r["gold_continuation"]) for r in rows])
    assert table["gold_sum_logprob"].tolist() == pytest.approx(gold.sum_logprob.tolist(), abs=1e-6)
    assert table["gold_num_bytes"].tolist() == [9] * 6
    assert read_run_record(tmp_path / "out.parquet")["generation"] == counts
    chunks = sorted(GenerationCache(cache, lm.fingerprint).folder.glob("*.parquet"))
    chunks[0].write_bytes(chunks[0].read_bytes()[:-10] + bytes(10))
    assert GenerationCache(cache, lm.fingerprint).load().corrupt_files == 1
    again = generate_file(lm, rows, requests, tmp_path / "again.parquet", cache, batch_size=2)
    assert 0 < again["generation"]["from_cache"] < 6
    assert pd.read_parquet(tmp_path / "again.parquet").equals(table)


def _record_forwards(lm, monkeypatch):
    """Patch the model's forward to record each call's rows, query length and KV buffer (layer 0)."""
    forward, calls = lm.model.forward, []

    def recording(*args, **kwargs):
        output = forward(*args, **kwargs)
        layer = kwargs["cache"].layers[0]
        buffer = getattr(layer, "key_buffer", None)
        calls.append(
            {
                "rows": kwargs["input_ids"].shape[0],
                "queries": kwargs["input_ids"].shape[1],
                "cache": id(kwargs["cache"]),
                "buffer": None if buffer is None else (buffer.data_ptr(), tuple(buffer.shape)),
                "view": layer.keys.data_ptr() if buffer is not None else None,
            }
        )
        return output

    monkeypatch.setattr(lm.model, "forward", recording)
    return calls


def test_the_kv_buffer_is_written_in_place(models, monkeypatch):
    """One buffer per layer allocated at the batch's final size (prefix + padded remainders + the
    budget's steps) before the prefill; every decoding step writes into it: the same storage and shape
    at every step, the keys handed to attention a view of it; one model call per generated token."""
    lm = models("llama")
    budget = 9
    requests = [GenerationRequest(SHOTS + q, (), budget) for q in QUESTIONS[:4]]
    calls = _record_forwards(lm, monkeypatch)
    run = generate(lm, requests, batch_size=4)
    monkeypatch.undo()
    assert run.generations == [expected(lm, r) for r in requests]
    assert all(g.num_tokens == budget for g in run.generations)  # no row stops early: no compaction
    prefix, prefill, *steps = calls
    assert prefix["rows"] == 1 and prefill["rows"] == 4 and prefill["queries"] > 1
    assert len(steps) == budget - 1 and run.model_calls == len(calls) == budget + 1
    prompts = encode_prompts(lm.tokenizer, requests, lm.bos_token_id)
    common = generation._common_length(prompts)
    width = max(len(p) for p in prompts) - common
    storage, shape = prefill["buffer"]
    assert shape[0] == 4 and shape[2] == common + width + budget - 1  # final size, allocated once
    for step in steps:
        assert step["rows"] == 4 and step["queries"] == 1 and step["cache"] == prefill["cache"]
        assert step["buffer"] == (storage, shape) and step["view"] == storage


def test_rows_finishing_at_different_steps_equal_alone(models, monkeypatch):
    """Budgets 1..13 in one batch: finished rows stay in the buffer (fed, ignored) until at most half are
    left, then the buffer is compacted to the rows left; every row still equals its prompt alone."""
    lm = models("llama")
    budgets = [1, 2, 3, 5, 8, 13]
    requests = [GenerationRequest(SHOTS + q, (), b) for q, b in zip(QUESTIONS, budgets, strict=True)]
    calls = _record_forwards(lm, monkeypatch)
    run = generate(lm, requests, batch_size=6)
    monkeypatch.undo()
    assert run.generations == [expected(lm, r) for r in requests]
    assert [g.num_tokens for g in run.generations] == budgets
    assert [c["rows"] for c in calls] == [1, 6] + [6, 6, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1]  # 12 steps
    stopped = mid_token_stops(lm, [GenerationRequest(SHOTS + q, (), 12) for q in QUESTIONS])
    assert_engine_matches(lm, stopped, batch_size=6)  # rows ending on stop sequences, mid-batch
