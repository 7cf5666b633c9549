"""WinoGrande: fill the blank. CF scores one shared continuation under each option's context."""

from __future__ import annotations

from typing import Any

from olmes import prompts
from olmes.tasks.base import BundleArrow, Instance, Task


class WinoGrande(Task):
    key = "winogrande"
    display_name = "WinoGrande"
    hf_path = "allenai/winogrande"
    hf_name = "winogrande_xl"
    split = "validation"
    recommended_norm = "none"
    has_pmi = False
    bundle = BundleArrow("winogrande/winogrande_xl/validation")

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        return Instance(
            native_id=index,
            choices=(row["option1"], row["option2"]),
            gold=int(row["answer"]) - 1,
            fields={"sentence": row["sentence"]},
        )

    def cf_queries(self, instance: Instance) -> list[str]:
        sentence = instance.fields["sentence"]
        blank = sentence.index("_")
        return [sentence[:blank] + option for option in instance.choices]

    def cf_continuations(self, instance: Instance) -> list[str]:
        sentence = instance.fields["sentence"]
        shared = " " + sentence[sentence.index("_") + 1 :].strip()
        return [shared] * len(instance.choices)

    def mcf_query(self, instance: Instance) -> str:
        sentence = instance.fields["sentence"].replace("_", "___")
        return "Fill in the blank: " + sentence + prompts.choice_lines(instance.choices) + "\nAnswer:"
