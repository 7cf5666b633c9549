"""What the model-running commands offer, stated without torch.

``olmes logprobs`` builds its command line, and the workflow sizes its jobs, from these facts alone,
so that a light install (without ``olmes[models]``) can show the help and run the workflow's checks;
:mod:`olmes.logprobs.models` and :mod:`olmes.logprobs.engine` use the same values.
"""

from __future__ import annotations

import re

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(@[\w./-]+)?$")  # a hub model: org/name[@revision]
DTYPE_NAMES = ("float32", "float16", "bfloat16")  # torch dtypes of the same names
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}  # their itemsize, known without torch
DEFAULT_MAX_BATCH_TOKENS = 512  # tokens forwarded per model call on a CPU (a GPU's: chunks.py)


def own_dtype_name(config: dict) -> str:
    """A model's own precision (config.json ``dtype`` or ``torch_dtype``), float32 when it says none."""
    declared = config.get("dtype") or config.get("torch_dtype")
    return declared if isinstance(declared, str) and declared in DTYPE_NAMES else "float32"
