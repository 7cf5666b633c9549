"""The tables' per-predictions digest (olmes/tables/digest.py): the same facts as the predictions file,
read from the cache when its inputs are unchanged, computed again when the cache file is damaged."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from olmes.scoring.flags import chance_accuracy, task_flags
from olmes.tables import digest as digests
from olmes.tables.results import load_scores

STORE = Path(__file__).resolve().parent.parent / "leaderboard"
SUMMARY = STORE / "models" / "SmolLM2-135M" / "scores" / "mmlu.scores.json"


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OLMES_CACHE_DIR", str(tmp_path))
    return tmp_path / "tables"


def _reader(calls: list):
    summary = json.loads(SUMMARY.read_text())
    path = SUMMARY.parent / summary["predictions"]["path"]

    def read():
        calls.append(path)
        return digests.read_columns(path)

    return summary, path, read


def test_a_digest_holds_the_facts_of_its_predictions(cache):
    calls = []
    summary, path, read = _reader(calls)
    found = digests.digest_of(summary, SUMMARY, read)
    predictions = pd.read_parquet(path)
    decisive = predictions[predictions["method"] == summary["best_of_two"]["method"]]
    assert found.chance == chance_accuracy(predictions)
    assert found.flags == task_flags(summary, predictions)
    assert found.instance_index.tolist() == decisive["instance_index"].tolist()
    assert json.loads(found.native_ids) == decisive["native_id"].astype(str).tolist()
    assert found.subject().tolist() == decisive["subject"].tolist()
    assert found.correct.tolist() == decisive["correct"].tolist()
    assert len(calls) == 1 and len(list(cache.glob("*.npz"))) == 1


def test_the_cache_is_used_and_a_damaged_file_is_computed_again(cache):
    calls = []
    summary, _, read = _reader(calls)
    first = digests.digest_of(summary, SUMMARY, read)
    again = digests.digest_of(summary, SUMMARY, read)
    assert len(calls) == 1  # the second came from the cache
    assert again.native_ids == first.native_ids and np.array_equal(again.correct, first.correct)
    (cached,) = cache.glob("*.npz")
    data = bytearray(cached.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte inside a member: its CRC no longer matches
    cached.write_bytes(bytes(data))
    third = digests.digest_of(summary, SUMMARY, read)
    assert len(calls) == 2 and np.array_equal(third.correct, first.correct)
    assert digests.digest_of(summary, SUMMARY, read).chance == first.chance and len(calls) == 2


def test_the_key_changes_with_the_summary(cache, tmp_path):
    calls = []
    summary, _, read = _reader(calls)
    digests.digest_of(summary, SUMMARY, read)
    edited = tmp_path / "mmlu.scores.json"
    edited.write_text(SUMMARY.read_text().replace('"n_instances"', '"n_instances" ', 1))
    digests.digest_of(summary, edited, read)
    assert len(calls) == 2 and len(list(cache.glob("*.npz"))) == 2


def test_the_store_tables_read_each_predictions_file_once_per_content(cache):
    scores = load_scores(sorted(STORE.glob("models/*/scores/*.scores.json")), None)
    for model, task in scores.summaries:
        scores.digest(model, task)
    assert len(list(cache.glob("*.npz"))) == len(scores.summaries) == 20
