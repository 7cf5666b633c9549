"""``olmes import oe-eval``, the model: where the import goes and how the model is named
(:class:`ImportTarget`), the model its run names (one, in every file; the spec's) and its precision."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olmes.core.errors import OlmesError
from olmes.core.records import ModelIdentity
from olmes.logprobs.options import HUB_ID
from olmes.store.oe_eval.files import MODEL_FIELDS, GenerativeRun, TaskRun, model_configs


@dataclass(frozen=True)
class ImportTarget:
    """Where the import goes and how the model is named and tokenized."""

    output: Path  # a results folder: requests/<model>/, logprobs/<model>/, scores/<model>/
    model: str
    spec: str | None  # the model spec for the tokenizer and the store; None: the run's model
    commit: str | None
    data_source: str = "bundle"
    display_name: str | None = None  # None: the name with the qualifiers its identity adds


@dataclass(frozen=True)
class ImportModel:
    """The model of an import: its spec resolved, its tokenizer, the precision the run computed in."""

    spec: str
    resolved: Any  # olmes.logprobs.resolve.ResolvedModel
    tokenizer: Any
    bos: int | None
    dtype: str
    identity: ModelIdentity


def their_model(metrics: dict) -> str:
    model = _named_model(metrics)
    if model is None:
        raise OlmesError("the run's model_config names no model; give --model-spec (a hub id or folder)")
    return model


def _named_model(metrics: dict) -> str | None:
    """The model a metrics file names: its model_config's model_path, else model (what oe-eval loads)."""
    config = metrics.get("model_config") or {}
    model = config.get("model_path") or config.get("model")
    return model if isinstance(model, str) and model else None


@dataclass(frozen=True)
class _ModelName:
    """A model as a run or a spec names it, compared as people write names: a hub id's organization
    and name without case, a path by its last folder (a local copy of org/name is a folder called
    name, wherever it is), a name without an organization by its name alone."""

    org: str | None
    name: str

    @classmethod
    def of(cls, text: str) -> _ModelName:
        if HUB_ID.match(text):
            org, name = text.partition("@")[0].split("/")
            return cls(org.lower(), name.lower())
        return cls(None, re.split(r"[\\/]", text.rstrip("/\\"))[-1].removesuffix(".gguf").lower())

    def same(self, other: _ModelName) -> bool:
        return self.name == other.name and (self.org == other.org or None in (self.org, other.org))


def _same_named(first, second) -> bool:
    """Whether two values of a model_config field name one model (an absent one only equals absent)."""
    if isinstance(first, str) and isinstance(second, str):
        return _ModelName.of(first).same(_ModelName.of(second))
    return first == second


def check_one_model(folder: Path, runs: list[TaskRun | GenerativeRun]) -> None:
    """Every file of the run names one model (model and model_path, as :class:`_ModelName` compares
    them): files of two runs, of two models, are never imported as one."""
    configs = model_configs(folder, runs)
    for field in MODEL_FIELDS:  # every pair: a name without an organization matches any organization's
        for (first_where, first), (where, config) in itertools.combinations(configs, 2):
            if not _same_named(first.get(field), config.get(field)):
                raise OlmesError(
                    f"{folder}: {first_where} and {where} name different models ({field} "
                    f"{first.get(field)!r}, {config.get(field)!r}); import the files of one run of one model"
                )


def check_spec_is_their_model(metrics: dict, model: ImportModel) -> None:
    """The model the run names must be the spec's: the spec as written, or the release its identity
    names (a short name's or a GGUF's original). A run that names none contradicts no spec."""
    from olmes.core.identities import UNKNOWN

    theirs = _named_model(metrics)
    original = model.identity["original"]
    ours = [model.spec] + ([original] if original not in (UNKNOWN, model.spec) else [])
    if theirs is None or any(_ModelName.of(theirs).same(_ModelName.of(name)) for name in ours):
        return
    known = f" ({original})" if len(ours) > 1 else ""
    raise OlmesError(
        f"the run evaluated {theirs} (its model_config), not the model of --model-spec {model.spec}"
        f"{known}; give the --model-spec of the model the run evaluated (its hub id, or its folder)"
    )


def their_dtype(model_config: dict) -> str:
    """The precision the run computed in, as its model config says, else ``not recorded``."""
    for value in (model_config.get("dtype"), model_config.get("torch_dtype"),
                  (model_config.get("model_args") or {}).get("dtype")):  # fmt: skip
        if isinstance(value, str) and value not in ("auto", ""):
            return value.removeprefix("torch.")
    return "not recorded"
