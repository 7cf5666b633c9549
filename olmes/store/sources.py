"""Where finished results come from: the models of a workflow results folder or of a store, each
with its score summaries, log-prob files and robustness results (layouts: olmes.store.layout)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.core.tasks import TASKS
from olmes.scoring.rotations import ROTATIONS_KIND, ROTATIONS_SUFFIX
from olmes.store.layout import (
    GENERATIVE,
    LOGPROBS,
    MODELS_FILE,
    ROBUSTNESS,
    SCORES,
    SUMMARY_SUFFIX,
    VARIANTS,
    generative_tasks,
    model_folder,
    summary_name,
    summary_tasks,
)
from olmes.store.naming import shown_name
from olmes.store.reading import is_store, model_infos
from olmes.tables.results import ModelInfo, read_models_file


@dataclass(frozen=True)
class RobustnessResult:
    """One robustness result of a model as found in a results folder or a store."""

    kind: str  # a prompt variant's name, or ROTATIONS_KIND
    task: str
    path: Path  # the variant's score summary, or the rotations report
    logprobs: Path  # the folder of its log-prob files
    store: Path | None  # the store it is in (whose blobs/ may hold its log-prob files), None if none


@dataclass(frozen=True)
class Source:
    """One model's finished results: its score summaries and log-prob files, and how to name it."""

    model: str
    scores: Path
    logprobs: Path
    info: ModelInfo
    store: Path | None  # the store it is in (whose blobs/ may hold its log-prob files), None if none

    def tasks(self) -> list[str]:
        found = summary_tasks(self.scores)
        return [task for task in TASKS if task in found]

    def summary_path(self, task: str) -> Path:
        return self.scores / summary_name(task)

    @property
    def generative(self) -> Path:
        """The folder of its OLMES v0.2 generative results (olmes.store.generative): ``generative/`` of
        a store's model folder, ``generative/<model>/`` of a results folder."""
        if self.store is not None:
            return self.scores.parent / GENERATIVE
        return self.scores.parent.parent / GENERATIVE / self.model

    def generative_tasks(self) -> list[str]:
        return generative_tasks(self.generative) if self.generative.is_dir() else []

    def robustness(self, origin: Path) -> list[RobustnessResult]:
        """Each robustness result of this model in ``origin``: a prompt variant's score summaries
        (kind = the variant) and rotations reports."""
        if self.store is not None:  # the model folder holding scores/ (a model folder being built too)
            folders = sorted(p for p in (self.scores.parent / ROBUSTNESS).glob("*") if p.is_dir())
            places = [(folder.name, folder, folder) for folder in folders]
        else:
            variants = sorted(p for p in (origin / VARIANTS).glob("*") if p.is_dir())
            places = [(v.name, v / SCORES / self.model, v / LOGPROBS / self.model) for v in variants]
            places.append((ROTATIONS_KIND, self.scores, self.logprobs))
        found = []
        for kind, folder, logprobs in places:
            suffix = ROTATIONS_SUFFIX if kind == ROTATIONS_KIND else SUMMARY_SUFFIX
            for path in sorted(folder.glob(f"*{suffix}")):
                task = path.name.removesuffix(suffix)
                if task in TASKS:  # a stray summary of no task is not a result (olmes verify names it)
                    found.append(RobustnessResult(kind, task, path, logprobs, self.store))
        return found


def store_source(store: Path, model: str, info: ModelInfo, folder: Path | None = None) -> Source:
    """A store model's results, in its folder or in ``folder`` (a model folder being built)."""
    folder = folder or model_folder(store, model)
    return Source(model, folder / SCORES, folder / LOGPROBS, info, store)


def sources(origin: str | Path, models: list[str] | None = None) -> list[Source]:
    """The models of a workflow results folder (``results/``) or of another store, all or those named."""
    origin = Path(origin)
    store = origin if is_store(origin) else None
    infos, found = _store_models(origin) if store else _results_models(origin)
    for name in models or []:
        if name not in found:
            present = [
                shown_name(model, infos[model].display_name if model in infos else None) for model in found
            ]
            raise OlmesError(
                f"{origin} has no results of model {name!r}; it has: {', '.join(present) or 'none'}"
            )
    return [
        Source(name, *found[name], infos.get(name) or ModelInfo.from_record({"name": name}), store)
        for name in models or list(found)
    ]


Folders = dict[str, tuple[Path, Path]]  # model -> (its score summaries' folder, its log-probs' folder)


def _store_models(store: Path) -> tuple[dict[str, ModelInfo], Folders]:
    infos = {info.name: info for info in model_infos(store)}
    folders = {name: model_folder(store, name) for name in infos}
    return infos, {name: (folder / SCORES, folder / LOGPROBS) for name, folder in folders.items()}


def _results_models(origin: Path) -> tuple[dict[str, ModelInfo], Folders]:
    folders = [origin / SCORES, origin / GENERATIVE]
    if not any(folder.is_dir() for folder in folders):
        raise OlmesError(
            f"{origin} holds no results (no scores/ or generative/ folder); give a results folder or a store"
        )
    models_file = origin / MODELS_FILE
    infos = {info.name: info for info in read_models_file(models_file)} if models_file.is_file() else {}
    names = sorted({p.name for folder in folders if folder.is_dir() for p in folder.iterdir() if p.is_dir()})
    return infos, {name: (origin / SCORES / name, origin / LOGPROBS / name) for name in names}
