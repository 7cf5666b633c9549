"""Reading a results store (layout: olmes.store.layout): its record, its models and their records,
and what the tables and the site read of it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.core.records import MODEL_FORMAT, STORE_FORMAT, ModelRecord, StoreRecord
from olmes.store.blobs import check_host
from olmes.store.layout import (
    GENERATIVE,
    MODEL_RECORD,
    ROBUSTNESS,
    SCORES,
    model_folder,
    model_record_path,
    models_folder,
    store_record_path,
    task_files_folder,
)
from olmes.store.lock import is_leftover
from olmes.store.provenance import level
from olmes.tables.results import ModelInfo


def is_store(path: str | Path) -> bool:
    return store_record_path(path).is_file()


def check_store(root: str | Path) -> Path:
    """``root`` as a Path when it is a store of this format; one clear error otherwise."""
    store_record(root)
    return Path(root)


def store_record(root: str | Path) -> StoreRecord:
    """A store's ``store.json``, checked: this format, and hosts that can be fetched from."""
    root = Path(root)
    marker = store_record_path(root)
    if not marker.is_file():
        raise OlmesError(
            f"{root} is not an olmes results store (no store.json); create one with olmes publish"
        )
    record = STORE_FORMAT.read(marker)
    for host in record.get("logprob_hosts", []):
        check_host(host, str(marker))
    return record


def model_names(root: str | Path) -> list[str]:
    """The store's models, by name (sorted: the store has no order of publication). A folder an
    interrupted publish left (olmes.store.lock.is_leftover) is no model."""
    folder = models_folder(check_store(root))
    found = folder.glob(f"*/{MODEL_RECORD}") if folder.is_dir() else []
    return sorted(p.parent.name for p in found if not is_leftover(p.parent.name))


def read_model_record(root: str | Path, model: str, folder: Path | None = None) -> ModelRecord:
    """A store model's record; from ``folder`` instead of ``models/<model>`` when given (a model
    folder being built)."""
    path = (folder or model_folder(root, model)) / MODEL_RECORD
    record = MODEL_FORMAT.read(path)
    if record["name"] != model:
        raise OlmesError(f"{path}: the model record of {record['name']!r}, in the folder of {model!r}")
    return record


def model_infos(root: str | Path) -> list[ModelInfo]:
    """How the tables and the site name the store's models (display name, checkpoint series), with
    each one's provenance level (olmes.store.provenance)."""
    return [
        replace(
            ModelInfo.from_record(
                read_model_record(root, name), str(model_record_path(root, name)), other_keys=True
            ),
            provenance=level(Path(root), name),
        )
        for name in model_names(root)
    ]


def score_paths(root: str | Path) -> list[Path]:
    """What the tables read: each model's score summaries and its robustness results, if any."""
    models = [model_folder(root, name) for name in model_names(root)]
    return [folder / kind for folder in models for kind in (SCORES, ROBUSTNESS) if (folder / kind).is_dir()]


def generative_paths(root: str | Path) -> list[Path]:
    """Each model's folder of OLMES v0.2 generative results (olmes.store.generative), if any."""
    models = [model_folder(root, name) for name in model_names(root)]
    return [folder / GENERATIVE for folder in models if (folder / GENERATIVE).is_dir()]


def task_paths(root: str | Path) -> list[Path]:
    folder = task_files_folder(check_store(root))
    return [folder] if folder.is_dir() else []
