"""``GENERATIVE_TEMPLATES``: one template per task of :data:`olmes.core.generative.GENERATIVE_TASKS`."""

from __future__ import annotations

from olmes.core.generative import get_generative_task
from olmes.requests.generative.base import GenerativeTemplate
from olmes.requests.generative.coqa import COQA
from olmes.requests.generative.gsm8k import GSM8K
from olmes.requests.generative.qa import JEOPARDY, NATURALQS_OPEN
from olmes.requests.generative.reading import DROP, SQUAD

GENERATIVE_TEMPLATES: dict[str, GenerativeTemplate] = {
    template.key: template for template in (COQA, DROP, JEOPARDY, NATURALQS_OPEN, SQUAD, GSM8K)
}


def get_generative_template(key: str) -> GenerativeTemplate:
    """The template of the generative task ``key``; an unknown key is the registry's one-line error."""
    return GENERATIVE_TEMPLATES[get_generative_task(key).key]
