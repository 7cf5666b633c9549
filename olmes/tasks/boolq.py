"""BoolQ: passage (titled, "Title -- text"), yes/no question."""

from __future__ import annotations

from typing import Any

from olmes import prompts
from olmes.tasks.base import BundleDump, Instance, Task

_ANSWERS = ("yes", "no")


class BoolQ(Task):
    key = "boolq"
    display_name = "BoolQ"
    hf_path = "aps/super_glue"
    hf_name = "boolq"
    split = "validation"
    recommended_norm = "none"
    has_pmi = False
    # The bundle's raw copy of BoolQ lacks passage titles; the titled passages are in the dump docs.
    bundle = BundleDump("boolq", "val_rc_5shot")
    raw_companion = "boolq/none/validation"

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
        assert raw is not None, "BoolQ needs the bundle's raw split for its questions"
        tail = "\nQuestion: " + raw["question"] + "?\nAnswer:"
        assert doc["query"].endswith(tail), (doc["query"][-200:], tail)
        return {
            "question": raw["question"],
            "passage": doc["query"][: -len(tail)],
            "idx": doc["idx"],
            "label": 1 if doc["gold"] == 0 else 0,
        }

    def _stem(self, instance: Instance) -> str:
        return instance.fields["passage"] + "\nQuestion: " + instance.fields["question"] + "?"

    def cf_query(self, instance: Instance) -> str:
        return self._stem(instance) + "\nAnswer:"

    def mcf_query(self, instance: Instance) -> str:
        return self._stem(instance) + prompts.choice_lines(instance.choices) + "\nAnswer:"
