"""What every generative template shares: the instance a dump document becomes, and the prompt.

Every OLMES v0.2 generative prompt has one shape (docs/generative.md, "Prompts")::

    <description><shot 1 block> <shot 1 answer>\n\n ... <shot k block> <shot k answer>\n\n<instance block>

where a block ends in ``Answer:`` and the description (empty for some tasks) ends in a blank line.
A template says how its task's block is written from a document's fields and how a dump document
becomes an instance; the shots are documents of ``shots.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from typing import Any

from olmes.core.errors import OlmesError
from olmes.core.generative import GenerativeTask, get_generative_task

SHOT_SEPARATOR = "\n\n"
"""Between a shot's answer and what follows it (the next shot or the instance)."""


@dataclass(frozen=True, kw_only=True)
class GenerativeInstance:
    """One instance: the fields its block renders, and what it asks and accepts."""

    native_id: str
    fields: dict[str, Any]  # what the template's block renders
    question: str  # what the instance asks, for readers
    answers: list[list[str]]  # every gold answer the metric compares with, each a list of spans
    gold: str  # the answer scored for bits per byte, without its leading space


@dataclass(frozen=True, kw_only=True, eq=False)
class GenerativeTemplate:
    """How one generative task's prompts are written; subclasses give ``block`` and ``standardize``."""

    key: str  # a key of olmes.core.generative.GENERATIVE_TASKS
    description: str = ""  # the line(s) before the shots, ending in a blank line; "" for none

    @property
    def task(self) -> GenerativeTask:
        return get_generative_task(self.key)

    def block(self, fields: dict[str, Any]) -> str:
        """A document's block: its fields written out, ending in ``Answer:``."""
        raise NotImplementedError

    def standardize(self, doc: dict[str, Any]) -> GenerativeInstance:
        """The instance a document of AI2's dump (or one rebuilt from the raw split) is."""
        raise NotImplementedError

    def shots(self) -> list[dict[str, Any]]:
        """The curated shots as documents: the block's fields and ``answer``, the text after it."""
        shots = _all_shots().get(self.key, [])
        if len(shots) != self.task.num_shots:
            raise OlmesError(
                f"shots.json holds {len(shots)} shots of {self.key}; the task takes {self.task.num_shots}"
            )
        return shots

    @cached_property
    def prefix(self) -> str:
        """Everything before the instance's block: the description and the shots with their answers."""
        return self.description + "".join(
            f"{self.block(shot)} {shot['answer']}{SHOT_SEPARATOR}" for shot in self.shots()
        )

    def context(self, instance: GenerativeInstance) -> str:
        """The generation prompt (AI2's ``context``, also its ``perplexity_context``)."""
        return self.prefix + self.block(instance.fields)


def _all_shots() -> dict[str, list[dict[str, Any]]]:
    text = resources.files("olmes.requests.generative").joinpath("shots.json").read_text(encoding="utf-8")
    return json.loads(text)["shots"]


def field(doc: dict[str, Any], name: str, task: str) -> Any:
    """A document's field; a missing one is a one-line error naming the task."""
    try:
        return doc[name]
    except KeyError:
        raise OlmesError(f"{task}: a document without the field {name!r}") from None
