"""WinoGrande: fill the blank. CF scores one shared continuation under each option's context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from olmes.requests import prompts
from olmes.requests.prompts import STANDARD, Wording
from olmes.requests.tasks.base import BundleArrow, Instance, Task


@dataclass(frozen=True, kw_only=True, eq=False)
class FillBlank(Task):
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


WINOGRANDE = FillBlank(
    key="winogrande",
    display_name="WinoGrande",
    short_name="WinoG",
    oe_eval_name="winogrande",
    hf_path="allenai/winogrande",
    hf_name="winogrande_xl",
    split="validation",
    split_size=1267,
    recommended_norm="none",
    why_norm=(
        "Both options score the very same continuation (the rest of the sentence) after two "
        "different contexts, so dividing by its length changes nothing and there is no answer "
        "whose own frequency needs correcting. OLMES uses the plain sum of log-probabilities."
    ),
    has_pmi=False,
    bundle=BundleArrow("winogrande/winogrande_xl/validation"),
)
