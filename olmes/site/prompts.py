"""The exact prompts of a task page: the requests of the task's first instance, byte for byte, split
into the shots, the instance's query and the scored continuations."""

from __future__ import annotations

from typing import TypedDict

from olmes.core.methods import CF, MCF, PMI, Formulation
from olmes.core.records import RequestRow
from olmes.site.inputs import TaskRequests

PROMPT_TITLES: dict[Formulation, str] = {
    CF: "Cloze formulation (CF)",
    MCF: "Multiple-choice formulation (MCF)",
}
"""The formulations whose prompts a task page shows, in its order, and each block's title."""


class Continuation(TypedDict):
    text: str
    gold: bool
    choice: int


class PromptContext(TypedDict):
    """One context of the instance and the continuations scored after it."""

    context: str
    shots: str  # the instruction and shots every context of the subject starts with
    query: str  # the rest: the instance itself
    continuations: list[Continuation]


class UnconditionalRequest(TypedDict):
    context: str
    text: str
    gold: bool


class PromptBlock(TypedDict):
    """One formulation's requests of the task's first instance."""

    formulation: Formulation
    title: str
    contexts: list[PromptContext]
    subject: str | None
    native_id: str | int | None
    instance_index: int | None
    unconditional: list[UnconditionalRequest]  # CF: the pmi baseline's requests, where given
    path: str  # the request file's name


def prompt_blocks(requests: dict[tuple[str, str], TaskRequests], task: str) -> list[PromptBlock]:
    """The blocks of the formulations whose request files were given; the CF block also shows the pmi
    baseline's requests (the task's pmi request file)."""
    blocks = []
    for formulation, title in PROMPT_TITLES.items():
        given = requests.get((task, formulation))
        if given is None:
            continue
        baseline = requests.get((task, PMI)) if formulation == CF else None
        blocks.append(_block(formulation, title, given, baseline.example if baseline is not None else []))
    return blocks


def _block(
    formulation: Formulation, title: str, requests: TaskRequests, unconditional: list[RequestRow]
) -> PromptBlock:
    conditional = requests.example
    first = conditional[0] if conditional else None
    subject = first.get("subject") if first else None
    return {
        "formulation": formulation,
        "title": title,
        "contexts": _contexts(conditional, requests.prefix(subject)),
        "subject": subject,
        "native_id": first.get("native_id") if first else None,
        "instance_index": first["instance_index"] if first else None,
        "unconditional": [
            {"context": row["context"], "text": row["continuation"], "gold": row["choice"] == row["label"]}
            for row in unconditional
        ],
        "path": requests.path.name,
    }


def _contexts(rows: list[RequestRow], prefix: str) -> list[PromptContext]:
    """The instance's rows grouped by context (MCF: one; CF: one per choice, or one shared), each
    context split at the shared ``prefix`` (its shots) where it starts with it."""
    contexts: list[PromptContext] = []
    for row in rows:
        if not contexts or contexts[-1]["context"] != row["context"]:
            context = row["context"]
            shots = prefix if context.startswith(prefix) else ""
            contexts.append(
                {"context": context, "shots": shots, "query": context[len(shots) :], "continuations": []}
            )
        contexts[-1]["continuations"].append(
            {"text": row["continuation"], "gold": row["choice"] == row["label"], "choice": row["choice"]}
        )
    return contexts
