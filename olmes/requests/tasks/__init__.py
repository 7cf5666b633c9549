"""The template of each OLMES task: how its prompts are made from its dataset's rows.

A task's facts live in the registry :data:`olmes.core.tasks.TASKS`; here each task is a value of a
template family (:class:`TaskTemplate` subclasses, one module each) made from those facts, and
``TEMPLATES`` holds one per registered task. To add a task: add its facts to the core registry, make
its template value (of an existing template class, or of a new one in a new module), list it in
``TEMPLATES`` and give it 5 curated shots in ``fewshot.json``. To point a task at another copy of its
dataset, change its ``hf_path``/``hf_name`` in the core registry (or set ``OLMES_HF_DATASETS_DIR``
for local copies of the hub repositories).
"""

from __future__ import annotations

from olmes.core.tasks import get_task
from olmes.requests.tasks.base import Instance, TaskTemplate
from olmes.requests.tasks.boolq import BOOLQ
from olmes.requests.tasks.hellaswag import HELLASWAG
from olmes.requests.tasks.mmlu import MMLU
from olmes.requests.tasks.piqa import PIQA
from olmes.requests.tasks.question_answer import ARC_CHALLENGE, ARC_EASY, CSQA, OPENBOOKQA
from olmes.requests.tasks.socialiqa import SOCIALIQA
from olmes.requests.tasks.winogrande import WINOGRANDE

TEMPLATES: dict[str, TaskTemplate] = {
    task.key: task
    for task in (
        ARC_CHALLENGE, ARC_EASY, BOOLQ, CSQA, HELLASWAG, MMLU, OPENBOOKQA, PIQA, SOCIALIQA, WINOGRANDE,
    )
}  # fmt: skip


def get_template(key: str) -> TaskTemplate:
    """The template value of the task ``key``; an unknown key is the registry's one-line error."""
    return TEMPLATES[get_task(key).key]


__all__ = ["TEMPLATES", "Instance", "TaskTemplate", "get_template"]
