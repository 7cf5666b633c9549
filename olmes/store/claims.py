"""The claims around a store model's numbers, checked against their one source each: what
``model.json``, the score summaries and the run records say of the model, its weights and its cost.

Why: ``olmes verify`` recomputes every number from the log-probs, but a model record edited after
publish (another display name, another identity, another dtype or hardware) would otherwise be shown
as it stands. Each field is recomputed, or must equal the source it was copied from, or is refused:

- ``model.json``: ``name`` is its folder; ``spec``, ``kind``, ``revision``, ``fingerprint``,
  ``dtype``, ``device`` and ``versions`` are those of its run records; each task's and robustness
  result's ``hardware``, ``wall_time_s`` and ``tokens_forwarded`` are recomputed from its run records
  and the model's totals from those; ``identity`` is its run records' (or, for results made before
  run records carried one, the identity a maintainer's reproduction read from the weights); the
  display name says what the identity is (olmes.store.checks.display_name_problem); ``published``
  is the one fact no file can check (a UTC time, checked for its form). Unknown keys are refused.
- a score summary: its ``model`` is its folder; each input's embedded run record is the run record
  file beside the log-prob file; unknown keys are refused.
- a run record and ``store.json``: unknown keys are refused.

The names of a store's models are one name space: folder names are ASCII (olmes.store.layout.MODEL_NAME)
and unique after case folding, and display names are unique after Unicode normalization (NFKC), case
folding and the mapping of letters that look alike (:data:`CONFUSABLES`), in the store and at publish.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from olmes.core.errors import OlmesError
from olmes.core.identities import recorded_identity
from olmes.core.records import ModelIdentity, ModelRecord, RunRecord, ScoreSummary, StoredTask, StoreRecord
from olmes.store.checks import display_name_problem, run_cost
from olmes.store.layout import MODEL_NAME
from olmes.store.naming import shown_name
from olmes.store.portable import portable_spec
from olmes.store.reading import model_names, read_model_record

FROM_RUNS = (
    "kind",
    "revision",
    "fingerprint",
    "dtype",
    "device",
    "versions",
)  # model.json <- its run records
RUN_FIELD = {"kind": "model_kind", "revision": "model_revision", "fingerprint": "model_fingerprint"}
PUBLISHED = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
# Latin letters' look-alikes in Cyrillic and Greek (after NFKC and case folding), mapped to them
CONFUSABLES = str.maketrans(
    {
        "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
        "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j", "ԁ": "d", "һ": "h", "ԛ": "q",
        "ԝ": "w", "ӏ": "l", "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v",
        "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ϲ": "c",
    }
)  # fmt: skip


def unknown_keys(record: dict, kind: type) -> list[str]:
    """The keys of ``record`` its declaration (a TypedDict) has no field for."""
    return sorted(set(record) - kind.__required_keys__ - kind.__optional_keys__)


def record_problems(
    record: ModelRecord,
    runs: dict[str, list[RunRecord]],
    robustness_runs: dict[tuple[str, str], list[RunRecord]],
    reproduced: ModelIdentity | None,
) -> list[str]:
    """What ``model.json`` claims beyond its sources: ``runs`` are each task's run records,
    ``robustness_runs`` each (kind, task)'s, ``reproduced`` the identity a reproduction read from
    the weights (None: not reproduced)."""
    found = [f"unknown key {key!r}" for key in unknown_keys(record, ModelRecord)]
    every = [run for group in [*runs.values(), *robustness_runs.values()] for run in group]
    if not every:
        return found
    found += _run_field_problems(record, every)
    found += _identity_problems(record, every, reproduced)
    problem = display_name_problem(
        record["display_name"], record.get("identity") or recorded_identity(every) or reproduced
    )
    if problem:
        found.append(problem)
    for task, entry in record["tasks"].items():
        found += _entry_problems(f"tasks.{task}", entry, runs.get(task))
    for kind, entries in record.get("robustness", {}).items():
        for task, entry in entries.items():
            found += _entry_problems(f"robustness.{kind}.{task}", entry, robustness_runs.get((kind, task)))
    entries = [*record["tasks"].values()]
    totals = {
        "wall_time_s": round(sum(entry["wall_time_s"] for entry in entries), 3),
        "tokens_forwarded": sum(entry["tokens_forwarded"] for entry in entries),
    }
    found += [
        f"{key} is {record[key]!r}, its tasks' entries sum to {value!r}"
        for key, value in totals.items()
        if record[key] != value
    ]
    return found


def _run_field_problems(record: ModelRecord, runs: list[RunRecord]) -> list[str]:
    """``spec`` and the fields copied from a run record must be those of one of the model's runs."""
    found = []
    specs = {portable_spec(run["model"]) for run in runs}
    if record["spec"] not in specs:
        found.append(f"spec is {record['spec']!r}, its run records say {' or '.join(sorted(specs))!r}")
    for key in FROM_RUNS:
        values = [run[RUN_FIELD.get(key, key)] for run in runs]
        if record[key] not in values:
            said = " or ".join(sorted({repr(value) for value in values}))
            found.append(f"{key} is {record[key]!r}, its run records say {said}")
    return found


def _identity_problems(
    record: ModelRecord, runs: list[RunRecord], reproduced: ModelIdentity | None
) -> list[str]:
    """The identity must be its run records' (all of one), or, where none carries one, the one a
    reproduction read from the weights; a record may leave out only the latter (results of an olmes
    that recorded no identity). Nothing else confirms an identity, so an unconfirmed one is refused."""
    claimed = record.get("identity")
    identities = [run["identity"] for run in runs if "identity" in run]
    recorded = recorded_identity(runs)
    if any(identity != recorded for identity in identities):
        return ["its run records carry different identities; publish the model from one run again"]
    if recorded is not None and claimed != recorded:
        return [f"identity is {claimed!r}, its run records say {recorded!r}"]
    if recorded is None and claimed is not None and claimed != reproduced:
        if reproduced is None:
            return [
                "identity is in no run record and the model was not reproduced, so nothing confirms it; "
                "a maintainer reproduces it (olmes reproduce --record) or it is published again"
            ]
        return [f"identity is {claimed!r}, its reproduction read {reproduced!r}"]
    return []


def _entry_problems(where: str, entry: StoredTask, runs: list[RunRecord] | None) -> list[str]:
    found = [f"{where}: unknown key {key!r}" for key in unknown_keys(entry, StoredTask)]
    if runs:
        for key, value in run_cost(runs).items():
            if entry[key] != value:
                found.append(f"{where}: {key} is {entry[key]!r}, its run records give {value!r}")
    if not PUBLISHED.match(entry["published"]):
        found.append(f"{where}: published {entry['published']!r} is not a UTC time (YYYY-MM-DDTHH:MM:SSZ)")
    return found


def summary_problems(summary: ScoreSummary, model: str, runs: dict[str, RunRecord | None]) -> list[str]:
    """What a score summary claims beyond its log-probs: its model, its embedded run records."""
    found = [f"unknown key {key!r}" for key in unknown_keys(summary, ScoreSummary)]
    if summary["model"] != model:
        found.append(f"model is {summary['model']!r}, but it is in the folder of model {model!r}")
    for request_set, entry in summary["inputs"].items():
        run = runs.get(request_set)
        if run is not None and entry.get("run") != run:
            found.append(f"inputs.{request_set}.run is not the run record beside its log-prob file")
    return found


def run_problems(run: RunRecord) -> list[str]:
    return [f"unknown key {key!r}" for key in unknown_keys(run, RunRecord)]


def store_record_problems(record: StoreRecord) -> list[str]:
    return [f"unknown key {key!r}" for key in unknown_keys(record, StoreRecord)]


def name_key(text: str) -> str:
    """A name as a reader tells it from others: NFKC, case folded, look-alike letters mapped."""
    return unicodedata.normalize("NFKC", text).casefold().translate(CONFUSABLES)


def name_problems(names: dict[str, str]) -> list[tuple[str, str]]:
    """(model, problem) for each model whose folder name is not a model name, or whose name or display
    name reads as that of a model before it; ``names`` maps each model to its display name."""
    found = [(model, problem) for model in sorted(names) if (problem := _name_problem(model))]
    ordered = sorted(names)
    for index, model in enumerate(ordered):
        clash = next((c for other in ordered[:index] if (c := _clash(model, other, names))), None)
        if clash:
            found.append((model, clash))
    return found


def check_new_name(store: Path, model: str, display_name: str) -> None:
    """``olmes publish``'s check of a model's names against the store's other models, by the rule of
    :func:`name_problems`: what publish lets in, verify passes."""
    names = {name: read_model_record(store, name)["display_name"] for name in model_names(store)}
    names[model] = display_name
    problem = _name_problem(model) or next(
        (c for other in sorted(names) if other != model and (c := _clash(model, other, names))), None
    )
    if problem:
        raise OlmesError(f"{shown_name(model, display_name)} not published: {problem}")


def _name_problem(model: str) -> str | None:
    if MODEL_NAME.match(model):
        return None
    return f"{model!r} is not a model name (ASCII letters, digits, . _ + -, no leading dot)"


def _clash(model: str, other: str, names: dict[str, str]) -> str | None:
    """How ``model``'s names read as ``other``'s (None: they do not); ``other`` is named by its folder
    name (what to rename) and its display name (what a reader sees of it)."""
    shown = f" (display name {names[other]!r})" if names[other] != other else ""
    if name_key(model) == name_key(other):
        return f"its name reads as that of model {other!r}{shown}; rename one of them"
    if name_key(names[model]) == name_key(names[other]):
        return (
            f"its display name {names[model]!r} reads as that of model {other!r}{shown}; rename one of them"
        )
    return None
