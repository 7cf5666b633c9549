"""The task_signal_noise table: noise, signal, SNR and the minimum detectable difference, each checked
against its definition (Heineman et al. 2025, arXiv 2508.13144; a two-sided z-test at 80% power)
written here as formulas over made-up scores, and the table on the methods page."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from olmes.cli.main import main
from olmes.core.records import SCORES_FORMAT
from olmes.core.tasks import TASKS
from olmes.scoring.predictions import NEAR_TIE_NATS
from olmes.scoring.statistics import olmes_result
from olmes.tables import build, render, results, signal_noise
from olmes.tables.digest import PredictionDigest
from tests.helpers import compile_latex, write_model_files

TASK = "arc_easy"  # 1000 instances in the standard
CF_KEY = TASKS[TASK].recommended_method.key
Z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.80)  # two-sided α = 0.05, power 0.80


def summary(
    model: str, task: str, cf: float, mcf: float, counts: dict[str, int] | None = None, partial: bool = False
) -> dict:
    """A score summary with CF (recommended) and MCF accuracies; ``counts``: instances per subject
    (MMLU), else the task's whole standard."""
    counts = counts or {"": TASKS[task].standard_count}
    total = sum(counts.values())

    def stats(accuracy: float) -> dict:
        found = {"accuracy": accuracy, "stderr": 0.01, "n": total, "correct": round(total * accuracy)}
        if task == "mmlu":
            found["subjects"] = {name: {"accuracy": accuracy, "n": n} for name, n in counts.items()}
        return {**found, "near_ties": 0}

    methods = {CF_KEY if task == TASK else TASKS[task].recommended_method.key: stats(cf), "mcf": stats(mcf)}
    return {
        "format": SCORES_FORMAT.tag, "model": model, "task": task, "display_name": TASKS[task].display_name,
        "recommended_norm": TASKS[task].recommended_norm, "n_instances": total,
        "full_count": TASKS[task].standard_count, "limit": total if partial else None, "partial": partial,
        "partial_reasons": ["limit"] if partial else [], "methods": methods,
        "best_of_two": olmes_result(methods, TASKS[task]), "near_tie_nats": NEAR_TIE_NATS, "inputs": {},
    }  # fmt: skip


def digest(correct: np.ndarray) -> PredictionDigest:
    """Per-instance correctness of the deciding method, on instances 0..n-1."""
    ids = json.dumps([f"id-{k}" for k in range(len(correct))]).encode()
    return PredictionDigest(0.25, [], np.arange(len(correct)), ids, None, [], correct.astype(bool))


def score_set(summaries: list[dict], models: list[results.ModelInfo]) -> results.ScoreSet:
    keyed = {(s["model"], s["task"]): s for s in summaries}
    tasks = [task for task in TASKS if any(t == task for _, t in keyed)]
    return results.ScoreSet(keyed, dict.fromkeys(keyed, Path("x")), models, tasks)


def record_of(table: render.Table, task: str, measure: str) -> dict:
    return next(r for r in table.records if r["task"] == task and r["measure"] == measure)


def rel_std(values) -> float:
    """σ / mean, σ over the values themselves (not a sample's n − 1)."""
    mean = sum(values) / len(values)
    return math.sqrt(sum((x - mean) ** 2 for x in values) / len(values)) / mean


def discordance(a: np.ndarray, b: np.ndarray) -> float:
    """Share of the instances both scored that exactly one of the two gets right."""
    shared = min(len(a), len(b))
    return sum(bool(x) != bool(y) for x, y in zip(a[:shared], b[:shared], strict=True)) / shared


# -- a store with checkpoint series ------------------------------------------------------------------

RUN = [0.9, 0.1, 0.9] + [
    0.50 + 0.01 * ((7 * k) % 5) for k in range(30)
]  # 33: the first 3 are not the last 30
SHORT = [0.30, 0.34, 0.32]
TINY = [0.20, 0.22]  # fewer than 3: no noise, but its last checkpoint is a final model
FINALS = {"big": (0.61, 0.70), "small": (0.45, 0.40)}  # CF, MCF


@pytest.fixture(scope="module")
def with_series():
    models = [results.ModelInfo(name, name.upper()) for name in FINALS]
    summaries = [summary(name, TASK, cf, mcf) for name, (cf, mcf) in FINALS.items()]
    limited = {"": 100}  # the checkpoints scored the first 100 instances
    for series, values in (("run", RUN), ("short", SHORT), ("tiny", TINY)):
        for step, value in enumerate(values):
            name = f"{series}-{step}"
            # listed latest first: their order is their training tokens', not the models file's
            models.insert(0, results.ModelInfo(name, name, series, (step + 1) * 1e9))
            summaries.append(summary(name, TASK, value - 0.05, value, limited, partial=True))
    scores = score_set(summaries, models)
    rng = np.random.default_rng(3)
    correct = {
        name: rng.random(1000 if name in FINALS else 100) < 0.5
        for name in [*FINALS, "run-32", "short-2", "tiny-1"]
    }
    for name, values in correct.items():
        scores._digests[(name, TASK)] = digest(values)
    return scores, correct


def test_noise_is_the_relative_std_of_each_series_last_checkpoints_averaged(with_series):
    scores, _ = with_series
    record = record_of(signal_noise.signal_noise_table(scores), TASK, "olmes")
    assert signal_noise.NOISE_CHECKPOINTS == 30  # the paper's final 30 checkpoints
    expected = (rel_std(RUN[-30:]) + rel_std(SHORT)) / 2  # tiny has 2 checkpoints: left out
    assert record["noise"] == pytest.approx(expected)
    assert [(e["series"], len(e["checkpoints"])) for e in record["noise_series"]] == [
        ("run", 30),
        ("short", 3),
    ]
    assert record["noise_series"][0]["checkpoints"][0] == "run-3"


def test_signal_is_the_range_of_the_final_models_over_their_mean(with_series):
    scores, _ = with_series
    table = signal_noise.signal_noise_table(scores)
    olmes, cf = record_of(table, TASK, "olmes"), record_of(table, TASK, "cf")
    finals = [max(FINALS["big"]), max(FINALS["small"]), RUN[-1], SHORT[-1], TINY[-1]]
    assert olmes["models"] == ["big", "small", "run-32", "short-2", "tiny-1"]
    assert olmes["mean"] == pytest.approx(sum(finals) / len(finals))
    assert olmes["signal"] == pytest.approx((max(finals) - min(finals)) / (sum(finals) / len(finals)))
    assert olmes["snr"] == pytest.approx(olmes["signal"] / olmes["noise"])
    cf_finals = [FINALS["big"][0], FINALS["small"][0], RUN[-1] - 0.05, SHORT[-1] - 0.05, TINY[-1] - 0.05]
    assert cf["signal"] == pytest.approx(
        (max(cf_finals) - min(cf_finals)) / (sum(cf_finals) / len(cf_finals))
    )
    cf_noise = (rel_std([x - 0.05 for x in RUN[-30:]]) + rel_std([x - 0.05 for x in SHORT])) / 2
    assert cf["noise"] == pytest.approx(cf_noise)


def test_mde_unpaired_and_paired_at_the_standard_and_the_scored_n(with_series):
    scores, correct = with_series
    record = record_of(signal_noise.signal_noise_table(scores), TASK, "olmes")
    p = record["mean"]
    assert record["n_standard"] == 1000 and record["n_scored"] == 100  # the checkpoints' limit
    assert record["mde_unpaired_standard"] == pytest.approx(Z * math.sqrt(2 * p * (1 - p) / 1000))
    assert record["mde_unpaired_scored"] == pytest.approx(Z * math.sqrt(2 * p * (1 - p) / 100))
    finals = {"big": 0.70, "small": 0.45, "run-32": RUN[-1], "short-2": SHORT[-1], "tiny-1": TINY[-1]}
    ranked = sorted(finals, key=lambda name: -finals[name])
    rates = [discordance(correct[a], correct[b]) for a, b in zip(ranked, ranked[1:], strict=False)]
    d = sum(rates) / len(rates)
    assert record["discordance"] == pytest.approx(d)
    assert record["mde_paired_standard"] == pytest.approx(Z * math.sqrt(d / 1000))
    assert record["mde_paired_scored"] == pytest.approx(Z * math.sqrt(d / 100))
    cf = record_of(signal_noise.signal_noise_table(scores), TASK, "cf")
    assert cf["mde_paired_standard"] is None and cf["mde_unpaired_standard"] is not None


def test_the_mde_has_80_percent_power():
    """Two binomial accuracies MDE apart are told apart by a two-sided z-test at α = 0.05 in 80% of draws."""
    p, n, draws = 0.4, 1000, 20_000
    mde = signal_noise.minimum_detectable_difference(signal_noise.unpaired_variance(p), n)
    rng = np.random.default_rng(0)
    a, b = rng.binomial(n, p, draws) / n, rng.binomial(n, p + mde, draws) / n
    pooled = (a + b) / 2
    found = np.abs(b - a) / np.sqrt(2 * pooled * (1 - pooled) / n) > NormalDist().inv_cdf(0.975)
    assert found.mean() == pytest.approx(0.80, abs=0.015)


def test_mmlu_counts_its_effective_n_over_subjects():
    full = {"anatomy": 135, "virology": 166, "astronomy": 152}
    summaries = [summary("a", "mmlu", 0.3, 0.4, full), summary("b", "mmlu", 0.5, 0.2, full)]
    summaries.append(summary("c", "mmlu", 0.3, 0.3, {"anatomy": 40, "virology": 10}, partial=True))
    scores = score_set(summaries, [results.ModelInfo(name, name) for name in "abc"])
    for name in "abc":
        scores._digests[(name, "mmlu")] = digest(np.ones(300 if name != "c" else 50, bool))
    record = record_of(signal_noise.signal_noise_table(scores), "mmlu", "cf")
    assert record["n_standard"] == pytest.approx(len(full) ** 2 / sum(1 / n for n in full.values()))
    assert record["n_scored"] == pytest.approx(2**2 / (1 / 40 + 1 / 10))
    p = (0.3 + 0.5 + 0.3) / 3
    assert record["mde_unpaired_standard"] == pytest.approx(
        Z * math.sqrt(2 * p * (1 - p) / record["n_standard"])
    )


def test_without_series_noise_and_snr_are_missing_signal_and_mde_are_there():
    summaries = [summary(name, TASK, cf, mcf) for name, (cf, mcf) in FINALS.items()]
    scores = score_set(summaries, [results.ModelInfo(name, name) for name in FINALS])
    for name, accuracy in (("big", 0.7), ("small", 0.45)):
        scores._digests[(name, TASK)] = digest(np.arange(1000) < 1000 * accuracy)
    table = signal_noise.signal_noise_table(scores)
    record = record_of(table, TASK, "olmes")
    assert record["noise"] is None and record["snr"] is None
    assert record["noise_reason"] == "no checkpoint series"
    assert record["signal"] == pytest.approx((0.70 - 0.45) / ((0.70 + 0.45) / 2))
    assert record["mde_paired_standard"] == pytest.approx(Z * math.sqrt((0.70 - 0.45) / 1000))
    row = render.display_rows(table.groups[0][1])[0]
    assert row[4:7] == [render.MISSING, "no checkpoint series", render.MISSING]
    assert [label for label, _ in table.groups] == list(signal_noise.MEASURES.values())


# -- the tables folder and the methods page -----------------------------------------------------------


def test_the_methods_page_shows_the_table(tmp_path):
    """olmes tables writes the table; olmes site shows it on the methods page, its numbers as written."""
    for step, skill in enumerate((0.5, 0.6, 0.55, 0.7)):
        write_model_files(tmp_path, f"ckpt{step}", skill)
    write_model_files(tmp_path, "other", 0.9)
    models = tmp_path / "models.yaml"
    entries = [f"  - {{name: ckpt{k}, series: demo, training_tokens: {k + 1}e9}}" for k in range(4)]
    models.write_text("models:\n" + "\n".join([*entries, "  - {name: other}"]) + "\n")
    scores, tables, site = (tmp_path / name for name in ("scores", "tables", "site"))
    assert signal_noise.SIGNAL_NOISE_KEY in build.TABLE_KEYS
    common = ["--scores", str(scores), "--models", str(models)]
    assert main(["tables", *common, "--out", str(tables), "--resamples", "20"]) == 0
    assert main(["site", *common, "--tables", str(tables), "--out", str(site)]) == 0
    written = json.loads((tables / "task_signal_noise.json").read_text())
    boolq = next(r for r in written["records"] if r["task"] == "boolq" and r["measure"] == "olmes")
    assert boolq["models"] == ["other", "ckpt3"] and boolq["n_scored"] == 40
    assert [(e["series"], e["checkpoints"]) for e in boolq["noise_series"]] == [
        ("demo", [f"ckpt{k}" for k in range(4)])
    ]
    page = (site / "methods.html").read_text()
    assert written["title"] in page and "task_signal_noise.csv" in page and "arXiv 2508.13144" in page
    shown = written["groups"][0]["rows"][0]  # BoolQ under the OLMES score
    assert shown[0] == "BoolQ" and shown[5] == "last 4 of demo"
    for cell in shown[3:]:  # signal, noise, where from, SNR, the counts and MDEs
        assert f"<span>{cell}</span>" in page
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
    alone = tmp_path / "latex"
    alone.mkdir()
    shutil.copy(tables / "task_signal_noise.tex", alone)
    done = compile_latex(alone)
    assert done.returncode == 0, done.stdout[-3000:]
