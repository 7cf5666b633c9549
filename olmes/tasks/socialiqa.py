"""Social IQa: a situation, a question about it, three answers."""

from __future__ import annotations

from typing import Any

from olmes import prompts
from olmes.tasks.base import BundleArrow, Instance, Task


class SocialIQa(Task):
    key = "socialiqa"
    display_name = "Social IQa"
    hf_path = "allenai/social_i_qa"
    hf_name = None
    split = "validation"
    recommended_norm = "char"
    has_pmi = True
    bundle = BundleArrow("social_i_qa/none/validation")

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        return Instance(
            native_id=index,
            choices=(row["answerA"], row["answerB"], row["answerC"]),
            gold=int(row["label"]) - 1,
            fields={"context": row["context"], "question": row["question"]},
        )

    def _stem(self, instance: Instance) -> str:
        return "Question: " + instance.fields["context"] + " " + instance.fields["question"]

    def cf_query(self, instance: Instance) -> str:
        return self._stem(instance) + "\nAnswer:"

    def mcf_query(self, instance: Instance) -> str:
        return self._stem(instance) + prompts.choice_lines(instance.choices) + "\nAnswer:"
