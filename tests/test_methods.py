"""The scoring-method registry, and the migration of score summaries from olmes.scores/1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from olmes.core.errors import OlmesError
from olmes.core.methods import METHODS, cf_method, get_method, methods_for
from olmes.core.records import SCORES_FORMAT, olmes_score, read_score_summary

REPO = Path(__file__).resolve().parent.parent


def test_methods_read_exactly_their_request_sets() -> None:
    """Without pmi requests a task has no pmi method; MCF alone reads only the mcf set."""
    assert [m.key for m in methods_for({"cf", "mcf"})] == ["cf_none", "cf_token", "cf_char", "mcf"]
    assert [m.key for m in methods_for({"cf", "pmi", "mcf"})] == [*METHODS]
    assert [m.key for m in methods_for({"mcf"})] == ["mcf"]
    assert get_method("cf_pmi").request_sets == ("cf", "pmi")
    assert cf_method("char") is get_method("cf_char") and cf_method("char").normalization == "char"
    assert get_method("mcf").is_mcf and not cf_method("none").is_mcf


def test_each_method_scores_choices_by_its_formula() -> None:
    """2 instances x 2 choices; each method ranks them differently, so a wrong formula shows."""
    table = SimpleNamespace(
        path="x.parquet",
        sum_logprob=np.array([[-4.0, -6.0], [-3.0, -2.0]]),
        num_tokens=np.array([[1, 4], [3, 1]]),
        num_chars=np.array([[2, 12], [6, 5]]),
        uncond_sum=np.array([[-1.0, -5.5], [-3.5, -1.0]]),
    )
    expected = {
        "cf_none": [[-4.0, -6.0], [-3.0, -2.0]],
        "cf_token": [[-4.0, -1.5], [-1.0, -2.0]],
        "cf_char": [[-2.0, -0.5], [-0.5, -0.4]],
        "cf_pmi": [[-3.0, -0.5], [0.5, -1.0]],
        "mcf": [[-4.0, -6.0], [-3.0, -2.0]],
    }
    for key, scores in expected.items():
        assert get_method(key).choice_scores(table).tolist() == scores, key
    with pytest.raises(OlmesError, match=r"^x.parquet: pmi asked but no pmi log-prob file was given"):
        get_method("cf_pmi").choice_scores(SimpleNamespace(**{**vars(table), "uncond_sum": None}))


def test_unknown_method_or_normalization_is_one_clear_error() -> None:
    with pytest.raises(OlmesError, match="unknown scoring method 'cf_bytes'; choose one of: cf_none, "):
        get_method("cf_bytes")
    with pytest.raises(OlmesError, match="unknown normalization 'bytes'"):
        cf_method("bytes")


def _old_summary(tmp_path: Path, olmes) -> Path:
    """A store summary written back in format /1, with the given ``olmes`` field."""
    summary = json.loads(next((REPO / "leaderboard").rglob("scores/piqa.scores.json")).read_text())
    old = {**summary, "schema": "olmes.scores/1"}
    keys = list(old)
    old = (
        {key: old[key] for key in keys[: keys.index("inputs") + 1]}
        | {"olmes": olmes}
        | {key: old[key] for key in keys[keys.index("inputs") + 1 :]}
    )
    path = tmp_path / "m" / "piqa.scores.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(old, indent=2, ensure_ascii=False) + "\n")
    return path


def _migrate(*folders: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "migrate_scores.py"), *map(str, folders)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_migration_drops_only_the_copied_olmes_field(tmp_path) -> None:
    path = _old_summary(tmp_path, None)
    with pytest.raises(OlmesError, match="olmes.scores/1; update it with python scripts/migrate_scores.py"):
        read_score_summary(path)
    summary = json.loads(path.read_text())
    path.write_text(json.dumps({**summary, "olmes": summary["best_of_two"]}, indent=2) + "\n")
    done = _migrate(tmp_path)
    assert done.returncode == 0 and "1 summaries migrated to olmes.scores/2" in done.stdout
    migrated = read_score_summary(path)
    assert "olmes" not in migrated and migrated["schema"] == SCORES_FORMAT
    assert {k: v for k, v in summary.items() if k not in ("olmes", "schema")} == {
        k: v for k, v in migrated.items() if k != "schema"
    }
    assert olmes_score(migrated) == summary["best_of_two"]
    assert "0 summaries migrated, 1 left as they were" in _migrate(tmp_path).stdout.replace(
        " to olmes.scores/2", ""
    )


def test_migration_refuses_an_olmes_field_that_is_not_the_best_of_two(tmp_path) -> None:
    path = _old_summary(tmp_path, {"score": 0.99})
    before = path.read_bytes()
    done = _migrate(tmp_path)
    assert done.returncode == 1 and "its 'olmes' field is not its best_of_two" in done.stderr
    assert path.read_bytes() == before
