"""The results the tables and the site are built from: score summaries and the models file.

:func:`load_scores` reads every ``*.scores.json`` of ``olmes score`` (files or folders) into a
:class:`ScoreSet` indexed by (model, task), with the robustness results beside them (summaries of
prompt variants, ``*.rotations.json`` of ``olmes rotations``), ordered and named by the models file
(:func:`read_models_file`); the predictions behind a summary are read on demand and checked against
the hash the summary recorded. The small readers at the end take one number out of one summary.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
import yaml

from olmes.core.errors import OlmesError
from olmes.core.identities import recorded_identity
from olmes.core.records import ModelIdentity, RotationsReport, ScoreSummary, read_score_summary
from olmes.core.resources import file_sha256
from olmes.core.tasks import STANDARD_VARIANT, TASKS
from olmes.scoring.predictions import read_predictions_file
from olmes.scoring.rotations import ROTATIONS_KIND, ROTATIONS_SUFFIX, read_rotation_report
from olmes.tables.digest import PredictionDigest, digest_of, read_columns
from olmes.tables.render import PARTIAL_MARK

# -- the models file --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelInfo:
    """How the tables name a model and, for Figure 1, which series and training point it is."""

    name: str
    display_name: str
    series: str | None = None
    training_tokens: float | None = None
    checkpoint: str | None = None
    paper_model: str | None = None  # the OLMES paper model this one regenerates (olmes.tables.reported)
    identity: ModelIdentity | None = None  # what the model is (olmes.logprobs.identity); None: not recorded
    # a store model's provenance level (olmes.store.provenance): "reproduced" or "submitted"; None: not
    # read from a store. The store's reading of its records: never written into a model's own entry
    provenance: str | None = None

    @classmethod
    def from_record(cls, record: object, where: str = "model", *, other_keys: bool = False) -> ModelInfo:
        """A model's display info from a dict: an entry of a models file, a store's ``model.json`` or
        a model of the tables' ``index.json``. The one place its rules are written: ``name`` (the
        ``--model-name`` of ``olmes score``) is required, ``display_name`` defaults to it, ``series``
        and ``checkpoint`` are text, ``training_tokens`` is a positive number; a key that is not one of
        these is an error, unless ``other_keys`` (a record that holds more than the display info)."""
        if not isinstance(record, dict) or not isinstance(record.get("name"), str):
            raise OlmesError(f"{where} needs a 'name' (the --model-name given to olmes score)")
        unknown = set(record) - _MODEL_KEYS
        if unknown and not other_keys:
            raise OlmesError(f"{where} has unknown key(s) {sorted(unknown)}; allowed: {sorted(_MODEL_KEYS)}")
        return cls(
            name=record["name"],
            display_name=str(record.get("display_name") or record["name"]),
            series=None if record.get("series") is None else str(record["series"]),
            training_tokens=_training_tokens(record.get("training_tokens"), where),
            checkpoint=None if record.get("checkpoint") is None else str(record["checkpoint"]),
            paper_model=_paper_model(record.get("paper_model"), where),
            identity=_identity(record.get("identity"), where),
            provenance=_provenance(record.get("provenance"), where),
        )

    def entry(self) -> dict:
        """The fields that are set, in field order: a models-file entry (and a ``model.json``'s), without
        the provenance (the store's reading of its records, not a claim of the model's)."""
        return {key: value for key, value in vars(self).items() if value is not None and key != "provenance"}


_MODEL_KEYS = set(ModelInfo.__dataclass_fields__)


def _paper_model(value, where: str) -> str | None:
    """A paper model's name as the paper prints it (one of :data:`olmes.tables.reported.PAPER_MODELS`)."""
    if value is None:
        return None
    from olmes.tables.reported import PAPER_MODELS

    if value not in PAPER_MODELS:
        raise OlmesError(
            f"{where}: paper_model {value!r} is not a model of the OLMES paper (v2); "
            f"one of: {', '.join(PAPER_MODELS)}"
        )
    return value


PROVENANCE_LEVELS = ("reproduced", "submitted")


def _provenance(value, where: str) -> str | None:
    if value is not None and value not in PROVENANCE_LEVELS:
        raise OlmesError(f"{where}: provenance {value!r} is not one of {', '.join(PROVENANCE_LEVELS)}")
    return value


def _identity(value, where: str) -> ModelIdentity | None:
    """A model identity record: every field of :class:`olmes.core.records.ModelIdentity`, as text."""
    if value is None:
        return None
    fields = ModelIdentity.__required_keys__
    texts = isinstance(value, dict) and all(isinstance(item, str) for item in value.values())
    if not texts or set(value) != fields:
        raise OlmesError(f"{where}: identity must have exactly the text fields {sorted(fields)}")
    return value


def identity_of_runs(summaries: Iterable[ScoreSummary]) -> ModelIdentity | None:
    """The identity the run records behind a model's summaries carry (None when none does)."""
    return recorded_identity(entry["run"] for summary in summaries for entry in summary["inputs"].values())


def read_models_file(path: str | Path) -> list[ModelInfo]:
    """Read the models file (YAML or JSON): ``models:`` a list of {name, display_name, series,
    training_tokens, checkpoint}; only ``name`` (the ``--model-name`` of ``olmes score``) is required."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise OlmesError(f"{path}: cannot read models file ({error})") from error
    entries = data.get("models") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise OlmesError(f"{path}: expected a top-level 'models:' list; see docs/file-formats.md")
    models, seen = [], set()
    for position, entry in enumerate(entries):
        where = f"{path}: models[{position}]"
        info = ModelInfo.from_record(entry, where)
        if info.name in seen:
            raise OlmesError(f"{where}: model {info.name!r} is listed twice")
        seen.add(info.name)
        models.append(info)
    return models


def _training_tokens(value, where: str) -> float | None:
    """A positive number; strings such as "2.0e12" are accepted because YAML 1.1 reads them as text."""
    if value is None:
        return None
    try:
        number = float(value) if not isinstance(value, bool) else -1.0
    except ValueError:
        number = -1.0
    if not number > 0:
        raise OlmesError(f"{where}: training_tokens must be a positive number (e.g. 2.0e12), got {value!r}")
    return number


# -- score summaries --------------------------------------------------------------------------------


@dataclass
class ScoreSet:
    """Every score summary given to ``olmes tables`` (or ``olmes site``), indexed by (model, task)."""

    summaries: dict[tuple[str, str], ScoreSummary]
    paths: dict[tuple[str, str], Path]
    models: list[ModelInfo]
    tasks: list[str]
    variants: dict[tuple[str, str, str], ScoreSummary] = field(default_factory=dict)  # (model, task, variant)
    rotations: dict[tuple[str, str], RotationsReport] = field(default_factory=dict)  # olmes rotations reports
    robustness_paths: dict[tuple[str, ...], Path] = field(default_factory=dict)  # of the two above
    _digests: dict[tuple[str, str], PredictionDigest] = field(default_factory=dict)

    def get(self, model: str, task: str) -> ScoreSummary | None:
        return self.summaries.get((model, task))

    def model_is_partial(self, model: str) -> bool:
        return any(s["partial"] for (name, _), s in self.summaries.items() if name == model)

    def complete_on_all_tasks(self, model: str) -> bool:
        """Every task of the registry scored, none partial: the condition for an average."""
        found = [self.get(model, task) for task in TASKS]
        return all(s is not None and not s["partial"] for s in found)

    def predictions(self, model: str, task: str) -> pd.DataFrame:
        """The per-instance predictions behind a summary, checked against the hash it recorded (read
        each time: a store of hundreds of models does not fit in memory; the tables use :meth:`digest`)."""
        return read_predictions(self.summaries[(model, task)], self.paths[(model, task)])

    def digest(self, model: str, task: str) -> PredictionDigest:
        """What the tables need of a summary's predictions (olmes/tables/digest.py), cached by content."""
        key = (model, task)
        if key not in self._digests:
            read = lambda: read_columns(checked_predictions_path(self.summaries[key], self.paths[key]))  # noqa: E731
            self._digests[key] = digest_of(self.summaries[key], self.paths[key], read)
        return self._digests[key]

    def variant_predictions(self, model: str, task: str, variant: str) -> pd.DataFrame:
        key = (model, task, variant)
        return read_predictions(self.variants[key], self.robustness_paths[key])


def read_predictions(summary: ScoreSummary, where: Path) -> pd.DataFrame:
    """The per-instance predictions a summary points to, checked against the hash it recorded."""
    return read_predictions_file(checked_predictions_path(summary, where))


def checked_predictions_path(summary: ScoreSummary, where: Path) -> Path:
    """The predictions file a summary (read from ``where``) points to, checked against its recorded hash."""
    record = summary.get("predictions") or {}
    path = where.parent / record.get("path", "")
    if not record.get("path") or not path.is_file():
        raise OlmesError(f"{where}: predictions file {path} not found; re-run olmes score")
    if file_sha256(path) != record.get("sha256"):
        raise OlmesError(f"{path} changed after {where} was written; re-run olmes score")
    return path


def expand_score_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Summary files as given, and directories searched recursively for ``*.scores.json`` and
    ``*.rotations.json``."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted([*path.rglob("*.scores.json"), *path.rglob(f"*{ROTATIONS_SUFFIX}")])
        elif path.suffix == ".parquet":
            raise OlmesError(
                f"{path} is a predictions file; pass the *.scores.json summaries (they point to it)"
            )
        elif path.is_file():
            found.append(path)
        else:
            raise OlmesError(f"{path}: no such score summary file or directory")
    if not found:
        raise OlmesError("no score summaries found; give *.scores.json files written by olmes score")
    return found


def load_scores(
    paths: Iterable[str | Path], models_file: str | Path | list[ModelInfo] | None = None
) -> ScoreSet:
    """The summaries under ``paths``, ordered and named by a models file (or a list of ModelInfo)."""
    summaries, where, variants, rotations, robustness = {}, {}, {}, {}, {}
    for path in expand_score_paths(paths):
        if path.name.endswith(ROTATIONS_SUFFIX):
            report, kind = read_rotation_report(path), ROTATIONS_KIND
        else:
            report = read_score_summary(path)
            kind = report.get("variant", STANDARD_VARIANT)
        key = (report["model"], report["task"])
        full_key, paths_of = (key, where) if kind == STANDARD_VARIANT else ((*key, kind), robustness)
        if full_key in paths_of:
            what = {STANDARD_VARIANT: "scores", ROTATIONS_KIND: "rotations"}.get(kind, f"{kind} scores")
            raise OlmesError(
                f"{path} and {paths_of[full_key]} both hold {what} of model {key[0]!r} on {key[1]}; keep one"
            )
        paths_of[full_key] = path
        if kind == STANDARD_VARIANT:
            summaries[key] = report
        elif kind == ROTATIONS_KIND:
            rotations[key] = report
        else:
            variants[full_key] = report
    if isinstance(models_file, list):
        listed = models_file
    else:
        listed = read_models_file(models_file) if models_file else []
    names = {info.name for info in listed}
    extra = sorted({model for model, _ in summaries} - names)
    models = [info for info in listed if any(m == info.name for m, _ in summaries)]
    models += [ModelInfo.from_record({"name": name}) for name in extra]
    models = [
        info
        if info.identity is not None
        else replace(info, identity=identity_of_runs(s for (m, _), s in summaries.items() if m == info.name))
        for info in models
    ]
    tasks = [task for task in TASKS if any(t == task for _, t in summaries)]
    alone = sorted({key[0] for key in robustness} - {model for model, _ in summaries})
    if alone:
        raise OlmesError(
            f"{robustness[next(k for k in robustness if k[0] == alone[0])]}: robustness results of model "
            f"{alone[0]!r} need its standard score summaries too; give them"
        )
    return ScoreSet(summaries, where, models, tasks, variants, rotations, robustness)


# -- one number out of one summary ------------------------------------------------------------------


def task_name(task: str) -> str:
    return TASKS[task].display_name


def task_short_name(task: str) -> str:
    """Column label of the LaTeX tables, short as in the paper so ten tasks fit across a page."""
    return TASKS[task].short_name


PARTIAL_GROUP = "Partial runs (a limit or missing instances; not OLMES scores)"
PARTIAL_NOTE = (
    f"{PARTIAL_MARK} marks a partial result (a limit, or fewer instances than the standard); "
    f"averages need all {len(TASKS)} tasks, none partial."
)


def recommended_method(task: str) -> str:
    return TASKS[task].recommended_method.key


def method_accuracy(summary: ScoreSummary | None, method: str) -> float | None:
    if summary is None or method not in summary["methods"]:
        return None
    return summary["methods"][method]["accuracy"]


def best_of_two_score(summary: ScoreSummary | None) -> float | None:
    return None if summary is None or summary.get("best_of_two") is None else summary["best_of_two"]["score"]


def best_of_two_stderr(summary: ScoreSummary | None) -> float | None:
    """The standard error of the method that decided the best-of-two score."""
    best = summary and summary.get("best_of_two")
    if not best:
        return None
    return summary["methods"][best["method"]].get("stderr")
