"""Access to AI2's reference request dumps, keyed so our rows can be matched to theirs."""

from __future__ import annotations

from functools import cache

from olmes.core.bundle import read_dump
from olmes.requests.data import UNCONDITIONAL_DOC_ID_OFFSET

# (task, formulation) -> the dump holding the standard's request set for it.
REFERENCE_VARIANTS = {
    ("arc_challenge", "cf"): "test_rc_5shot", ("arc_challenge", "mcf"): "test_mc_5shot",
    ("arc_easy", "cf"): "test_rc_5shot", ("arc_easy", "mcf"): "test_mc_5shot",
    ("boolq", "cf"): "rc_5shot", ("boolq", "mcf"): "mc_5shot",
    ("csqa", "cf"): "rc_5shot", ("csqa", "mcf"): "mc_5shot",
    ("hellaswag", "cf"): "rc_5shot", ("hellaswag", "mcf"): "mc_5shot",
    ("openbookqa", "cf"): "test_rc_5shot", ("openbookqa", "mcf"): "test_mc_5shot",
    ("piqa", "cf"): "rc_5shot", ("piqa", "mcf"): "mc_5shot",
    ("socialiqa", "cf"): "rc_5shot", ("socialiqa", "mcf"): "mc_5shot",
    ("winogrande", "cf"): "rc_5shot", ("winogrande", "mcf"): "mc_5shot",
}  # fmt: skip


def native_id_of(row: dict) -> object:
    """The dump's native id; some dumps leave it null and keep the id in the doc, or nowhere."""
    if row["native_id"] is not None:
        return row["native_id"]
    doc = row["doc"]
    for field in ("id", "idx", "index", "ind"):
        if field in doc:
            return doc[field]
    return None


@cache
def _cf_native_ids(task: str) -> dict[int, object]:
    """doc_id -> native id from the task's CF dump (same instances, same order as its MCF dump)."""
    return {
        row["doc_id"]: native_id_of(row)
        for row in read_dump(task, REFERENCE_VARIANTS[task, "cf"])
        if row["doc_id"] < UNCONDITIONAL_DOC_ID_OFFSET
    }


def reference_rows(task: str, formulation: str) -> list[dict]:
    """Reference rows normalized to our field names, in dump order."""
    rows = []
    for row in read_dump(task, REFERENCE_VARIANTS[task, formulation]):
        native_id = native_id_of(row)
        if native_id is None:
            native_id = _cf_native_ids(task)[row["doc_id"]]
        rows.append(
            {
                "doc_id": row["doc_id"] % UNCONDITIONAL_DOC_ID_OFFSET,
                "unconditional": row["doc_id"] >= UNCONDITIONAL_DOC_ID_OFFSET,
                "native_id": native_id,
                "choice": row["idx"],
                "label": row["label"],
                "context": row["request"]["context"],
                "continuation": row["request"]["continuation"],
            }
        )
    return rows
