"""HellaSwag: sentence completion with WikiHow/ActivityNet preprocessing."""

from __future__ import annotations

import re
from typing import Any

from olmes import prompts
from olmes.tasks.base import BundleArrow, Instance, Task


def preprocess(text: str) -> str:
    """The standard HellaSwag clean-up: WikiHow headers become sentence breaks, brackets go away."""
    text = text.strip()
    text = re.sub(r"\.? \[title\]", ". ", text)
    text = re.sub(r"\[.*?\]", "", text)
    return text.replace("  ", " ")


class HellaSwag(Task):
    key = "hellaswag"
    display_name = "HellaSwag"
    hf_path = "Rowan/hellaswag"
    hf_name = None
    split = "validation"
    recommended_norm = "char"
    has_pmi = True
    bundle = BundleArrow("hellaswag/none/validation")

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        context = row["activity_label"] + ": " + row["ctx_a"] + " " + row["ctx_b"].capitalize()
        return Instance(
            native_id=row["ind"],
            choices=tuple(preprocess(ending) for ending in row["endings"]),
            gold=int(row["label"]),
            fields={"context": preprocess(context), "ctx_b_empty": row["ctx_b"] == ""},
        )

    def cf_query(self, instance: Instance) -> str:
        return instance.fields["context"]

    def mcf_query(self, instance: Instance) -> str:
        separator = " " if instance.fields["ctx_b_empty"] else ""
        endings = [choice.strip() for choice in instance.choices]
        return (
            instance.fields["context"]
            + separator
            + "\nChoose the best continuation:"
            + prompts.choice_lines(endings)
            + "\nAnswer:"
        )
