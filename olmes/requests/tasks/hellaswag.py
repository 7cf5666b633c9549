"""HellaSwag: sentence completion with WikiHow/ActivityNet preprocessing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from olmes.requests import prompts
from olmes.requests.prompts import STANDARD, Wording
from olmes.requests.tasks.base import BundleArrow, Instance, TaskTemplate


def preprocess(text: str) -> str:
    """The standard HellaSwag clean-up: WikiHow headers become sentence breaks, brackets go away."""
    text = text.strip()
    text = re.sub(r"\.? \[title\]", ". ", text)
    text = re.sub(r"\[.*?\]", "", text)
    return text.replace("  ", " ")


@dataclass(frozen=True, kw_only=True, eq=False)
class Completion(TaskTemplate):
    """An activity context to be continued by one of four endings."""

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        context = row["activity_label"] + ": " + row["ctx_a"] + " " + row["ctx_b"].capitalize()
        return Instance(
            native_id=row["ind"],
            choices=tuple(preprocess(ending) for ending in row["endings"]),
            gold=int(row["label"]),
            fields={"context": preprocess(context), "ctx_b_empty": row["ctx_b"] == ""},
        )

    def cf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return instance.fields["context"]  # a completion: no answer line to reword

    def mcf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        separator = " " if instance.fields["ctx_b_empty"] else ""
        endings = [choice.strip() for choice in instance.choices]
        return (
            instance.fields["context"]
            + separator
            + "\nChoose the best continuation:"
            + prompts.choice_lines(endings, wording)
            + wording.answer_suffix
        )


HELLASWAG = Completion.of(
    "hellaswag",
    bundle=BundleArrow("hellaswag/none/validation"),
)
