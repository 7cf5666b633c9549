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

FORMULATIONS = ("cf", "mcf")
REQUEST_SETS = ("cf", "pmi", "mcf")
"""The request files of a task: CF, the pmi baseline (CF's continuations after the bare context
"Answer:", docs/standard.md section 4; only for tasks that score pmi) and MCF. Each is scored by
its own log-prob job, so pmi's extra compute is a node of its own in the workflow."""
ROTATIONS = "mcf_rot"
"""The MCF request set of every other answer order: rotations 1..k-1 of each instance's choices
(rotation r shows choices r, r+1, ... mod k, the gold letter moving with its choice; rotation 0 is
the standard MCF set). Not part of the standard: a robustness measurement (``olmes rotations``)."""


def get_task(key: str) -> Task:
    """The task registered under ``key``; an unknown key is a one-line error listing the known ones."""
    try:
        return TASKS[key]
    except KeyError:
        raise OlmesError(f"unknown task {key!r}; known tasks: {', '.join(TASKS)}") from None


__all__ = ["FORMULATIONS", "REQUEST_SETS", "ROTATIONS", "TASKS", "Instance", "Task", "get_task"]
