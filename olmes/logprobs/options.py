"""What the model-running commands offer, stated without torch.

``olmes logprobs`` builds its command line, and the config check knows the short names, from these
facts alone, so that a light install (without ``olmes[models]``) can show the help and check a
config; :mod:`olmes.logprobs.models` and :mod:`olmes.logprobs.engine` use the same values.
"""

from __future__ import annotations

import re

SHORT_NAMES = ("smollm2-135m", "gemma3-270m")  # embedded models, fetched from PyPI by name
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(@[\w./-]+)?$")  # a hub model: org/name[@revision]
DTYPE_NAMES = ("float32", "float16", "bfloat16")  # torch dtypes of the same names
DEFAULT_MAX_BATCH_TOKENS = 512  # tokens forwarded per model call on a CPU (a GPU's: engine.py)
