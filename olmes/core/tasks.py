"""The registry of the OLMES tasks' facts, and the names of the prompt variants.

Each task is one :class:`Task` record: its names, its dataset and split, how many instances the
standard evaluates, the recommended normalization and why, whether pmi is scored, its subjects.
Every stage reads these facts from here; the prompt templates that turn a task's rows into requests
live in :mod:`olmes.requests.tasks`, one template value per task of this registry.
To add a task: add its record here and to ``TASKS``, then its template value (see the README).
"""

from __future__ import annotations

from dataclasses import dataclass

from olmes.core.errors import OlmesError
from olmes.core.methods import Method, Normalization, cf_method

SAMPLE_THRESHOLD = 1500
SAMPLE_SIZE = 1000
SAMPLE_SEED = 1234
"""The standard's sampling rule (docs/standard.md section 1), applied by :mod:`olmes.requests.data`: a
split of over SAMPLE_THRESHOLD instances is cut to SAMPLE_SIZE with random.Random(SAMPLE_SEED).sample."""

STANDARD_VARIANT = "standard"
VARIANT_NAMES: tuple[str, ...] = (STANDARD_VARIANT, "var1", "var2", "var3")
"""The prompts a task can be asked in: the standard's, and the paper's Table 5 variants
(docs/standard.md section 6; their wordings and shots are :data:`olmes.requests.prompts.VARIANTS`)."""

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


@dataclass(frozen=True, kw_only=True, eq=False)
class Task:
    """Every fact of one OLMES task (the template values of :mod:`olmes.requests.tasks` add how
    its prompts are made)."""

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


MMLU_SUBJECTS = (
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

TASKS: dict[str, Task] = {
    task.key: task
    for task in (
        Task(
            key="arc_challenge",
            display_name="ARC-Challenge",
            short_name="ARC-C",
            oe_eval_name="arc_challenge",
            hf_path="allenai/ai2_arc",
            hf_name="ARC-Challenge",
            split="test",
            split_size=1172,
            recommended_norm="pmi",
            why_norm=WHY_PMI,
            has_pmi=True,
        ),
        Task(
            key="arc_easy",
            display_name="ARC-Easy",
            short_name="ARC-E",
            oe_eval_name="arc_easy",
            hf_path="allenai/ai2_arc",
            hf_name="ARC-Easy",
            split="test",
            split_size=2376,
            recommended_norm="char",
            why_norm=WHY_CHAR,
            has_pmi=True,
        ),
        Task(
            key="boolq",
            display_name="BoolQ",
            short_name="BoolQ",
            oe_eval_name="boolq",
            hf_path="aps/super_glue",
            hf_name="boolq",
            split="validation",
            split_size=3270,
            recommended_norm="none",
            why_norm=(
                'The two answers are " yes" and " no": the same length in characters and a single token '
                "each, so every length normalization ranks them like the plain sum. OLMES uses the plain "
                "sum of log-probabilities."
            ),
            has_pmi=False,
        ),
        Task(
            key="csqa",
            display_name="CommonsenseQA",
            short_name="CSQA",
            oe_eval_name="csqa",
            hf_path="tau/commonsense_qa",
            hf_name=None,
            split="validation",
            split_size=1221,
            recommended_norm="pmi",
            why_norm=WHY_PMI,
            has_pmi=True,
        ),
        Task(
            key="hellaswag",
            display_name="HellaSwag",
            short_name="HSwag",
            oe_eval_name="hellaswag",
            hf_path="Rowan/hellaswag",
            hf_name=None,
            split="validation",
            split_size=10042,
            recommended_norm="char",
            why_norm=WHY_CHAR,
            has_pmi=True,
        ),
        Task(
            key="mmlu",
            display_name="MMLU",
            short_name="MMLU",
            oe_eval_name="mmlu",
            hf_path="cais/mmlu",
            hf_name=None,  # one hub config per subject
            split="test",
            split_size=14042,
            subjects=MMLU_SUBJECTS,
            fewshot_split="dev",
            recommended_norm="char",
            why_norm=WHY_CHAR,
            has_pmi=False,
        ),
        Task(
            key="openbookqa",
            display_name="OpenBookQA",
            short_name="OBQA",
            oe_eval_name="openbookqa",
            hf_path="allenai/openbookqa",
            hf_name="main",
            split="test",
            split_size=500,
            recommended_norm="pmi",
            why_norm=WHY_PMI,
            has_pmi=True,
        ),
        Task(
            key="piqa",
            display_name="PIQA",
            short_name="PIQA",
            oe_eval_name="piqa",
            hf_path="ybisk/piqa",
            hf_name=None,
            split="validation",
            split_size=1838,
            recommended_norm="char",
            why_norm=WHY_CHAR,
            has_pmi=True,
        ),
        Task(
            key="socialiqa",
            display_name="Social IQa",
            short_name="SIQA",
            oe_eval_name="socialiqa",
            hf_path="allenai/social_i_qa",
            hf_name=None,
            split="validation",
            split_size=1954,
            recommended_norm="char",
            why_norm=WHY_CHAR,
            has_pmi=True,
        ),
        Task(
            key="winogrande",
            display_name="WinoGrande",
            short_name="WinoG",
            oe_eval_name="winogrande",
            hf_path="allenai/winogrande",
            hf_name="winogrande_xl",
            split="validation",
            split_size=1267,
            recommended_norm="none",
            why_norm=(
                "Both options score the very same continuation (the rest of the sentence) after two "
                "different contexts, so dividing by its length changes nothing and there is no answer "
                "whose own frequency needs correcting. OLMES uses the plain sum of log-probabilities."
            ),
            has_pmi=False,
        ),
    )
}
"""Every OLMES task, in the order tables, pages and the workflow list them."""


def get_task(key: str) -> Task:
    """The task registered under ``key``; an unknown key is a one-line error listing the known ones."""
    try:
        return TASKS[key]
    except KeyError:
        raise OlmesError(f"unknown task {key!r}; known tasks: {', '.join(TASKS)}") from None
