"""ARC-Challenge, ARC-Easy, CommonsenseQA and OpenBookQA: one "Question: ...\\nAnswer:" template."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from olmes.core.errors import OlmesError
from olmes.core.methods import letter
from olmes.requests import prompts
from olmes.requests.prompts import STANDARD, Wording
from olmes.requests.tasks.base import BundleArrow, BundleDump, Instance, TaskTemplate

_QUESTION_PREFIX = "Question: "


@dataclass(frozen=True, kw_only=True, eq=False)
class QuestionAnswer(TaskTemplate):
    """Rows with a question field, ``choices: {text, label}``, ``answerKey`` and an ``id``."""

    question_field: str = "question"

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
        if not (query.startswith(_QUESTION_PREFIX) and query.endswith(prompts.ANSWER_SUFFIX)):
            raise OlmesError(f"{self.key}: unexpected query in the reference dump: {query[:80]!r}")
        labels = [letter(i) for i in range(len(doc["choices"]))]
        return {
            "id": doc["id"],
            self.question_field: query[len(_QUESTION_PREFIX) : -len(prompts.ANSWER_SUFFIX)],
            "choices": {"text": list(doc["choices"]), "label": labels},
            "answerKey": labels[doc["gold"]],
        }

    def cf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return _QUESTION_PREFIX + instance.fields["question"] + wording.answer_suffix

    def mcf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return (
            _QUESTION_PREFIX
            + instance.fields["question"]
            + prompts.choice_lines(instance.choices, wording)
            + wording.answer_suffix
        )


ARC_CHALLENGE = QuestionAnswer.of(
    "arc_challenge",
    bundle=BundleDump("arc_challenge", "test_rc_5shot"),
)

ARC_EASY = QuestionAnswer.of(
    "arc_easy",
    bundle=BundleDump("arc_easy", "test_rc_5shot"),
)

CSQA = QuestionAnswer.of(
    "csqa",
    bundle=BundleArrow("tau/commonsense_qa/none/validation"),
)

OPENBOOKQA = QuestionAnswer.of(
    "openbookqa",
    bundle=BundleDump("openbookqa", "test_rc_5shot"),
    question_field="question_stem",
)
