"""What every OLMES task is made of: one record holding all of its facts, and its template.

A task is a value of a :class:`Task` subclass. The fields are the task's facts (names, dataset and
split, how many instances the standard evaluates, the recommended normalization and why, pmi rows,
subjects), read by requests, scoring, tables and the site alike. The subclass is the template
family: ``standardize`` (a raw dataset row -> an :class:`Instance`), ``cf_queries`` /
``cf_continuations`` (the cloze formulation) and ``mcf_query`` (the multiple-choice formulation).
Tasks sharing a template are values of one class (ARC-Challenge, ARC-Easy, CommonsenseQA and
OpenBookQA are all :class:`olmes.requests.tasks.question_answer.QuestionAnswer`). The shared rendering
rules (shot joining, choice lines, letters) live in :mod:`olmes.requests.prompts` and are not repeated here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from olmes.core.errors import OlmesError
from olmes.core.methods import Method, Normalization, cf_method
from olmes.requests import prompts
from olmes.requests.prompts import STANDARD, Wording

SAMPLE_THRESHOLD = 1500
SAMPLE_SIZE = 1000
SAMPLE_SEED = 1234
"""The standard's sampling rule (docs/standard.md section 1), applied by :mod:`olmes.requests.data`: a
split of over SAMPLE_THRESHOLD instances is cut to SAMPLE_SIZE with random.Random(SAMPLE_SEED).sample."""

WHY_PMI = (
    "The answers are often unusual, low-frequency phrases. A plain or length-normalized "
    "log-probability mostly rewards answers that are likely on their own; pmi subtracts each "
    'answer\'s log-probability after the bare context "Answer:", so what is left is how much the '
    "question raises it. In the OLMES experiments pmi gave the best accuracy on this task."
)
WHY_CHAR = (
    "The answers are ordinary text of different lengths. A plain sum of log-probabilities "
    "penalizes every extra token; dividing by the number of characters (the leading space "
    "included) removes that bias without depending on the tokenizer. In the OLMES experiments "
    "this per-character normalization was the best or as good as the best on this task."
)


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
class Task:
    """Every fact of one OLMES task. Subclasses (template families) add the template methods."""

    key: str
    display_name: str
    short_name: str  # column head of the paper's tables and the leaderboard ("ARC-C")
    oe_eval_name: str  # AI2's implementation's name of the task (for subject tasks: + "_<subject>")
    hf_path: str  # the hub dataset (docs/standard.md section 1); OLMES_HF_DATASETS_DIR may mirror it
    hf_name: str | None
    split: str
    split_size: int  # rows of ``split`` (all subjects together for MMLU)
    recommended_norm: Normalization
    why_norm: str  # why the standard recommends ``recommended_norm`` here, for readers of the site
    has_pmi: bool  # the standard scores CF with unconditional (pmi) rows
    bundle: BundleArrow | BundleDump  # where the offline bundle keeps the split
    raw_companion: str | None = None  # a bundle split whose rows complete a BundleDump's docs
    num_shots: int = 5
    subjects: tuple[str, ...] = ()  # MMLU-style tasks: one hub config per subject, macro-averaged
    fewshot_split: str | None = None  # where shots come from when they are not curated

    @property
    def sampled(self) -> bool:
        """Whether the standard samples the split (never for subject tasks)."""
        return not self.subjects and self.split_size > SAMPLE_THRESHOLD

    @property
    def standard_count(self) -> int:
        """Instances a full OLMES run evaluates; fewer makes a result partial."""
        return SAMPLE_SIZE if self.sampled else self.split_size

    @property
    def instances_note(self) -> str:
        """Which instances the standard evaluates, in words."""
        if self.subjects:
            return (
                f"all {self.split_size} {self.split} questions of {len(self.subjects)} subjects; "
                "the score is the macro-average over subjects"
            )
        if self.sampled:
            return (
                f"{SAMPLE_SIZE} of {self.split_size} (sampled with random.Random({SAMPLE_SEED}), "
                "in sampled order)"
            )
        return f"all {self.split_size}"

    @property
    def recommended_method(self) -> Method:
        """The CF method of the recommended normalization: the CF half of the task's OLMES score."""
        return cf_method(self.recommended_norm)

    @property
    def oe_eval_names(self) -> dict[str, str | None]:
        """AI2's implementation's task name of each part of this task, and the part's subject (None
        where the task has none): ``arc_challenge``; ``mmlu_abstract_algebra``, ... per subject."""
        if not self.subjects:
            return {self.oe_eval_name: None}
        return {f"{self.oe_eval_name}_{subject}": subject for subject in self.subjects}

    @property
    def dataset(self) -> str:
        return self.hf_path + (f" ({self.hf_name})" if self.hf_name else "")

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
def _curated_shots(task: Task) -> tuple[Instance, ...]:
    examples = curated_fewshot()[task.key][: task.num_shots]
    return tuple(task.standardize(row, index) for index, row in enumerate(examples))


@cache
def other_fewshot() -> dict:
    """The shots of prompt variants var2 and var3 per task, and why the others have none."""
    text = resources.files("olmes.requests.tasks").joinpath("fewshot_var2.json").read_text(encoding="utf-8")
    return json.loads(text)


@cache
def _other_shots(task: Task) -> tuple[Instance, ...]:
    shots = other_fewshot()
    if task.key not in shots:
        why = shots["_excluded"].get(task.key, "none were chosen")
        raise OlmesError(f"prompt variants var2 and var3 have no other shots for {task.key}: {why}")
    return tuple(task.standardize(row, index) for index, row in enumerate(shots[task.key]))
