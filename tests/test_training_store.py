"""The committed store training/ (issue 40): a real checkpoint series, the tiny LM trained on this
machine by scripts/train_tiny_series.py (docs/training-series.md), evaluated on the 10 tasks at a
limit and published with olmes publish --partial. It passes olmes verify as it stands (every accuracy
comes out again from its log-probs), and its models are one series whose checkpoints see more
training tokens step by step, each labelled for what it is (not a published model)."""

from __future__ import annotations

import re
from pathlib import Path

from olmes import store
from olmes.core.tasks import TASKS
from olmes.store.verify import verify_store
from tests.helpers import olmes

ROOT = Path(__file__).resolve().parent.parent / "training"
SERIES = "tiny-lm"
CHECKPOINT = re.compile(r"^step(\d+)-tokens([0-9.]+)M$")


def test_the_training_store_verifies() -> None:
    found = verify_store(ROOT)
    assert [problem.line() for problem in found.problems] == [] and not found.notes
    models = store.model_names(ROOT)
    assert len(models) >= 6 and found.results == len(models) * len(TASKS)  # every checkpoint on every task
    code, err = olmes("verify", str(ROOT))
    assert code == 0, err


def test_the_training_store_is_one_series_with_increasing_tokens() -> None:
    infos = sorted(store.model_infos(ROOT), key=lambda info: info.training_tokens)
    assert {info.series for info in infos} == {SERIES}
    tokens = [info.training_tokens for info in infos]
    assert all(earlier < later for earlier, later in zip(tokens, tokens[1:], strict=False)), tokens
    steps = []
    for info in infos:
        match = CHECKPOINT.match(info.checkpoint)
        assert match, info.checkpoint
        steps.append(int(match[1]))
        named = float(match[2]) * 1e6  # the name's tokens, in millions to 3 digits
        assert abs(named - info.training_tokens) <= 0.01 * info.training_tokens
        assert info.name == f"{SERIES}-{info.checkpoint}"
        assert "not a published model" in info.display_name and info.checkpoint in info.display_name
        assert info.identity is not None and info.identity["tuning"] == "unknown"  # no release of anyone
    assert steps == sorted(steps) and len(set(steps)) == len(steps)


def test_the_training_store_is_partial_and_small() -> None:
    """Every result is a partial run (an instance limit), and the store stays small: it is committed."""
    for name in store.model_names(ROOT):
        record = store.read_model_record(ROOT, name)
        assert set(record["tasks"]) == set(TASKS)
        assert all(task["partial"] and task["limit"] for task in record["tasks"].values()), name
    size = sum(path.stat().st_size for path in ROOT.rglob("*") if path.is_file())
    assert size < 30_000_000, size
