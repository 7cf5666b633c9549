"""The generative tasks' metrics against values worked out by hand from AI2's definitions
(olmes/scoring/generative_metrics.py says where each comes from)."""

from __future__ import annotations

import math
import random

import pytest

from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_TASKS
from olmes.scoring.generative_metrics import (
    GSM8K_REGEXES_TO_IGNORE,
    INSTANCE_METRICS,
    best_assignment_total,
    coqa_scores,
    drop_em_f1,
    drop_normalize,
    drop_scores,
    exact_match_hf,
    gsm8k_extract_answer,
    gsm8k_scores,
    squad_exact_match,
    squad_f1,
    squad_normalize,
    squad_scores,
    summarize,
)

# -- SQuAD (official v1.1 script): normalization, exact match, token F1 ----------------------------------


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The Denver Broncos", "denver broncos"),
        ("Super Bowl L,", "super bowl l"),
        ("  an   apple a day ", "apple day"),
        # punctuation goes before articles: "the-cat" is one word "thecat", not an article
        ("  The  Denver-Broncos! ", "denverbroncos"),
        ("theater", "theater"),  # only whole words
        ("Saint-Étienne's", "saintétiennes"),  # only ASCII punctuation; lower case is Unicode
    ],
)
def test_squad_normalization(text, normalized):
    assert squad_normalize(text) == normalized


def test_squad_exact_match_and_f1_by_hand():
    assert squad_exact_match("the Denver Broncos.", "Denver Broncos") == 1.0
    assert squad_exact_match("Denver", "Denver Broncos") == 0.0
    # tokens [denver, broncos, won] vs [denver, broncos]: P 2/3, R 1 -> 4/5
    assert squad_f1("Denver Broncos won", "the Denver Broncos") == pytest.approx(0.8)
    # multisets: "cat cat" vs "cat" shares one token: P 1/2, R 1 -> 2/3
    assert squad_f1("the cat, the cat", "cat") == pytest.approx(2 / 3)
    # v1.1: nothing shared is 0, even two empty answers; their exact match is 1
    assert squad_f1("", "") == 0.0
    assert squad_exact_match("", "the") == 1.0


def test_squad_family_takes_the_best_gold_answer():
    golds = [["Justin Timberlake"], ["Timberlake"]]
    assert squad_scores(" Timberlake", golds) == {"exact_match": 1.0, "f1": 1.0, "recall": 1.0}
    justin = squad_scores("Justin", golds)
    assert justin["exact_match"] == 0.0
    assert justin["f1"] == pytest.approx(2 / 3)  # vs "Justin Timberlake": P 1, R 1/2
    assert justin["recall"] == 0.0
    longer = squad_scores("Justin Timberlake and NSYNC", [["Justin Timberlake"]])
    # recall: the gold is inside the generation; F1: P 2/4, R 1 -> 2/3
    assert longer == {"exact_match": 0.0, "f1": pytest.approx(2 / 3), "recall": 1.0}


def test_squad_family_wants_one_span_per_gold():
    with pytest.raises(OlmesError, match="one span"):
        squad_scores("x", [["a", "b"]])
    with pytest.raises(OlmesError, match="no gold"):
        squad_scores("x", [])


# -- CoQA: the best over the turn's answers by all annotators ----------------------------------------------


def test_coqa_is_the_best_over_all_annotators():
    assert coqa_scores(" White", [["white"], ["white"], ["white"], ["White."]])["f1"] == 1.0
    answers = [["in a barn"], ["a barn"], ["barn near a farm house"]]
    # normalized, "in barn" equals the first answer: 1.0 (lm-evaluation-harness's leave-one-out mean
    # would give 2/3); recall compares raw lower-cased text, where no answer is inside "in the barn"
    assert coqa_scores("in the barn", answers) == {"exact_match": 1.0, "f1": 1.0, "recall": 0.0}
    near = coqa_scores("near the farm", answers)
    # best F1: [near, farm] vs [barn, near, farm, house]: P 1, R 1/2 -> 2/3
    assert near["exact_match"] == 0.0
    assert near["f1"] == pytest.approx(2 / 3)


# -- DROP: number- and set-aware exact match and F1 ------------------------------------------------------


@pytest.mark.parametrize(
    ("span", "normalized"),
    [
        ("1,507", "1507.0"),  # not a number with its comma: the comma goes, then it is one
        ("2", "2.0"),
        ("two", "two"),  # words are not turned into numbers
        ("The well-known Lions.", "well known lions"),  # hyphens split tokens
        ("-3.50", "3.5"),  # the leading hyphen is a token separator
        ("1e3", "1000.0"),  # whatever float() parses is a number
    ],
)
def test_drop_normalization(span, normalized):
    assert drop_normalize(span) == normalized


def test_drop_numbers():
    assert drop_scores("1,507", [["1507"]]) == {"exact_match": 1.0, "f1": 1.0}
    assert drop_scores(" 2", [["2.0"]]) == {"exact_match": 1.0, "f1": 1.0}
    assert drop_scores("two", [["2"]]) == {"exact_match": 0.0, "f1": 0.0}
    # the gold's number must be in the prediction for any F1: "5 yards" vs "5": P 1/2, R 1 -> 0.67
    assert drop_scores("5 yards", [["5"]]) == {"exact_match": 0.0, "f1": 0.67}
    assert drop_scores("6 yards", [["5 yards"]]) == {"exact_match": 0.0, "f1": 0.0}


def test_drop_multi_span_gold_and_partial_f1():
    gold = [["Spain", "Italy", "the Netherlands"]]
    # one predicted span against three gold spans: 1 + 0 + 0 over 3 places, rounded to 2 decimals
    assert drop_scores("Spain", gold) == {"exact_match": 0.0, "f1": 0.33}
    # the generation is one span: its bag {spain, italy, and, netherlands} pairs with one gold span
    # (F1 2 * 1/4 * 1 / (5/4) = 0.4), over 3 places: 0.1333 -> 0.13
    assert drop_scores("Spain, Italy and the Netherlands", gold) == {"exact_match": 0.0, "f1": 0.13}
    # only the span that shares the gold's number scores: (0 + 1) / 2
    assert drop_scores("4,365 families", [["15,557 people", "4,365 families"]]) == {
        "exact_match": 0.0,
        "f1": 0.5,
    }
    # the best over gold answers
    golds = [["Germany", "France"], ["Burma and China"], ["Burma", "China"]]
    assert drop_scores("Burma and China", golds) == {"exact_match": 1.0, "f1": 1.0}


def test_drop_several_predicted_spans_align_one_to_one():
    assert drop_em_f1(["Italy", "Spain"], ["Spain", "Italy"]) == (1.0, 1.0)
    assert drop_em_f1(["Spain", "France"], ["Spain", "Italy", "Netherlands"]) == (0.0, 0.33)
    # bags {x}, {x, y}: the best pairing is x-x and xy-xy (1 + 1), not the crossed one (2/3 + 2/3)
    assert drop_em_f1(["x y", "x"], ["x", "x y"]) == (1.0, 1.0)
    # greedy (0.9 first) would leave 0.0; the assignment takes 0.8 + 0.8
    assert best_assignment_total([[0.9, 0.8], [0.8, 0.0]]) == pytest.approx(1.6)
    assert best_assignment_total([[0.2], [0.7], [0.5]]) == pytest.approx(0.7)
    assert best_assignment_total([[0.2, 0.7, 0.5]]) == pytest.approx(0.7)


def test_drop_dates():
    # a date gold is flattened to "day month year"; token order does not matter for F1, only for EM
    assert drop_scores("September 7, 2009", [["7 September 2009"]]) == {"exact_match": 0.0, "f1": 1.0}
    assert drop_scores("7 September 2009", [["7 September 2009"]]) == {"exact_match": 1.0, "f1": 1.0}
    # year only: {in, 2009.0} vs {2009.0}: P 1/2, R 1 -> 0.67
    assert drop_scores("in 2009", [["2009"]]) == {"exact_match": 0.0, "f1": 0.67}


def test_drop_skips_blank_gold_answers():
    # an empty generation would match the blank gold exactly, but blank golds are skipped
    assert drop_em_f1([""], [""]) == (1.0, 1.0)
    assert drop_scores("", [[""], ["cat"]]) == {"exact_match": 0.0, "f1": 0.0}
    assert drop_scores("", [[" "]]) == {"exact_match": 0.0, "f1": 0.0}


# -- GSM8K: the last number, exact match with the regexes to ignore ---------------------------------------


@pytest.mark.parametrize(
    ("generation", "answer"),
    [
        ("Jason had 20. 20 - 12 = 8. So the answer is 1,234.", "1234"),
        ("She has 5 apples and 3 pears, 8 in all", "8"),  # no "So the answer is": still the last number
        ("The total is $18.", "18"),  # a trailing period is not a decimal point
        ("It costs 2.50 dollars", "2.50"),
        ("The answer is -5.", "5"),  # the sign belongs to the decimal alternative only
        ("-0.5 left", "-0.5"),
        ("1,2,3", "3"),  # "1,2,3" -> "12,3": the comma rule does not overlap
        ("I do not know", "I do not know"),  # no number: the whole generation
    ],
)
def test_gsm8k_extraction(generation, answer):
    assert gsm8k_extract_answer(generation) == answer


def test_gsm8k_exact_match():
    assert gsm8k_scores(" So the answer is 1,234.", [["1234"]]) == {"exact_match": 1.0}
    assert gsm8k_scores("So the answer is 1234.", [["1,234"]]) == {"exact_match": 1.0}
    assert gsm8k_scores("So the answer is 18.", [["17"]]) == {"exact_match": 0.0}
    assert gsm8k_scores("So the answer is 2.50", [["2.5"]]) == {"exact_match": 0.0}  # strings, not values
    # the sign is lost on both sides, as in AI2's label: "-5" and "5" both read "5"
    assert gsm8k_scores("The answer is -5.", [["-5"]]) == {"exact_match": 1.0}
    assert gsm8k_scores("The answer is 5.", [["-5"]]) == {"exact_match": 1.0}
    assert gsm8k_scores("I do not know", [["18"]]) == {"exact_match": 0.0}
    full = (
        "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\n"
        "She makes 9 * 2 = $<<9*2=18>>18 every day at the farmer’s market.\n#### 18"
    )
    assert gsm8k_scores("She makes 9 * 2 = $18. So the answer is 18.", [[full]]) == {"exact_match": 1.0}


def test_hf_exact_match_regexes():
    regexes = GSM8K_REGEXES_TO_IGNORE
    assert exact_match_hf("$18.", "18", regexes) == 1.0  # "$" and the final "." go
    assert exact_match_hf("1,000", "1000", regexes) == 1.0
    assert exact_match_hf("work #### 7", "#### 7", regexes) == 1.0  # all up to the last "#### "
    assert exact_match_hf("18.0", "18", regexes) == 0.0  # only a final period goes
    assert exact_match_hf("Ab", "aB") == 0.0
    assert exact_match_hf("Ab", "aB", ignore_case=True) == 1.0
    assert exact_match_hf("a.b", "ab", ignore_punctuation=True) == 1.0


# -- the registry and the summary ----------------------------------------------------------------------


def test_registry_covers_every_generative_task():
    assert set(INSTANCE_METRICS) == {"squad", "coqa", "drop", "gsm8k"}
    for task in GENERATIVE_TASKS.values():
        metric = INSTANCE_METRICS[task.metric]
        assert metric.primary == task.primary_metric
    for key, metric in INSTANCE_METRICS.items():
        assert metric.key == key
        assert metric.primary in metric.metric_names
        assert metric.describe.endswith(".")
        assert tuple(metric.score("18", [["18"]])) == metric.metric_names
    assert INSTANCE_METRICS["gsm8k"].primary == "exact_match"
    assert {INSTANCE_METRICS[k].primary for k in ("squad", "coqa", "drop")} == {"f1"}


def test_summarize():
    # 0/1 values: stderr = sqrt(p (1 - p) / (n - 1)) = sqrt(0.1875 / 3) = 0.25
    assert summarize([1, 0, 1, 1]) == {"mean": 0.75, "stderr": pytest.approx(0.25), "n": 4}
    # deviations -0.3, -0.1, 0.4: s^2 = 0.26 / 2 = 0.13, stderr = sqrt(0.13 / 3)
    summary = summarize([0.2, 0.4, 0.9])
    assert summary["mean"] == pytest.approx(0.5)
    assert summary["stderr"] == pytest.approx(math.sqrt(0.13 / 3))
    assert summary["n"] == 3
    assert summarize([0.5]) == {"mean": 0.5, "stderr": None, "n": 1}
    with pytest.raises(OlmesError):
        summarize([])


# -- property: a gold against itself scores 1, against disjoint text 0 ------------------------------------

_WORDS = ["river", "Paris", "1,200", "blue", "42", "October", "king's", "well-known", "3.5", "zebra"]
_OTHER = ["mountain", "Rome", "7", "green", "sun", "x-ray", "queen"]


def test_f1_of_a_gold_with_itself_is_one_and_of_disjoint_text_zero():
    rng = random.Random(0)
    for _ in range(200):
        gold = " ".join(rng.sample(_WORDS, rng.randint(1, 4)))
        other = " ".join(rng.sample(_OTHER, rng.randint(1, 4)))
        assert squad_f1(gold, gold) == 1.0
        assert squad_f1(other, gold) == 0.0
        assert drop_em_f1([gold], [gold]) == (1.0, 1.0)
        assert drop_em_f1([other], [gold]) == (0.0, 0.0)
        assert squad_scores(gold, [[other], [gold]])["f1"] == 1.0
        assert drop_scores(other, [[gold]])["f1"] == 0.0


def test_gsm8k_gold_is_ai2s_label():
    """AI2's exported label of every GSM8K instance is the extraction applied to the document's answer
    (commas and the minus sign dropped), which is what gsm8k_scores compares with."""
    from olmes.core.bundle import read_dump

    rows = list(read_dump("gsm8k", "gold_bpb_5shot"))
    assert len(rows) == 1319
    assert all(gsm8k_extract_answer(row["doc"]["short_answer"]) == row["label"] for row in rows)
    differs = [row for row in rows if row["doc"]["short_answer"] != row["label"]]
    assert len(differs) == 16  # "2,125" -> "2125" (14), "-10" -> "10" (2)
    negative = next(row for row in differs if row["doc"]["short_answer"].startswith("-"))
    gold = [[negative["doc"]["short_answer"]]]
    assert gsm8k_scores(f"So the answer is {negative['label']}.", gold)["exact_match"] == 1.0
