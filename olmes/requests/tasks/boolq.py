"""BoolQ: passage (titled, "Title -- text"), yes/no question."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from olmes.core.errors import OlmesError
from olmes.requests import prompts
from olmes.requests.prompts import STANDARD, Wording
from olmes.requests.tasks.base import BundleDump, Instance, TaskTemplate

_ANSWERS = ("yes", "no")


@dataclass(frozen=True, kw_only=True, eq=False)
class YesNoPassage(TaskTemplate):
    """A passage and a yes/no question; gold 0 ("yes") iff the answer is True."""

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        # super_glue's label is 1 for True; the curated shots carry a boolean ``answer`` instead.
        is_true = bool(row["answer"]) if "answer" in row else row["label"] == 1
        return Instance(
            native_id=row.get("idx", index),
            choices=_ANSWERS,
            gold=0 if is_true else 1,
            fields={"passage": row["passage"], "question": row["question"]},
        )

    def bundle_row_from_doc(self, doc: dict[str, Any], raw: dict[str, Any] | None) -> dict[str, Any]:
        if raw is None:
            raise OlmesError(
                f"{self.key}: the bundle's raw split {self.raw_companion} is needed for questions"
            )
        tail = "\nQuestion: " + raw["question"] + "?" + prompts.ANSWER_SUFFIX
        if not doc["query"].endswith(tail):
            raise OlmesError(f"{self.key}: reference dump doc {doc['idx']} does not end in its question")
        return {
            "question": raw["question"],
            "passage": doc["query"][: -len(tail)],
            "idx": doc["idx"],
            "label": 1 if doc["gold"] == 0 else 0,
        }

    def _stem(self, instance: Instance) -> str:
        return instance.fields["passage"] + "\nQuestion: " + instance.fields["question"] + "?"

    def cf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return self._stem(instance) + wording.answer_suffix

    def mcf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return self._stem(instance) + prompts.choice_lines(instance.choices, wording) + wording.answer_suffix


BOOLQ = YesNoPassage.of(
    "boolq",
    # The bundle's raw copy of BoolQ lacks passage titles; the titled passages are in the dump docs.
    bundle=BundleDump("boolq", "val_rc_5shot"),
    raw_companion="boolq/none/validation",
)
