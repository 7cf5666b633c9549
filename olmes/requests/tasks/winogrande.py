"""WinoGrande: fill the blank. CF scores one shared continuation under each option's context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from olmes.requests import prompts
from olmes.requests.prompts import STANDARD, Wording
from olmes.requests.tasks.base import BundleArrow, Instance, TaskTemplate


@dataclass(frozen=True, kw_only=True, eq=False)
class FillBlank(TaskTemplate):
    """A sentence with one ``_`` and two options for it."""

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        return Instance(
            native_id=index,
            choices=(row["option1"], row["option2"]),
            gold=int(row["answer"]) - 1,
            fields={"sentence": row["sentence"]},
        )

    def question(self, instance: Instance) -> str:
        return instance.fields["sentence"]

    def cf_queries(self, instance: Instance, wording: Wording = STANDARD) -> list[str]:
        """The sentence up to each option (no answer line to reword)."""
        sentence = instance.fields["sentence"]
        blank = sentence.index("_")
        return [sentence[:blank] + option for option in instance.choices]

    def cf_continuations(self, instance: Instance) -> list[str]:
        sentence = instance.fields["sentence"]
        shared = " " + sentence[sentence.index("_") + 1 :].strip()
        return [shared] * len(instance.choices)

    def mcf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        sentence = instance.fields["sentence"].replace("_", "___")
        choices = prompts.choice_lines(instance.choices, wording)
        return "Fill in the blank: " + sentence + choices + wording.answer_suffix


WINOGRANDE = FillBlank.of(
    "winogrande",
    bundle=BundleArrow("winogrande/winogrande_xl/validation"),
)
