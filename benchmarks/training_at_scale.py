"""Checkpoint series at scale: synthetic series scored like real runs, and what ``olmes tables`` and
``olmes site`` cost with several series of hundreds of checkpoints.

A synthetic checkpoint is scored the way a real run is: engine-format log-prob files (CF, pmi where the
task's standard scores it, MCF) in which each instance's gold choice wins under CF and under MCF
exactly where asked (:func:`write_checkpoint`), scored by ``score_task`` and written by
``write_scores`` (predictions file and score summary). The gold continuation's log-prob is -1 where CF
is right and -3 where it is wrong, so bits per byte falls as CF accuracy rises. tests/test_training.py
and scripts/screenshot_training.py make their series with it.

The benchmark makes ``--series`` series of ``--checkpoints`` checkpoints each (training tokens spaced
evenly in log from 1B to 3T) on ``--tasks``, at their standard instance counts: CF rises from chance
early, MCF stays at chance and rises later (each series a little later than the one before), every
instance learned for good once its formulation's skill passes it, with a share of instances guessed
afresh at each checkpoint (noise). Then it times ``olmes tables`` and ``olmes site`` (wall time and peak
memory, an empty digest cache), the training tables alone, and measures the series pages. An OUT that
already holds series (its models.json) is measured again, the series not made again.

    .venv/bin/python benchmarks/training_at_scale.py OUT [--series 3] [--checkpoints 200] \\
        [--tasks arc_easy boolq hellaswag]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # benchmarks.leaderboard_at_scale, when run as a script

from benchmarks.leaderboard_at_scale import measured  # noqa: E402
from olmes.core.tasks import TASKS  # noqa: E402
from olmes.scoring.score import score_task, write_scores  # noqa: E402
from olmes.tables.results import ModelInfo  # noqa: E402

TWO_CHOICES = ("boolq", "winogrande")
MiB = 2**20


def choices(task: str) -> int:
    """How many choices a synthetic instance of ``task`` has."""
    return 2 if task in TWO_CHOICES else 4


def chance(task: str) -> float:
    return 1 / choices(task)


def checkpoint_frames(
    task: str, cf_correct: np.ndarray, mcf_correct: np.ndarray, subjects: np.ndarray | None = None
) -> dict[str, pd.DataFrame]:
    """Engine-format log-prob frames of one checkpoint on ``task``, by request set: instance i's gold
    (choice i mod choices) wins under every CF normalization where ``cf_correct[i]`` (the continuations
    are all one token and two characters, and the pmi baseline is the same for every choice), under
    MCF where ``mcf_correct[i]``; else the next choice wins."""
    n, k = len(cf_correct), choices(task)
    index = np.repeat(np.arange(n), k)
    choice = np.tile(np.arange(k), n)
    label = index % k
    base = {
        "task": task, "instance_index": index, "native_id": index.astype(str), "choice": choice,
        "label": label, "num_tokens": 1, "num_chars": 2, "num_bytes": 2, "is_greedy": False,
    }  # fmt: skip
    if subjects is not None:
        base["subject"] = np.repeat(subjects, k)

    def frame(formulation: str, correct: np.ndarray | None) -> pd.DataFrame:
        if correct is None:  # the pmi baseline: the same log-prob for every choice
            sums, unconditional = np.full(n * k, -2.0), True
        else:
            winner = np.where(np.repeat(correct, k), label, (label + 1) % k)
            sums, unconditional = np.where(choice == winner, -1.0, -3.0), False
        return pd.DataFrame(
            {**base, "formulation": formulation, "unconditional": unconditional, "sum_logprob": sums}
        )

    frames = {"cf": frame("cf", cf_correct), "mcf": frame("mcf", mcf_correct)}
    if TASKS[task].has_pmi:
        frames["pmi"] = frame("pmi", None)
    return frames


def write_checkpoint(
    root: Path,
    model: str,
    task: str,
    cf_correct: np.ndarray,
    mcf_correct: np.ndarray,
    subjects: np.ndarray | None = None,
) -> Path:
    """Log-probs of :func:`checkpoint_frames` under ``root/logprobs/<model>/``, scored into
    ``root/scores/<model>/<task>.scores.json`` (returned) beside its predictions file."""
    logprobs, scores = root / "logprobs" / model, root / "scores" / model
    logprobs.mkdir(parents=True, exist_ok=True)
    paths = {}
    for request_set, frame in checkpoint_frames(task, cf_correct, mcf_correct, subjects).items():
        paths[f"{request_set}_path"] = logprobs / f"{task}.{request_set}.parquet"
        frame.to_parquet(paths[f"{request_set}_path"], index=False)
    predictions, summary = score_task(model, **paths)
    summary_path = scores / f"{task}.scores.json"
    write_scores(predictions, summary, scores / f"{task}.predictions.parquet", summary_path)
    return summary_path


def write_models_file(path: Path, models: list[ModelInfo]) -> Path:
    path.write_text(json.dumps({"models": [info.entry() for info in models]}, indent=1), encoding="utf-8")
    return path


# -- the benchmark's series ---------------------------------------------------------------------------


def learned(tokens: np.ndarray, middle: float, width: float, floor: float, top: float) -> np.ndarray:
    """Accuracy over training: from ``floor`` (chance) to ``top``, a logistic in log10 tokens."""
    return floor + (top - floor) / (1 + np.exp(-(np.log10(tokens) - middle) / width))


def series_models(series: int, checkpoints: int) -> list[ModelInfo]:
    """Series ``series``'s checkpoints, named by step, spaced evenly in log tokens from 1B to 3T."""
    name = f"Synth-{chr(ord('A') + series)}"
    tokens = np.geomspace(1e9, 3e12, checkpoints)
    return [
        ModelInfo(f"{name.lower()}-step{k:04d}", f"{name} step {k}", name, float(t), f"step{k}")
        for k, t in enumerate(tokens)
    ]


def write_series(
    root: Path, series: int, checkpoints: int, tasks: list[str], seed: int = 7
) -> list[ModelInfo]:
    """One synthetic series (:func:`series_models`) scored on ``tasks`` at their standard sizes."""
    models = series_models(series, checkpoints)
    tokens = np.array([info.training_tokens for info in models])
    rng = np.random.default_rng([seed, series])
    for task in tasks:
        n, floor = TASKS[task].standard_count, chance(task)
        subjects = np.array([f"subject-{i % 5}" for i in range(n)]) if TASKS[task].subjects else None
        cf_curve = learned(tokens, 10.3, 0.5, floor, 0.7)
        mcf_curve = learned(tokens, 11.4 + 0.15 * series, 0.25, floor, 0.85)
        cf_skill, mcf_skill = rng.random(n), rng.random(n)
        for info, cf_p, mcf_p in zip(models, cf_curve, mcf_curve, strict=True):
            guessed = rng.random(n) < 0.15
            cf = np.where(guessed, rng.random(n) < floor, cf_skill < cf_p)
            mcf = np.where(guessed, rng.random(n) < floor, mcf_skill < mcf_p)
            write_checkpoint(root, info.name, task, cf, mcf, subjects)
    return models


def measure_build(root: Path) -> dict:
    """``olmes tables`` and ``olmes site`` on the series under ``root``, each timed with an empty digest
    cache; the training tables alone, in this process; the series pages' sizes."""
    olmes = str(Path(sys.executable).parent / "olmes")
    scores, models = str(root / "scores"), str(root / "models.json")
    tables, site = root / "tables", root / "site"
    with tempfile.TemporaryDirectory() as cache:
        tables_s, tables_rss = measured(
            [olmes, "tables", "--scores", scores, "--models", models, "--out", str(tables)], Path(cache)
        )
        site_s, site_rss = measured(
            [
                olmes,
                "site",
                "--scores",
                scores,
                "--models",
                models,
                "--tables",
                str(tables),
                "--out",
                str(site),
            ],
            Path(cache),
        )
    from olmes.tables.results import load_scores
    from olmes.tables.training import training_tables

    started = time.monotonic()
    training_tables(load_scores([scores], models), 1000, 1234)
    training_s = time.monotonic() - started
    pages = sorted((site / "training").glob("*.html"))
    return {
        "tables_s": tables_s, "tables_mib": tables_rss / MiB, "site_s": site_s, "site_mib": site_rss / MiB,
        "training_tables_s": training_s, "series_pages": len(pages),
        "series_page_mib": max(page.stat().st_size for page in pages) / MiB,
        "export_mib": (tables / "training_series.json").stat().st_size / MiB,
    }  # fmt: skip


def make_series(out: Path, count: int, checkpoints: int, tasks: list[str]) -> None:
    """``count`` series (:func:`write_series`) under ``out`` and their models file."""
    started = time.monotonic()
    models = []
    for series in range(count):
        models += write_series(out, series, checkpoints, tasks)
        print(f"series {series + 1}/{count} made in {time.monotonic() - started:.0f} s", file=sys.stderr)
    write_models_file(out / "models.json", models)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "out", type=Path, help="the series' scores, tables and site (made again: measured only)"
    )
    parser.add_argument("--series", type=int, default=3)
    parser.add_argument("--checkpoints", type=int, default=200)
    parser.add_argument("--tasks", nargs="+", default=["arc_easy", "boolq", "hellaswag"])
    args = parser.parse_args()
    if not (args.out / "models.json").is_file():
        make_series(args.out, args.series, args.checkpoints, args.tasks)
    models = json.loads((args.out / "models.json").read_text(encoding="utf-8"))["models"]
    print(f"{len({info['series'] for info in models})} series, {len(models)} checkpoints")
    for key, value in measure_build(args.out).items():
        print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
