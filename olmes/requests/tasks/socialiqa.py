"""Social IQa: a situation, a question about it, three answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from olmes.requests import prompts
from olmes.requests.prompts import STANDARD, Wording
from olmes.requests.tasks.base import BundleArrow, Instance, TaskTemplate


@dataclass(frozen=True, kw_only=True, eq=False)
class SituationQuestion(TaskTemplate):
    """A situation and a question about it; the dataset's labels "1".."3" become positions 0..2."""

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        return Instance(
            native_id=index,
            choices=(row["answerA"], row["answerB"], row["answerC"]),
            gold=int(row["label"]) - 1,
            fields={"context": row["context"], "question": row["question"]},
        )

    def _stem(self, instance: Instance) -> str:
        return "Question: " + instance.fields["context"] + " " + instance.fields["question"]

    def cf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return self._stem(instance) + wording.answer_suffix

    def mcf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return self._stem(instance) + prompts.choice_lines(instance.choices, wording) + wording.answer_suffix


SOCIALIQA = SituationQuestion.of(
    "socialiqa",
    bundle=BundleArrow("social_i_qa/none/validation"),
)
