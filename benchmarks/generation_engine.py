"""The generation engine against transformers' ``model.generate``: same model, same prompts, same batch
size, greedy, the same stop strings; tokens/s of each, the prompt tokens the shared prefixes saved, and
whether the two generate the same tokens.

    python benchmarks/generation_engine.py                      # SmolLM2-135M, 32 DROP + 32 CoQA prompts
    python benchmarks/generation_engine.py --limit 8 --batch-size 8 --device cuda
    python benchmarks/generation_engine.py --limit 8 --batch-size 8 --tasks drop,gsm8k

The prompts are the first ``--limit`` requests of the reference request dumps of AI2's implementation
(``olmes.core.bundle.read_dump``): DROP 5-shot (the few-shot block shared by every prompt), CoQA
(the turns of a story share the story and the earlier turns) and GSM8K 8-shot (``--tasks gsm8k``: up
to 512 tokens a row, the long decode). ``model.generate`` gets left-padded
batches of the same prompts (the same BOS and left cut as the engine), one task per batch (its stop
strings), ``do_sample=False``, ``max_new_tokens`` = the budget and ``stop_strings``; its tokens are
compared with the engine's up to the engine's stop.
"""

from __future__ import annotations

import argparse
import itertools
import time

import torch

from olmes.core.bundle import read_dump
from olmes.logprobs.generation import GenerationRequest, cut_at_stop, encode_prompts, generate
from olmes.logprobs.models import load

DUMPS = {"drop": "bpb_5shot", "coqa": "bpb_0shot", "gsm8k": "gold_bpb_5shot"}


def requests_of(task: str, variant: str, limit: int) -> list[GenerationRequest]:
    out = []
    for row in itertools.islice(read_dump(task, variant), limit):
        request = row["request"]
        budget = int(request.get("generation_kwargs", {}).get("max_gen_toks", 256))
        out.append(GenerationRequest(request["context"], tuple(request["stop_sequences"]), budget))
    return out


@torch.inference_mode()
def hf_generate(lm, requests: list[GenerationRequest], batch_size: int) -> tuple[list[list[int]], float]:
    """``model.generate`` on left-padded batches (prompts in the given order); generated ids per request."""
    tokenizer = lm.tokenizer
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    prompts = encode_prompts(tokenizer, requests, lm.bos_token_id)
    generated: list[list[int]] = []
    started = time.perf_counter()
    for start in range(0, len(requests), batch_size):
        batch, rows = requests[start : start + batch_size], prompts[start : start + batch_size]
        width = max(len(p) for p in rows)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for row, prompt in enumerate(rows):
            ids[row, width - len(prompt) :] = torch.from_numpy(prompt)
            mask[row, width - len(prompt) :] = 1
        output = lm.model.generate(
            input_ids=ids.to(lm.device),
            attention_mask=mask.to(lm.device),
            do_sample=False,
            max_new_tokens=max(r.max_gen_toks for r in batch),
            stop_strings=list(batch[0].stop_sequences),
            tokenizer=tokenizer,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=pad,
            temperature=None,
            top_p=None,
            top_k=None,
        )
        generated.extend(output[row, width:].tolist() for row in range(len(rows)))
    return generated, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--limit", type=int, default=32, help="prompts per task")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--tasks", default="drop,coqa", help=f"comma-separated, of {', '.join(DUMPS)}")
    args = parser.parse_args()
    lm = load(args.model, device=args.device)
    generate(lm, requests_of("drop", "bpb_5shot", 2), batch_size=2)  # warm up torch, not timed
    header = f"{'task':<6} {'n':>3} {'prompt tok':>10} {'saved':>8} {'gen tok':>7} {'engine tok/s':>12} "
    header += (
        f"{'engine s':>8} {'generate tok/s':>14} {'generate s':>10} {'speed-up':>8} {'same tokens':>11} "
    )
    header += f"{'same text':>9}"
    print(f"model {args.model} on {lm.device} ({lm.scoring_path} path), batch size {args.batch_size}")
    print(header)
    for task in args.tasks.split(","):
        variant = DUMPS[task]
        requests = requests_of(task, variant, args.limit)
        run = generate(lm, requests, batch_size=args.batch_size)
        order = sorted(range(len(requests)), key=lambda i: len(requests[i].context))  # generate's batches
        ids, took = hf_generate(lm, [requests[i] for i in order], args.batch_size)
        theirs = dict(zip(order, ids, strict=True))
        same_tokens = same_text = 0
        for index, (request, mine) in enumerate(zip(requests, run.generations, strict=True)):
            same_tokens += theirs[index][: mine.num_tokens] == mine.token_ids  # padding comes after
            text = cut_at_stop(
                lm.tokenizer.decode(theirs[index], skip_special_tokens=True), request.stop_sequences
            )
            same_text += text == mine.text
        useful = run.generated_tokens  # the same tokens for both: what the requests keep
        print(
            f"{task:<6} {len(requests):>3} {run.prompt_tokens:>10,} {run.shared_prefix_tokens_saved:>8,} "
            f"{useful:>7,} {useful / run.elapsed_s:>12.1f} {run.elapsed_s:>8.1f} "
            f"{useful / took:>14.1f} {took:>10.1f} "
            f"{took / run.elapsed_s:>7.2f}x {same_tokens:>5}/{len(requests):<5} "
            f"{same_text:>4}/{len(requests)}"
        )


if __name__ == "__main__":
    main()
