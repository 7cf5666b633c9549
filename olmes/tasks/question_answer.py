"""ARC-Challenge, ARC-Easy, CommonsenseQA and OpenBookQA: "Question: ...\\nAnswer:" templates."""

from __future__ import annotations

from typing import Any

from olmes import prompts
from olmes.tasks.base import BundleArrow, BundleDump, Instance, Task

_QUESTION_PREFIX = "Question: "
_ANSWER_SUFFIX = "\nAnswer:"


class QuestionAnswerTask(Task):
    """Rows with ``question``, ``choices: {text, label}`` and ``answerKey``, and an ``id``."""

    question_field = "question"

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        labels = list(row["choices"]["label"])
        return Instance(
            native_id=row["id"],
            choices=tuple(row["choices"]["text"]),
            gold=labels.index(row["answerKey"]),
            fields={"question": row[self.question_field]},
        )

    def bundle_row_from_doc(self, doc: dict[str, Any], raw: dict[str, Any] | None) -> dict[str, Any]:
        query = doc["query"]
        assert query.startswith(_QUESTION_PREFIX) and query.endswith(_ANSWER_SUFFIX), query
        labels = [prompts.letter(i) for i in range(len(doc["choices"]))]
        return {
            "id": doc["id"],
            self.question_field: query[len(_QUESTION_PREFIX) : -len(_ANSWER_SUFFIX)],
            "choices": {"text": list(doc["choices"]), "label": labels},
            "answerKey": labels[doc["gold"]],
        }

    def cf_query(self, instance: Instance) -> str:
        return _QUESTION_PREFIX + instance.fields["question"] + _ANSWER_SUFFIX

    def mcf_query(self, instance: Instance) -> str:
        return (
            _QUESTION_PREFIX
            + instance.fields["question"]
            + prompts.choice_lines(instance.choices)
            + _ANSWER_SUFFIX
        )


class ArcChallenge(QuestionAnswerTask):
    key = "arc_challenge"
    display_name = "ARC-Challenge"
    hf_path = "allenai/ai2_arc"
    hf_name = "ARC-Challenge"
    split = "test"
    recommended_norm = "pmi"
    has_pmi = True
    bundle = BundleDump("arc_challenge", "test_rc_5shot")


class ArcEasy(QuestionAnswerTask):
    key = "arc_easy"
    display_name = "ARC-Easy"
    hf_path = "allenai/ai2_arc"
    hf_name = "ARC-Easy"
    split = "test"
    recommended_norm = "char"
    has_pmi = True
    bundle = BundleDump("arc_easy", "test_rc_5shot")


class CommonsenseQA(QuestionAnswerTask):
    key = "csqa"
    display_name = "CommonsenseQA"
    hf_path = "tau/commonsense_qa"
    hf_name = None
    split = "validation"
    recommended_norm = "pmi"
    has_pmi = True
    bundle = BundleArrow("tau/commonsense_qa/none/validation")


class OpenBookQA(QuestionAnswerTask):
    key = "openbookqa"
    display_name = "OpenBookQA"
    hf_path = "allenai/openbookqa"
    hf_name = "main"
    split = "test"
    recommended_norm = "pmi"
    has_pmi = True
    bundle = BundleDump("openbookqa", "test_rc_5shot")
    question_field = "question_stem"
