"""MMLU has no reference dump: check its counts and two subjects' first requests literally."""

from __future__ import annotations

from collections import Counter

import pytest

from olmes.core.errors import OlmesError
from olmes.requests.build import build_requests
from olmes.requests.data import load_instances
from olmes.requests.tasks import get_template

# The public MMLU test-split sizes per subject (sum 14042).
SUBJECT_COUNTS = {
    "abstract_algebra": 100, "anatomy": 135, "astronomy": 152, "business_ethics": 100,
    "clinical_knowledge": 265, "college_biology": 144, "college_chemistry": 100,
    "college_computer_science": 100, "college_mathematics": 100, "college_medicine": 173,
    "college_physics": 102, "computer_security": 100, "conceptual_physics": 235, "econometrics": 114,
    "electrical_engineering": 145, "elementary_mathematics": 378, "formal_logic": 126,
    "global_facts": 100, "high_school_biology": 310, "high_school_chemistry": 203,
    "high_school_computer_science": 100, "high_school_european_history": 165,
    "high_school_geography": 198, "high_school_government_and_politics": 193,
    "high_school_macroeconomics": 390, "high_school_mathematics": 270,
    "high_school_microeconomics": 238, "high_school_physics": 151, "high_school_psychology": 545,
    "high_school_statistics": 216, "high_school_us_history": 204, "high_school_world_history": 237,
    "human_aging": 223, "human_sexuality": 131, "international_law": 121, "jurisprudence": 108,
    "logical_fallacies": 163, "machine_learning": 112, "management": 103, "marketing": 234,
    "medical_genetics": 100, "miscellaneous": 783, "moral_disputes": 346, "moral_scenarios": 895,
    "nutrition": 306, "philosophy": 311, "prehistory": 324, "professional_accounting": 282,
    "professional_law": 1534, "professional_medicine": 272, "professional_psychology": 612,
    "public_relations": 110, "security_studies": 245, "sociology": 201, "us_foreign_policy": 100,
    "virology": 166, "world_religions": 171,
}  # fmt: skip

WORLD_RELIGIONS_CF = (
    "The following are multiple choice questions (with answers) about world religions.\n\n"
    "Question: What is the sign of the covenant for Jewish males?\nAnswer: Circumcision\n\n"
    "Question: What is the Second Gem in Buddhism?\nAnswer: The Dharma\n\n"
    'Question: In which dynasty was the "Mandate of Heaven" developed to legitimatize the new rulers?'
    "\nAnswer: Zhou\n\n"
    "Question: Which Japanese government promoted a kind of national cult based on the emperor and his "
    "associations with kami?\nAnswer: Meiji\n\n"
    "Question: How can the Upanishads be characterized?\nAnswer: Philosophical texts\n\n"
    "Question: What can murtis be translated as?\nAnswer:"
)
WORLD_RELIGIONS_MCF = (
    "The following are multiple choice questions (with answers) about world religions.\n\n"
    "Question: What is the sign of the covenant for Jewish males?\n A. The rainbow\n B. Circumcision\n"
    " C. A son\n D. Bar mitzvah\nAnswer: B\n\n"
    "Question: What is the Second Gem in Buddhism?\n A. The Dharma\n B. The Sangha\n C. The Buddha\n"
    " D. The Bodhisattva\nAnswer: A\n\n"
    'Question: In which dynasty was the "Mandate of Heaven" developed to legitimatize the new rulers?'
    "\n A. Shang\n B. Zhou\n C. Han\n D. Xia\nAnswer: B\n\n"
    "Question: Which Japanese government promoted a kind of national cult based on the emperor and his "
    "associations with kami?\n A. Honen\n B. Tanaka\n C. Tokugawa\n D. Meiji\nAnswer: D\n\n"
    "Question: How can the Upanishads be characterized?\n A. Ritual texts\n B. Philosophical texts\n"
    " C. Hymns\n D. Origin stories\nAnswer: B\n\n"
    "Question: What can murtis be translated as?\n A. Offerings\n B. Prayers\n C. Apparitions\n"
    " D. Idols\nAnswer:"
)
ABSTRACT_ALGEBRA_CF = (
    "The following are multiple choice questions (with answers) about abstract algebra.\n\n"
    "Question: Find all c in Z_3 such that Z_3[x]/(x^2 + c) is a field.\nAnswer: 1\n\n"
    "Question: Statement 1 | If aH is an element of a factor group, then |aH| divides |a|. "
    "Statement 2 | If H and K are subgroups of G then HK is a subgroup of G.\nAnswer: False, False\n\n"
    "Question: Statement 1 | Every element of a group generates a cyclic subgroup of the group. "
    "Statement 2 | The symmetric group S_10 has 10 elements.\nAnswer: True, False\n\n"
    "Question: Statement 1| Every function from a finite set onto itself must be one to one. "
    "Statement 2 | Every subgroup of an abelian group is abelian.\nAnswer: True, True\n\n"
    "Question: Find the characteristic of the ring 2Z.\nAnswer: 0\n\n"
    "Question: Find the degree for the given field extension Q(sqrt(2), sqrt(3), sqrt(18)) over Q."
    "\nAnswer:"
)
ABSTRACT_ALGEBRA_MCF = (
    "The following are multiple choice questions (with answers) about abstract algebra.\n\n"
    "Question: Find all c in Z_3 such that Z_3[x]/(x^2 + c) is a field.\n A. 0\n B. 1\n C. 2\n D. 3\n"
    "Answer: B\n\n"
    "Question: Statement 1 | If aH is an element of a factor group, then |aH| divides |a|. "
    "Statement 2 | If H and K are subgroups of G then HK is a subgroup of G.\n A. True, True\n"
    " B. False, False\n C. True, False\n D. False, True\nAnswer: B\n\n"
    "Question: Statement 1 | Every element of a group generates a cyclic subgroup of the group. "
    "Statement 2 | The symmetric group S_10 has 10 elements.\n A. True, True\n B. False, False\n"
    " C. True, False\n D. False, True\nAnswer: C\n\n"
    "Question: Statement 1| Every function from a finite set onto itself must be one to one. "
    "Statement 2 | Every subgroup of an abelian group is abelian.\n A. True, True\n B. False, False\n"
    " C. True, False\n D. False, True\nAnswer: A\n\n"
    "Question: Find the characteristic of the ring 2Z.\n A. 0\n B. 3\n C. 12\n D. 30\nAnswer: A\n\n"
    "Question: Find the degree for the given field extension Q(sqrt(2), sqrt(3), sqrt(18)) over Q."
    "\n A. 0\n B. 4\n C. 2\n D. 6\nAnswer:"
)

FIRST_REQUESTS = {
    ("world_religions", "cf"): (WORLD_RELIGIONS_CF, [" Offerings", " Prayers", " Apparitions", " Idols"], 3),
    ("world_religions", "mcf"): (WORLD_RELIGIONS_MCF, [" A", " B", " C", " D"], 3),
    ("abstract_algebra", "cf"): (ABSTRACT_ALGEBRA_CF, [" 0", " 4", " 2", " 6"], 1),
    ("abstract_algebra", "mcf"): (ABSTRACT_ALGEBRA_MCF, [" A", " B", " C", " D"], 1),
}


@pytest.fixture(scope="module")
def mmlu_requests() -> dict[str, list[dict]]:
    return {formulation: build_requests("mmlu", formulation) for formulation in ("cf", "mcf")}


def test_mmlu_has_57_subjects_and_14042_instances_never_sampled() -> None:
    instances = load_instances(get_template("mmlu"))
    assert len(instances) == 14042
    assert Counter(instance.subject for instance in instances) == SUBJECT_COUNTS
    assert [i.subject for i in instances] == sorted(i.subject for i in instances)


@pytest.mark.parametrize(("subject", "formulation"), sorted(FIRST_REQUESTS))
def test_first_instance_of_subject_is_exact(mmlu_requests, subject: str, formulation: str) -> None:
    context, continuations, gold = FIRST_REQUESTS[subject, formulation]
    first = [row for row in mmlu_requests[formulation] if row["subject"] == subject][: len(continuations)]
    assert {row["instance_index"] for row in first} == {first[0]["instance_index"]}
    assert all(row["context"] == context for row in first)
    assert [row["continuation"] for row in first] == continuations
    assert all(row["label"] == gold and row["native_id"] == 0 for row in first)


def test_mmlu_rows_per_subject(mmlu_requests) -> None:
    """Four choices per instance, no pmi rows by default, every subject's shots are its own."""
    for formulation, rows in mmlu_requests.items():
        assert len(rows) == 4 * 14042, formulation
        per_subject = Counter(row["subject"] for row in rows)
        assert per_subject == {subject: 4 * count for subject, count in SUBJECT_COUNTS.items()}
        assert not any(row["unconditional"] for row in rows)
        for row in rows[:: 4 * 97]:
            subject = row["subject"].replace("_", " ")
            instruction = f"The following are multiple choice questions (with answers) about {subject}.\n\n"
            assert row["context"].startswith(instruction + "Question: ")
            assert row["context"].count("\n\nQuestion: ") == 6  # 5 shots and the query


def test_pmi_everywhere_adds_unconditional_rows_to_mmlu() -> None:
    with pytest.raises(OlmesError, match="without pmi"):
        build_requests("mmlu", "pmi", limit=3)
    unconditional = build_requests("mmlu", "pmi", limit=3, pmi_everywhere=True)
    assert len(unconditional) == 12 and all(row["unconditional"] for row in unconditional)
    assert all(row["context"] == "Answer:" for row in unconditional)
    assert [row["continuation"] for row in unconditional[:4]] == [" 0", " 4", " 2", " 6"]
    assert [row["continuation"] for row in build_requests("mmlu", "cf", limit=3)] == [
        row["continuation"] for row in unconditional
    ]
