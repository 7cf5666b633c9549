"""The synthetic store maker of the scale benchmark (benchmarks/synthetic_store.py): its models are
published through the real checks, score differently from their source and from each other, and their
predictions and summaries follow from their own log-probs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd

from olmes import store as store_api
from olmes.core.tasks import TASKS as ALL_TASKS
from olmes.scoring.score import score_task
from olmes.store.blobs import model_logprob_file

REPO = Path(__file__).resolve().parent.parent
TASKS = ["openbookqa", "arc_easy"]


def _maker():
    spec = importlib.util.spec_from_file_location(
        "synthetic_store", REPO / "benchmarks" / "synthetic_store.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rotate_choices_moves_each_chosen_instance_one_choice_on():
    maker = _maker()
    frame = pd.DataFrame(
        {"instance_index": [0, 0, 0, 1, 1, 2, 2, 2, 2], "sum_logprob": [1.0, 2, 3, 4, 5, 6, 7, 8, 9]}
    )
    rotated = maker.rotate_choices(frame, np.array([0, 2]))
    assert rotated["sum_logprob"].tolist() == [3.0, 1, 2, 4, 5, 9, 6, 7, 8]
    assert frame["sum_logprob"].tolist() == [1.0, 2, 3, 4, 5, 6, 7, 8, 9]  # the input is left alone


def test_synthetic_models_pass_publish_and_score_from_their_own_logprobs(tmp_path):
    out = tmp_path / "store"
    _maker().make_store(REPO / "leaderboard", out, 3, jobs=1, tasks=TASKS)
    names = store_api.model_names(out)
    assert names == ["Synth-0001", "Synth-0002", "Synth-0003"]
    scores = {}
    for name in names:
        record = store_api.read_model_record(out, name)
        assert list(record["tasks"]) == [t for t in ALL_TASKS if t in TASKS]
        assert "GGUF" in record["display_name"]  # named with what its weights are, as publish demands
        for task in TASKS:
            summary = json.loads((out / "models" / name / "scores" / f"{task}.scores.json").read_text())
            files = {s: model_logprob_file(out, name, task, s) for s in summary["inputs"]}
            predictions, again = score_task(
                name, cf_path=files["cf"], pmi_path=files.get("pmi"), mcf_path=files["mcf"], require_pmi=True
            )
            assert again["methods"] == summary["methods"]
            stored = pd.read_parquet(out / "models" / name / "scores" / f"{task}.predictions.parquet")
            assert stored.equals(predictions)
            scores[(name, task)] = summary["best_of_two"]["score"]
    for task in TASKS:
        found = [scores[(name, task)] for name in names]
        real = [
            json.loads((REPO / "leaderboard/models" / m / "scores" / f"{task}.scores.json").read_text())[
                "best_of_two"
            ]["score"]
            for m in store_api.model_names(REPO / "leaderboard")
        ]
        assert len(set(found)) == len(found) and not set(found) & set(real)
