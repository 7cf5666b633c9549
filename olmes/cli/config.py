"""The workflow's configuration: checked against its JSON schema, with one message naming the key.

The workflow runs this check before any job (``workflow/rules/common.smk``); it reads the task
registry, the prompt variants and the model specs, so it lives above those stages. It also expands
the checkpoint series (:mod:`olmes.cli.series`) into the models the workflow evaluates.

Snakemake's own ``validate`` reports a whole schema dump; this gives the user one line that
says which key is wrong and what it accepts, before any job runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from olmes.cli.series import expand_series
from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_TASKS
from olmes.core.tasks import STANDARD_VARIANT, TASKS
from olmes.logprobs.spec import ModelSpec, parse_model_spec
from olmes.requests.prompts import VARIANTS


def _key_path(error: jsonschema.ValidationError) -> str:
    parts = []
    for part in error.absolute_path:
        parts.append(f"[{part}]" if isinstance(part, int) else (f".{part}" if parts else str(part)))
    return "".join(parts) or "(top level)"


@dataclass(frozen=True)
class ConfigModel:
    """A model the config evaluates: its entry (as ``models:`` holds it; a series checkpoint's is made
    by :mod:`olmes.cli.series`) and its spec, parsed once (the workflow keeps it)."""

    entry: dict[str, Any]
    spec: ModelSpec


def validate_config(config: dict[str, Any], schema_path: Path) -> dict[str, ConfigModel]:
    """Raise :class:`OlmesError` for the first problem of ``config`` against the schema, naming the key;
    return every model it evaluates: the ``models`` entries, then each series' checkpoints (read from
    the hub only when ``<results>/series/`` has not recorded the branches yet)."""
    schema = yaml.safe_load(schema_path.read_text(encoding="utf-8"))
    schema["properties"]["tasks"]["items"]["enum"] = list(TASKS)  # the registry is the one task list
    schema["properties"]["generative_tasks"]["items"]["enum"] = list(GENERATIVE_TASKS)
    robustness = schema["properties"]["robustness"]["properties"]
    robustness["variants"]["items"]["enum"] = [v for v in VARIANTS if v != STANDARD_VARIANT]
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        error = errors[0]
        raise OlmesError(f"config key '{_key_path(error)}': {error.message}")
    models = {
        name: ConfigModel(entry, _check_model_spec(f"models.{name}.spec", entry["spec"]))
        for name, entry in config["models"].items()
    }
    _check_robustness(config)
    checkpoints = expand_series(config.get("series", {}), Path(config["results"]), models)
    for name, entry in checkpoints.items():
        models[name] = ConfigModel(entry, _check_model_spec(f"series.{entry['series']}", entry["spec"]))
    if not models:
        raise OlmesError("config key 'models': no model to evaluate; give one in 'models' or in 'series'")
    return models


def _check_robustness(config: dict[str, Any]) -> None:
    """Robustness tasks must be evaluated (their standard scores are the baseline), and var2/var3
    need other shots for each variant task."""
    from olmes.requests.tasks.base import other_fewshot

    robustness = config["robustness"]
    for key in ("variant_tasks", "rotation_tasks"):
        outside = [task for task in robustness[key] if task not in config["tasks"]]
        if outside:
            raise OlmesError(
                f"config key 'robustness.{key}': {outside[0]!r} is not in 'tasks'; its standard scores are "
                "the baseline, so add it there or remove it here"
            )
    if any(VARIANTS[variant].other_shots for variant in robustness["variants"]):
        lacking = [task for task in robustness["variant_tasks"] if task not in other_fewshot()]
        if lacking:
            raise OlmesError(
                f"config key 'robustness.variant_tasks': var2 and var3 have no other shots for {lacking[0]} "
                "(docs/standard.md section 6); remove it there or keep only var1 in 'robustness.variants'"
            )


def _check_model_spec(key: str, spec: str) -> ModelSpec:
    """A spec is what ``olmes logprobs --model`` takes, checked here without loading anything (nor
    torch) so that a wrong one stops the run before any job (:func:`olmes.logprobs.spec.parse_model_spec`:
    a local file or folder must be there; a hub id is checked when its log-prob job fetches it).
    Relative paths are from the folder snakemake runs in."""
    try:
        return parse_model_spec(spec)
    except OlmesError as error:
        raise OlmesError(f"config key '{key}': {error}") from error
