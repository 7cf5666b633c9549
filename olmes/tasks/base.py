"""What every OLMES task is made of: its facts (dataset, split, normalization) and its template.

A task module subclasses :class:`Task` and fills in three things: ``standardize`` (a raw dataset
row -> an :class:`Instance`), ``cf_queries``/``cf_continuations`` (the cloze formulation) and
``mcf_query`` (the multiple-choice formulation). The shared rendering rules (shot joining,
choice lines, letters) live in :mod:`olmes.prompts` and are not repeated here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from olmes import prompts


@dataclass(frozen=True)
class Instance:
    """One standardized evaluation instance: the fields a template needs, the choices and the gold."""

    native_id: str | int
    choices: tuple[str, ...]
    gold: int
    fields: dict[str, Any] = field(default_factory=dict)
    subject: str | None = None

    def to_json(self) -> dict[str, Any]:
        row = {"native_id": self.native_id, "choices": list(self.choices), "gold": self.gold}
        row["fields"] = self.fields
        if self.subject is not None:
            row["subject"] = self.subject
        return row


@dataclass(frozen=True)
class BundleArrow:
    """A raw split saved with ``datasets.save_to_disk`` inside the bundle's ``hf_datasets/``."""

    path: str


@dataclass(frozen=True)
class BundleDump:
    """A split known to the bundle only through the ``doc`` fields of a reference request dump."""

    task: str
    variant: str


@cache
def curated_fewshot() -> dict[str, list[dict]]:
    """The curated OLMES few-shot examples (package copy of ``shared/olmes/fewshot.json``)."""
    text = resources.files("olmes.tasks").joinpath("fewshot.json").read_text(encoding="utf-8")
    return json.loads(text)


class Task:
    """Base class of the OLMES tasks. Subclasses set the class attributes and the template methods."""

    key: str
    display_name: str
    hf_path: str
    hf_name: str | None
    split: str
    recommended_norm: str
    has_pmi: bool
    bundle: BundleArrow | BundleDump
    num_shots: int = 5
    subjects: tuple[str, ...] = ()  # MMLU-style tasks: one hub config per subject
    fewshot_split: str | None = None  # where shots come from when they are not curated

    # -- data ------------------------------------------------------------------------------------
    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        """Turn one raw row (at position ``index`` of its split) into an :class:`Instance`."""
        raise NotImplementedError

    def bundle_row_from_doc(self, doc: dict[str, Any], raw: dict[str, Any] | None) -> dict[str, Any]:
        """For ``BundleDump`` tasks: rebuild a raw row (in the hub's schema) from a dump's ``doc``.

        ``raw`` is the matching row of the bundle's own copy of the split where one exists.
        """
        raise NotImplementedError

    def curated_shots(self) -> list[Instance]:
        """The task's first 5 curated examples (tasks with a ``fewshot_split`` take theirs from data)."""
        return list(_curated_shots(self))

    def instruction(self, instance: Instance) -> str:
        """Text before the shots (only MMLU has one)."""
        return ""

    # -- templates -------------------------------------------------------------------------------
    def cf_queries(self, instance: Instance) -> list[str]:
        """The cloze context (without shots) for each choice; the same query for all but WinoGrande."""
        return [self.cf_query(instance)] * len(instance.choices)

    def cf_query(self, instance: Instance) -> str:
        raise NotImplementedError

    def cf_continuations(self, instance: Instance) -> list[str]:
        """The cloze continuation of each choice: one space, then the answer text."""
        return [" " + choice for choice in instance.choices]

    def mcf_query(self, instance: Instance) -> str:
        raise NotImplementedError

    # -- shots, rendered with the shared rules ---------------------------------------------------
    def cf_shot(self, shot: Instance) -> str:
        return prompts.cf_shot(self.cf_queries(shot)[shot.gold], self.cf_continuations(shot)[shot.gold])

    def mcf_shot(self, shot: Instance) -> str:
        return prompts.mcf_shot(self.mcf_query(shot), shot.gold)


@cache
def _curated_shots(task: Task) -> tuple[Instance, ...]:
    examples = curated_fewshot()[task.key][: task.num_shots]
    return tuple(task.standardize(row, index) for index, row in enumerate(examples))
