"""PIQA: a goal and two solutions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from olmes.requests import prompts
from olmes.requests.prompts import STANDARD, Wording
from olmes.requests.tasks.base import BundleArrow, Instance, TaskTemplate


@dataclass(frozen=True, kw_only=True, eq=False)
class GoalSolutions(TaskTemplate):
    """A goal and two candidate solutions (kept unstripped, as the reference does)."""

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        return Instance(
            native_id=index,
            choices=(row["sol1"], row["sol2"]),
            gold=int(row["label"]),
            fields={"goal": row["goal"]},
        )

    def cf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return "Goal: " + instance.fields["goal"] + wording.answer_suffix

    def mcf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return (
            "Goal: "
            + instance.fields["goal"]
            + prompts.choice_lines(instance.choices, wording)
            + wording.answer_suffix
        )


PIQA = GoalSolutions.of(
    "piqa",
    bundle=BundleArrow("piqa/plain_text/validation"),
)
