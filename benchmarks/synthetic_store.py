"""A results store of N synthetic models made from the real ones, for measuring the leaderboard at scale.

Never published: the models are copies of the store's models under new names (``Synth-0001 ...``), each
with a share of its instances scrambled, so that every model scores differently. A synthetic model is
made the way a real one is published, so the store passes every check a real store does:

1. its log-prob files are the real model's with, for a share of the instances (drawn per model between
   ``--min-share`` and ``--max-share``), the CF and MCF ``sum_logprob`` of the instance's choices
   rotated by one (the pmi files are kept: they do not depend on the answer order); its run records are
   the real ones with a fingerprint and revision of its own;
2. ``olmes.scoring.score.score_task`` scores them (predictions and summaries consistent with the
   log-probs by construction);
3. ``olmes.store.publish.publish`` checks and moves them into the store, like ``olmes publish``.

Only the standard results are made (no robustness results). Model k copies the store's model k mod M;
the draws depend on ``--seed`` and k only, so a store of 500 holds the same first 50 models as a store
of 50 made with the same seed.

    .venv/bin/python benchmarks/synthetic_store.py OUT --models 500 [--from leaderboard] [--jobs 2]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from olmes import store as store_api
from olmes.core.identities import qualified_name
from olmes.core.records import read_run_record, write_run_record, write_score_summary
from olmes.core.resources import file_sha256
from olmes.scoring.predictions import write_predictions
from olmes.scoring.score import score_task
from olmes.store.publish import publish
from olmes.tables.results import ModelInfo

SCRAMBLED_SETS = ("cf", "mcf")  # the request sets whose log-probs depend on which choice is which


def synthetic_name(number: int) -> str:
    return f"Synth-{number:04d}"


def rotate_choices(frame: pd.DataFrame, instances: np.ndarray) -> pd.DataFrame:
    """``frame`` with each chosen instance's ``sum_logprob`` values moved one choice on (a rotation
    within the instance's rows, which are contiguous in a log-prob file)."""
    values = frame["sum_logprob"].to_numpy().copy()
    index = frame["instance_index"].to_numpy()
    starts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    sizes = np.diff(np.r_[starts, len(index)])
    start_of_row = np.repeat(starts, sizes)
    size_of_row = np.repeat(sizes, sizes)
    source = start_of_row + (np.arange(len(index)) - start_of_row - 1) % size_of_row
    chosen = np.isin(index, instances)
    values[chosen] = values[source[chosen]]
    out = frame.copy()
    out["sum_logprob"] = values
    return out


def make_model(
    real_store: Path,
    base: str,
    number: int,
    seed: int,
    shares: tuple[float, float],
    work: Path,
    tasks: list[str] | None = None,
) -> str:
    """Write synthetic model ``number`` (copied from ``base``; its ``tasks``, default all) as a results
    folder under ``work``."""
    name = synthetic_name(number)
    rng = np.random.default_rng([seed, number])
    share = rng.uniform(*shares)
    record = store_api.read_model_record(real_store, base)
    fingerprint = hashlib.sha256(f"{name}/{record['fingerprint']}".encode()).hexdigest()[:32]
    logprobs, scores = work / "logprobs" / name, work / "scores" / name
    logprobs.mkdir(parents=True)
    scores.mkdir(parents=True)
    source = real_store / "models" / base / "logprobs"
    for task, entry in record["tasks"].items():
        if tasks is not None and task not in tasks:
            continue
        paths = {}
        chosen = None
        for request_set in entry["requests_sha256"]:
            file_name = f"{task}.{request_set}.parquet"
            frame = pd.read_parquet(source / file_name)
            if request_set in SCRAMBLED_SETS:
                if chosen is None:
                    instances = np.unique(frame["instance_index"].to_numpy())
                    chosen = instances[rng.random(len(instances)) < share]
                frame = rotate_choices(frame, chosen)
            paths[request_set] = logprobs / file_name
            frame.to_parquet(paths[request_set], index=False)
            run = read_run_record(source / file_name)
            run.update(model_fingerprint=fingerprint, model_revision=f"synthetic:{fingerprint}")
            if "identity" in record:  # as a run records it: model.json's identity must come from its runs
                run["identity"] = record["identity"]
            write_run_record(paths[request_set], run)
        predictions, summary = score_task(
            name, cf_path=paths.get("cf"), pmi_path=paths.get("pmi"), mcf_path=paths.get("mcf"),
            limit=entry["limit"], require_pmi="pmi" in paths,
        )  # fmt: skip
        write_predictions(predictions, scores / f"{task}.predictions.parquet")
        summary["predictions"] = {
            "path": f"{task}.predictions.parquet",
            "sha256": file_sha256(scores / f"{task}.predictions.parquet"),
        }
        write_score_summary(scores / f"{task}.scores.json", summary)
    identity = record.get("identity")
    display = f"{name} ({base})"
    info = ModelInfo(name, qualified_name(display, identity) if identity else display, identity=identity)
    (work / "models.json").write_text(json.dumps({"models": [info.entry()]}), encoding="utf-8")
    return name


def _make_and_publish(args: tuple) -> str:
    real_store, base, number, seed, shares, out, tasks = args
    with tempfile.TemporaryDirectory(dir=out.parent) as work:
        name = make_model(real_store, base, number, seed, shares, Path(work), tasks)
        publish(Path(work), out, [name])
    return name


def make_store(
    real_store: Path,
    out: Path,
    count: int,
    seed: int = 21,
    shares: tuple[float, float] = (0.02, 0.5),
    jobs: int = 2,
    tasks: list[str] | None = None,
) -> None:
    """Fill ``out`` with ``count`` synthetic models (those already there are kept)."""
    bases = store_api.model_names(real_store)
    out.parent.mkdir(parents=True, exist_ok=True)
    have = set(store_api.model_names(out)) if store_api.is_store(out) else set()
    todo = [
        (real_store, bases[number % len(bases)], number, seed, shares, out, tasks)
        for number in range(1, count + 1)
        if synthetic_name(number) not in have
    ]
    started = time.monotonic()
    if todo and not store_api.is_store(out):
        _make_and_publish(todo.pop(0))  # the first publish creates the store and its task files
    with ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else contextlib.nullcontext() as pool:
        made = pool.map(_make_and_publish, todo) if pool else map(_make_and_publish, todo)
        for done, name in enumerate(made, start=1):
            if done % 25 == 0 or done == len(todo):
                print(f"{name}: {done}/{len(todo)} in {time.monotonic() - started:.0f} s", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the synthetic store (created; models already in it are kept)")
    parser.add_argument("--models", type=int, required=True)
    parser.add_argument("--from", dest="real", type=Path, default=Path("leaderboard"))
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--min-share", type=float, default=0.02)
    parser.add_argument("--max-share", type=float, default=0.5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--tasks", nargs="+", help="only these tasks (default: every task of the real models)"
    )
    args = parser.parse_args()
    shares = (args.min_share, args.max_share)
    make_store(args.real, args.out, args.models, args.seed, shares, args.jobs, args.tasks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
