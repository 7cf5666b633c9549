"""Prompt variants (the paper's Table 5): var1's wording, pinned on literal rendered requests of the
paper's three tasks, and the standard left byte-identical."""

from __future__ import annotations

import pytest

from olmes.cli import main
from olmes.errors import OlmesError
from olmes.requests import request_sets, requests_of, task_instances
from olmes.tasks import TASKS


def _first(task: str, request_set: str, variant: str) -> dict:
    instances = task_instances(TASKS[task], 1, "bundle")
    return requests_of(TASKS[task], request_set, instances, "bundle", True, variant)[0]


@pytest.mark.parametrize("task", list(TASKS))
def test_the_standard_is_unchanged_by_the_variant_code(task):
    instances = task_instances(TASKS[task], 2, "bundle")
    for request_set in request_sets(TASKS[task], True):
        default = requests_of(TASKS[task], request_set, instances, "bundle", True)
        assert requests_of(TASKS[task], request_set, instances, "bundle", True, "standard") == default


def test_var1_arc_easy_mcf():
    row = _first("arc_easy", "mcf", "var1")
    assert row["context"].startswith(
        "Question: Lichens are symbiotic organisms made of green algae and fungi. What do the green algae "
        "supply to the fungi in this symbiotic relationship?\n A) carbon "
    )
    assert row["context"].endswith(
        "What is the name of this manufacturing process?\n A) casting\n B) milling\n C) finishing\n"
        " D) refining\n\nCorrect answer:"
    )
    assert row["continuation"] == " A"
    assert "\nAnswer:" not in row["context"] and " A. " not in row["context"]


def test_var1_openbookqa_cf_and_pmi():
    row = _first("openbookqa", "cf", "var1")
    assert row["context"].startswith(
        "Question: When standing miles away from Mount Rushmore\n\nCorrect answer: the mountains seem "
        "smaller than in photographs\n\nQuestion: When food is reduced in the st"
    )
    assert row["context"].endswith("they decide the best way to save money is to\n\nCorrect answer:")
    assert row["continuation"] == " make more phone calls"  # continuations never change
    pmi = _first("openbookqa", "pmi", "var1")
    assert (pmi["context"], pmi["continuation"]) == ("Correct answer:", " make more phone calls")


def test_var1_piqa_mcf_shot_and_query():
    row = _first("piqa", "mcf", "var1")
    assert row["context"].startswith(
        "Goal: how do you stab something?\n A) stick a sharp object through it.\n"
        " B) pin it with a sharp object.\n\nCorrect answer: A\n\nGoal: how do you shake something?\n A) "
    )
    assert row["context"].endswith("cook until all sides are blackened.\n\nCorrect answer:")


def test_var1_leaves_completions_without_an_answer_line():
    standard, var1 = _first("hellaswag", "cf", "standard"), _first("hellaswag", "cf", "var1")
    assert standard == var1
    assert _first("winogrande", "cf", "var1") == _first("winogrande", "cf", "standard")
    assert _first("winogrande", "mcf", "var1")["context"].endswith("\n\nCorrect answer:")


def test_unknown_variant_is_one_clear_error(tmp_path, capsys):
    with pytest.raises(OlmesError, match="unknown variant 'var9'; choose one of: standard, var1"):
        requests_of(TASKS["piqa"], "cf", task_instances(TASKS["piqa"], 1, "bundle"), variant="var9")
    out = tmp_path / "piqa.cf.var1.jsonl"
    args = [
        "requests",
        "piqa",
        "--formulation",
        "cf",
        "--variant",
        "var1",
        "--limit",
        "2",
        "--output",
        str(out),
    ]
    assert main(args) == 0
    assert '\\n\\nCorrect answer:"' in out.read_text()  # JSON-escaped: a blank line, then the answer line
