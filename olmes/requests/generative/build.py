"""Generative instances -> generation request rows (:class:`GenerationRequestRow`)."""

from __future__ import annotations

from olmes.core.errors import OlmesError
from olmes.core.generative import get_generative_task
from olmes.core.records.generative import GenerationRequestRow
from olmes.requests.generative.base import GenerativeInstance
from olmes.requests.generative.data import dump_documents
from olmes.requests.generative.templates import get_generative_template


def generative_instances(task_key: str, limit: int | None = None) -> list[GenerativeInstance]:
    """The task's instances in the standard's order (AI2's documents), the first ``limit`` of them."""
    if limit is not None and limit <= 0:
        raise OlmesError(f"--limit must be a positive number of instances, got {limit}")
    template = get_generative_template(task_key)
    return [template.standardize(doc) for doc in dump_documents(template.task)[:limit]]


def generation_requests(task_key: str, limit: int | None = None) -> list[GenerationRequestRow]:
    """The generation request rows of a generative task (the first ``limit`` instances): the prompt,
    the registry's stop sequences and token budget, the gold answers and the bits-per-byte request."""
    task = get_generative_task(task_key)
    template = get_generative_template(task.key)
    rows: list[GenerationRequestRow] = []
    for index, instance in enumerate(generative_instances(task.key, limit)):
        context = template.context(instance)
        rows.append(
            GenerationRequestRow(
                task=task.key,
                instance_index=index,
                native_id=instance.native_id,
                question=instance.question,
                context=context,
                stop_sequences=list(task.stop_sequences),
                max_gen_toks=task.max_gen_toks,
                answers=instance.answers,
                gold_context=context,  # AI2's perplexity_context is the prompt itself
                gold_continuation=" " + instance.gold,
            )
        )
    return rows
