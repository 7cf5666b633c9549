"""How an OLMES task's prompts are made: its template, beside its facts.

A task's facts (names, dataset and split, how many instances the standard evaluates, the recommended
normalization and why, pmi rows, subjects) are a record of :mod:`olmes.core.tasks`, read by every
stage. Here each task is a value of a :class:`TaskTemplate` subclass, made from those facts. The
subclass is the template family: ``standardize`` (a raw dataset row -> an :class:`Instance`), ``cf_queries`` /
``cf_continuations`` (the cloze formulation) and ``mcf_query`` (the multiple-choice formulation).
Tasks sharing a template are values of one class (ARC-Challenge, ARC-Easy, CommonsenseQA and
OpenBookQA are all :class:`olmes.requests.tasks.question_answer.QuestionAnswer`). The shared rendering
rules (shot joining, choice lines, letters) live in :mod:`olmes.requests.prompts` and are not repeated here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from functools import cache
from importlib import resources
from typing import Any, Self

from olmes.core.errors import OlmesError
from olmes.core.tasks import Task, get_task
from olmes.requests import prompts
from olmes.requests.prompts import STANDARD, Wording


@dataclass(frozen=True)
class Instance:
    """One standardized evaluation instance: the fields a template needs, the choices and the gold."""

    native_id: str | int
    choices: tuple[str, ...]
    gold: int
    fields: dict[str, Any] = field(default_factory=dict)
    subject: str | None = None


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
    """The curated OLMES few-shot examples (shipped with the package; see docs/standard.md section 2)."""
    text = resources.files("olmes.requests.tasks").joinpath("fewshot.json").read_text(encoding="utf-8")
    return json.loads(text)


@dataclass(frozen=True, kw_only=True, eq=False)
class TaskTemplate(Task):
    """A task's facts (:class:`olmes.core.tasks.Task`) and how its prompts are made. Subclasses
    (template families) add the template methods; a value is made with :meth:`of` from the
    registry's facts, so no fact is stated twice."""

    bundle: BundleArrow | BundleDump  # where the offline bundle keeps the split
    raw_companion: str | None = None  # a bundle split whose rows complete a BundleDump's docs

    @classmethod
    def of(cls, key: str, **template: Any) -> Self:
        """The template value of the registered task ``key``: its facts, and ``template``'s fields."""
        facts = get_task(key)
        return cls(**{fact.name: getattr(facts, fact.name) for fact in fields(Task)}, **template)

    # -- data ------------------------------------------------------------------------------------
    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        """Turn one raw row (at position ``index`` of its split) into an :class:`Instance`."""
        raise NotImplementedError

    def bundle_row_from_doc(self, doc: dict[str, Any], raw: dict[str, Any] | None) -> dict[str, Any]:
        """For ``BundleDump`` tasks: rebuild a raw row (in the hub's schema) from a dump's ``doc``.

        ``raw`` is the matching row of ``raw_companion`` where the task has one.
        """
        raise NotImplementedError

    def curated_shots(self) -> list[Instance]:
        """The task's first 5 curated examples (tasks with a ``fewshot_split`` take theirs from data)."""
        return list(_curated_shots(self))

    def other_shots(self) -> list[Instance]:
        """The shots of prompt variants var2 and var3: the curated 5 with 3 replaced by other train
        examples (``fewshot_var2.json``, chosen by ``scripts/choose_other_shots.py``)."""
        return list(_other_shots(self))

    def instruction(self, instance: Instance) -> str:
        """Text before the shots (only MMLU has one)."""
        return ""

    def question(self, instance: Instance) -> str:
        """The instance's question as a reader sees it (the site's instance browser)."""
        return self.cf_queries(instance)[0].removesuffix(prompts.ANSWER_SUFFIX)

    # -- templates -------------------------------------------------------------------------------
    def cf_queries(self, instance: Instance, wording: Wording = STANDARD) -> list[str]:
        """The cloze context (without shots) for each choice; the same query for all but WinoGrande."""
        return [self.cf_query(instance, wording)] * len(instance.choices)

    def cf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        raise NotImplementedError

    def cf_continuations(self, instance: Instance) -> list[str]:
        """The cloze continuation of each choice: one space, then the answer text."""
        return [" " + choice for choice in instance.choices]

    def mcf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        raise NotImplementedError

    # -- shots, rendered with the shared rules ---------------------------------------------------
    def cf_shot(self, shot: Instance, wording: Wording = STANDARD) -> str:
        query = self.cf_queries(shot, wording)[shot.gold]
        return prompts.cf_shot(query, self.cf_continuations(shot)[shot.gold])

    def mcf_shot(self, shot: Instance, wording: Wording = STANDARD) -> str:
        return prompts.mcf_shot(self.mcf_query(shot, wording), shot.gold)


@cache
def _curated_shots(task: TaskTemplate) -> tuple[Instance, ...]:
    examples = curated_fewshot()[task.key][: task.num_shots]
    return tuple(task.standardize(row, index) for index, row in enumerate(examples))


@cache
def other_fewshot() -> dict:
    """The shots of prompt variants var2 and var3 per task, and why the others have none."""
    text = resources.files("olmes.requests.tasks").joinpath("fewshot_var2.json").read_text(encoding="utf-8")
    return json.loads(text)


@cache
def _other_shots(task: TaskTemplate) -> tuple[Instance, ...]:
    shots = other_fewshot()
    if task.key not in shots:
        why = shots["_excluded"].get(task.key, "none were chosen")
        raise OlmesError(f"prompt variants var2 and var3 have no other shots for {task.key}: {why}")
    return tuple(task.standardize(row, index) for index, row in enumerate(shots[task.key]))
