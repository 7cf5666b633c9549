"""Prompt variant var2 (the paper's Table 5: other shots): the shots in
``olmes/requests/tasks/fewshot_var2.json``
keep the curation's principles. Chosen by ``scripts/choose_other_shots.py`` from AI2's train dumps
(no wheel or network is needed here; the evaluated instances come from the cached offline bundle).

Length tolerance: a replacement's rendered CF shot and MCF shot (standard wording) may each differ
from the replaced shot's by at most 10% of the replaced shot's length in characters (the script
enforces the same bound; the shots it chose are within 4 characters).
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from functools import cache
from importlib import resources

import pytest

from olmes.requests.data import load_instances, raw_rows
from olmes.requests.tasks import TEMPLATES
from olmes.requests.tasks.base import curated_fewshot

LENGTH_TOLERANCE = 0.10
KEPT, REPLACED = (0, 1), (2, 3, 4)
REQUIRED = ("arc_easy", "openbookqa", "piqa")
TEXT = resources.files("olmes.requests.tasks").joinpath("fewshot_var2.json").read_text(encoding="utf-8")
VAR2 = json.loads(TEXT)
INCLUDED = sorted(key for key in VAR2 if not key.startswith("_"))


def _normalized(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _question(task, instance) -> str:
    return _normalized(task.question(instance))


def _key(task, instance) -> tuple[str, tuple[str, ...]]:
    """Question and choices (as a multiset: a reordered copy is the same instance)."""
    return _question(task, instance), tuple(sorted(_normalized(choice) for choice in instance.choices))


@cache
def _evaluated(key: str) -> tuple[frozenset, frozenset]:
    """Question+choices of the evaluated instances, and the questions of the whole evaluated split
    (the sampled tasks evaluate 1000 of its rows; the script avoids all of them)."""
    task = TEMPLATES[key]
    evaluated = load_instances(task, "bundle", None)
    split = [task.standardize(row, index) for index, row in enumerate(raw_rows(task, "bundle", task.split))]
    return frozenset(_key(task, i) for i in evaluated), frozenset(_question(task, i) for i in split)


def _shots(key: str):
    task = TEMPLATES[key]
    return [task.standardize(row, index) for index, row in enumerate(VAR2[key])]


def test_the_file_layout_is_canonical():
    assert json.dumps(VAR2, indent=1, ensure_ascii=False) + "\n" == TEXT
    assert list(VAR2)[:3] == ["_about", "_chosen", "_excluded"]
    assert list(VAR2)[3:] == INCLUDED


def test_every_task_is_included_or_excluded_with_a_reason():
    assert set(REQUIRED) <= set(INCLUDED)
    excluded = VAR2["_excluded"]
    assert set(INCLUDED).isdisjoint(excluded)
    assert set(INCLUDED) | set(excluded) == set(TEMPLATES)
    assert all(reason.strip() for reason in excluded.values())
    assert set(VAR2["_chosen"]) == set(INCLUDED)


@pytest.mark.parametrize("key", INCLUDED)
def test_five_rows_that_standardize_with_the_curated_gold_labels(key):
    task, rows = TEMPLATES[key], VAR2[key]
    assert len(rows) == task.num_shots == 5
    shots, curated = _shots(key), task.curated_shots()
    assert Counter(shot.gold for shot in shots) == Counter(shot.gold for shot in curated)
    assert [shot.gold for shot in shots] == [shot.gold for shot in curated]  # position by position
    assert [len(shot.choices) for shot in shots] == [len(shot.choices) for shot in curated]
    for shot in shots:
        assert task.cf_shot(shot) and task.mcf_shot(shot)


@pytest.mark.parametrize("key", INCLUDED)
def test_three_positions_replaced_two_kept_verbatim(key):
    rows, curated = VAR2[key], curated_fewshot()[key][:5]
    differ = [position for position in range(5) if rows[position] != curated[position]]
    assert differ == list(REPLACED)
    assert all(rows[position] == curated[position] for position in KEPT)
    chosen = VAR2["_chosen"][key]
    assert chosen["replaced_positions"] == list(REPLACED) and chosen["kept_positions"] == list(KEPT)
    assert [record["position"] for record in chosen["replacements"]] == list(REPLACED)
    assert len({record["train_doc_id"] for record in chosen["replacements"]}) == len(REPLACED)


@pytest.mark.parametrize("key", INCLUDED)
def test_no_shot_is_an_evaluated_instance_or_another_shot(key):
    task = TEMPLATES[key]
    by_key, by_question = _evaluated(key)
    shots = _shots(key)
    for shot in shots:
        assert _key(task, shot) not in by_key
    for position in REPLACED:  # the rule is stricter: not even the question of a row of the split
        assert _question(task, shots[position]) not in by_question
    curated_questions = {
        _question(task, task.standardize(row, index)) for index, row in enumerate(curated_fewshot()[key])
    }
    for position in REPLACED:
        assert _question(task, shots[position]) not in curated_questions
    assert len({_question(task, shot) for shot in shots}) == 5


@pytest.mark.parametrize("key", INCLUDED)
def test_replacements_are_about_as_long_as_the_shots_they_replace(key):
    task = TEMPLATES[key]
    shots, curated = _shots(key), task.curated_shots()
    records = {record["position"]: record for record in VAR2["_chosen"][key]["replacements"]}
    for position in REPLACED:
        for name, render in (("cf", task.cf_shot), ("mcf", task.mcf_shot)):
            new, old = len(render(shots[position])), len(render(curated[position]))
            assert abs(new - old) <= LENGTH_TOLERANCE * old
            record = records[position]
            assert (record[f"{name}_length"], record[f"replaced_{name}_length"]) == (new, old)


@pytest.mark.parametrize(
    ("key", "rendered"),
    [
        (
            "arc_easy",
            "Question: Which type of organism is at the lowest level of the food chain?\nAnswer: autotroph",
        ),
        ("openbookqa", "Question: A skunk produces a bad what?\nAnswer: nose experience"),
        (
            "piqa",
            "Goal: Mosquito bite?\nAnswer: Press a hot spoon on the spot. The heat will destroy the reaction "
            "and the itching will stop.",
        ),
    ],
)
def test_pinned_cf_rendering_of_the_shot_3_replacement(key, rendered):
    task = TEMPLATES[key]
    assert task.cf_shot(_shots(key)[2]) == rendered
    assert task.cf_shot(task.curated_shots()[2]) != rendered
