"""Prompt variants (the paper's Table 5): var1's wording, var2's other shots and var3 (both), pinned
on literal rendered requests of the paper's three tasks, and the standard left byte-identical."""

from __future__ import annotations

import pytest

from olmes.cli.main import main
from olmes.core.errors import OlmesError
from olmes.core.tasks import TASKS
from olmes.requests.build import request_sets, requests_of, task_instances


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


def _untagged(row: dict) -> dict:
    return {key: value for key, value in row.items() if key != "variant"}


def test_var1_leaves_completions_without_an_answer_line():
    standard, var1 = _first("hellaswag", "cf", "standard"), _first("hellaswag", "cf", "var1")
    assert var1["variant"] == "var1" and "variant" not in standard
    assert _untagged(var1) == standard
    assert _untagged(_first("winogrande", "cf", "var1")) == _first("winogrande", "cf", "standard")
    assert _first("winogrande", "mcf", "var1")["context"].endswith("\n\nCorrect answer:")


ARC_E_SHOT_3 = "Question: Which type of organism is at the lowest level of the food chain?\n"


def test_var2_arc_easy_cf_replaces_shots_3_to_5():
    row, standard = _first("arc_easy", "cf", "var2"), _first("arc_easy", "cf", "standard")
    shots, standard_shots = row["context"].split("\n\n"), standard["context"].split("\n\n")
    assert shots[:2] == standard_shots[:2] and shots[5] == standard_shots[5]  # kept shots, the query
    assert [shots[k] == standard_shots[k] for k in (2, 3, 4)] == [False] * 3
    assert shots[2:5] == [
        ARC_E_SHOT_3 + "Answer: autotroph",
        "Question: When ice cream is left out of a freezer, the ice cream changes from a ___.\n"
        "Answer: solid to a liquid",
        "Question: A student hypothesizes that the amount of water a plant receives will affect how long it "
        "grows before reaching maturity. To test this hypothesis, the student will need\n"
        "Answer: several identical plant seeds.",
    ]
    assert row["continuation"] == standard["continuation"] == " casting" and row["variant"] == "var2"


def test_var2_openbookqa_mcf_keeps_the_gold_letters():
    row = _first("openbookqa", "mcf", "var2")
    standard = _first("openbookqa", "mcf", "standard")
    answers = [line for line in row["context"].split("\n") if line.startswith("Answer: ")]
    assert answers == [line for line in standard["context"].split("\n") if line.startswith("Answer: ")]
    assert answers == ["Answer: D", "Answer: C", "Answer: D", "Answer: A", "Answer: B"]
    assert "\n\nQuestion: A skunk produces a bad what?\n A. job\n B. plastic\n C. energy\n" in row["context"]


def test_var3_piqa_cf_is_both():
    row = _first("piqa", "cf", "var3")
    assert row["context"] == (
        "Goal: how do you stab something?\n\nCorrect answer: stick a sharp object through it.\n\n"
        "Goal: how do you shake something?\n\nCorrect answer: move it up and down and side to side quickly."
        "\n\nGoal: Mosquito bite?\n\nCorrect answer: Press a hot spoon on the spot. The heat will destroy "
        "the reaction and the itching will stop.\n\nGoal: Reduce weight gain when eating.\n\nCorrect "
        "answer: Eat a meal with a slow pace.\n\nGoal: How to apply cloth to panel.\n\nCorrect answer: Lay "
        "cloth flat on the panel. Using a staple gun, staple the excess fabric to the underside of the "
        "panel. On the corners where there is excess fabric, fold the fabric and staple.\n\nGoal: Brown "
        "sausages.\n\nCorrect answer:"
    )
    assert _first("arc_easy", "mcf", "var3")["context"].count(") ") == 24  # 6 questions x 4 " X) " labels


def test_var2_where_no_other_shots_exist_is_one_clear_error():
    with pytest.raises(OlmesError, match="var2 and var3 have no other shots for hellaswag: reconstruction"):
        _first("hellaswag", "cf", "var2")
    with pytest.raises(OlmesError, match="no other shots for mmlu: its few-shot source is the 5-row dev"):
        _first("mmlu", "mcf", "var3")


def test_unknown_variant_is_one_clear_error(tmp_path, capsys):
    with pytest.raises(OlmesError, match="unknown variant 'var9'; choose one of: standard, var1, var2, var3"):
        requests_of(TASKS["piqa"], "cf", task_instances(TASKS["piqa"], 1, "bundle"), variant="var9")
    out = tmp_path / "piqa.cf.var1.jsonl"
    args = [
        "requests",
        "piqa",
        "--request-set",
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
