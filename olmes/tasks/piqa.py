"""PIQA: a goal and two solutions."""

from __future__ import annotations

from typing import Any

from olmes import prompts
from olmes.tasks.base import BundleArrow, Instance, Task


class Piqa(Task):
    key = "piqa"
    display_name = "PIQA"
    hf_path = "ybisk/piqa"
    hf_name = None
    split = "validation"
    recommended_norm = "char"
    has_pmi = True
    bundle = BundleArrow("piqa/plain_text/validation")

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        return Instance(
            native_id=index,
            choices=(row["sol1"], row["sol2"]),
            gold=int(row["label"]),
            fields={"goal": row["goal"]},
        )

    def cf_query(self, instance: Instance) -> str:
        return "Goal: " + instance.fields["goal"] + "\nAnswer:"

    def mcf_query(self, instance: Instance) -> str:
        return "Goal: " + instance.fields["goal"] + prompts.choice_lines(instance.choices) + "\nAnswer:"
