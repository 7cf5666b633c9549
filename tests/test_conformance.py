"""Every request equals the reference dump's request, byte for byte, in the reference's order."""

from __future__ import annotations

import pytest

from olmes.core.tasks import get_task
from olmes.requests.build import build_requests, request_sets
from tests.reference import REFERENCE_VARIANTS, reference_rows

WHOLE_DUMP_TASKS = sorted({task for task, _ in REFERENCE_VARIANTS} - {"arc_easy"})


def _ours(task: str, formulation: str) -> list[dict]:
    """Our rows in the dump's layout: a reference CF dump is our CF file followed by our pmi file."""
    if formulation == "mcf":
        return build_requests(task, "mcf")
    sets = [name for name in request_sets(get_task(task)) if name != "mcf"]
    return [row for name in sets for row in build_requests(task, name)]


def _key(row: dict) -> tuple:
    return (row["unconditional"], row["doc_id"], row["choice"])


def _assert_rows_equal(ours: list[dict], expected: list[dict]) -> None:
    assert len(ours) == len(expected)
    for mine, theirs in zip(ours, expected, strict=True):
        where = f"instance {mine['instance_index']} ({mine['native_id']}) choice {mine['choice']}"
        assert mine["unconditional"] == theirs["unconditional"], where
        assert mine["choice"] == theirs["choice"], where
        assert mine["context"] == theirs["context"], where
        assert mine["continuation"] == theirs["continuation"], where
        assert mine["label"] == theirs["label"], where
        assert str(mine["native_id"]) == str(theirs["native_id"]), where


@pytest.mark.parametrize("formulation", ["cf", "mcf"])
@pytest.mark.parametrize("task", WHOLE_DUMP_TASKS)
def test_requests_equal_reference_dump(task: str, formulation: str) -> None:
    """The dump holds exactly the standard's instance set: compare row by row, order included."""
    ours = _ours(task, formulation)
    expected = reference_rows(task, formulation)
    for row, reference in zip(ours, expected, strict=False):
        row["doc_id"] = row["instance_index"]
        assert _key(row) == _key(reference)
    _assert_rows_equal(ours, expected)


@pytest.mark.parametrize("formulation", ["cf", "mcf"])
def test_arc_easy_sample_equals_reference_instance_by_instance(formulation: str) -> None:
    """ARC-Easy's dump covers the whole test split; our 1000-sample must match it where it picks."""
    ours = _ours("arc_easy", formulation)
    reference = reference_rows("arc_easy", formulation)
    by_native_id = {(r["native_id"], r["unconditional"], r["choice"]): r for r in reference}
    expected = [by_native_id[r["native_id"], r["unconditional"], r["choice"]] for r in ours]
    assert len({r["instance_index"] for r in ours}) == 1000
    _assert_rows_equal(ours, expected)
    assert len({r["doc_id"] for r in expected}) == 1000
