"""The registry of the OLMES tasks: each task is one record (:class:`Task`) holding all its facts.

Requests, scoring, tables, the site and the workflow's config check all read the facts from here.
To add a task: make a record (a value of an existing template class, or of a new one in a new
module), list it in ``TASKS`` and give it 5 curated shots in ``fewshot.json``. To point a task at
another copy of its dataset, change its ``hf_path``/``hf_name`` (or set ``OLMES_HF_DATASETS_DIR``
for local copies of the hub repositories).
"""

from __future__ import annotations

from olmes.core.errors import OlmesError
from olmes.requests.tasks.base import Instance, Task
from olmes.requests.tasks.boolq import BOOLQ
from olmes.requests.tasks.hellaswag import HELLASWAG
from olmes.requests.tasks.mmlu import MMLU
from olmes.requests.tasks.piqa import PIQA
from olmes.requests.tasks.question_answer import ARC_CHALLENGE, ARC_EASY, CSQA, OPENBOOKQA
from olmes.requests.tasks.socialiqa import SOCIALIQA
from olmes.requests.tasks.winogrande import WINOGRANDE

TASKS: dict[str, Task] = {
    task.key: task
    for task in (
        ARC_CHALLENGE, ARC_EASY, BOOLQ, CSQA, HELLASWAG, MMLU, OPENBOOKQA, PIQA, SOCIALIQA, WINOGRANDE,
    )
}  # fmt: skip


def get_task(key: str) -> Task:
    """The task registered under ``key``; an unknown key is a one-line error listing the known ones."""
    try:
        return TASKS[key]
    except KeyError:
        raise OlmesError(f"unknown task {key!r}; known tasks: {', '.join(TASKS)}") from None


__all__ = ["TASKS", "Instance", "Task", "get_task"]
