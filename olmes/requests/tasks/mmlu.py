"""MMLU: 57 subjects, each with an instruction line and its own 5 dev-set shots."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from olmes.requests import prompts
from olmes.requests.prompts import STANDARD, Wording
from olmes.requests.tasks.base import BundleArrow, Instance, TaskTemplate


@dataclass(frozen=True, kw_only=True, eq=False)
class SubjectQuestions(TaskTemplate):
    """Questions grouped in subjects, each subject with an instruction line and its own dev shots."""

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        """``index`` is the row's position within its subject's split: MMLU rows have no id."""
        return Instance(
            native_id=index,
            choices=tuple(row["choices"]),
            gold=int(row["answer"]),
            fields={"question": row["question"]},
            subject=row["subject"],
        )

    def instruction(self, instance: Instance) -> str:
        subject = instance.subject.replace("_", " ")
        return f"The following are multiple choice questions (with answers) about {subject}.\n\n"

    def _question(self, instance: Instance) -> str:
        return "Question: " + instance.fields["question"].strip()

    def cf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return self._question(instance) + wording.answer_suffix

    def mcf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return (
            self._question(instance) + prompts.choice_lines(instance.choices, wording) + wording.answer_suffix
        )


MMLU = SubjectQuestions.of(
    "mmlu",
    bundle=BundleArrow("hails/mmlu_no_train/{subject}/{split}"),
)
