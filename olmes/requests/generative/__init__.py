"""The OLMES v0.2 generative tasks' requests (:mod:`olmes.core.generative`): one template per task
(``GENERATIVE_TEMPLATES``; ``reading.py`` DROP and SQuAD, ``qa.py`` Natural Questions and Jeopardy,
``gsm8k.py``, ``coqa.py``), their curated shots (``shots.json``, recovered from AI2's dumps by
``scripts/extract_generative_shots.py``), the instances (``data.py``: AI2's documents) and the
generation request rows (``build.py``). docs/generative.md, "Prompts", writes each template out."""

from olmes.requests.generative.base import GenerativeInstance, GenerativeTemplate
from olmes.requests.generative.build import generation_requests, generative_instances
from olmes.requests.generative.templates import GENERATIVE_TEMPLATES, get_generative_template

__all__ = [
    "GENERATIVE_TEMPLATES",
    "GenerativeInstance",
    "GenerativeTemplate",
    "generation_requests",
    "generative_instances",
    "get_generative_template",
]
