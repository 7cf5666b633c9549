"""The registry of the 10 OLMES tasks: one place for each task's dataset, split and normalization.

To point a task at another copy of its dataset, change ``hf_path``/``hf_name`` of its class (or
set ``OLMES_HF_DATASETS_DIR`` for local copies of the hub repositories).
"""

from __future__ import annotations

from olmes.errors import OlmesError
from olmes.tasks.base import Instance, Task
from olmes.tasks.boolq import BoolQ
from olmes.tasks.hellaswag import HellaSwag
from olmes.tasks.mmlu import Mmlu
from olmes.tasks.piqa import Piqa
from olmes.tasks.question_answer import ArcChallenge, ArcEasy, CommonsenseQA, OpenBookQA
from olmes.tasks.socialiqa import SocialIQa
from olmes.tasks.winogrande import WinoGrande

TASKS: dict[str, Task] = {
    task.key: task
    for task in (
        ArcChallenge(), ArcEasy(), BoolQ(), CommonsenseQA(), HellaSwag(),
        Mmlu(), OpenBookQA(), Piqa(), SocialIQa(), WinoGrande(),
    )
}  # fmt: skip

NORMALIZATIONS = ("none", "token", "char", "pmi")
FORMULATIONS = ("cf", "mcf")


def get_task(key: str) -> Task:
    """The task registered under ``key``; an unknown key is a one-line error listing the known ones."""
    try:
        return TASKS[key]
    except KeyError:
        raise OlmesError(f"unknown task {key!r}; known tasks: {', '.join(TASKS)}") from None


__all__ = ["FORMULATIONS", "NORMALIZATIONS", "TASKS", "Instance", "Task", "get_task"]
