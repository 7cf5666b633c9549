"""Stage 6, the results store: ``publish`` (and every check it makes) and ``reproduce``.

The package is the store's entry for every caller outside it (the CLI, the workflow, scripts/ and
benchmarks/): what reading a store takes is exported here. Writing one is
:func:`olmes.store.publish.publish`; checking one, :mod:`olmes.store.verify`.
"""

from olmes.store.canonical import canonical_requests
from olmes.store.layout import MODEL_RECORD
from olmes.store.reading import (
    check_store,
    generative_paths,
    is_store,
    model_infos,
    model_names,
    read_model_record,
    score_paths,
    task_paths,
)

__all__ = [
    "MODEL_RECORD",
    "canonical_requests",
    "check_store",
    "is_store",
    "model_infos",
    "model_names",
    "read_model_record",
    "generative_paths",
    "score_paths",
    "task_paths",
]
