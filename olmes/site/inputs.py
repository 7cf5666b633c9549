"""What the site reads: score summaries (+ predictions), the tables folder, and request files.

- Score summaries and their predictions Parquet come through :func:`olmes.tables.load_scores`, so
  the site checks the same hashes the tables do.
- The tables folder (``olmes tables --out``) gives the paper's tables, the figure data and the
  paired bootstrap; its ``index.json`` records the SHA-256 of every summary it was built from, and a
  folder built from other summaries is refused. Without a folder the site builds the tables itself
  with the same function ``olmes tables`` uses.
- Request files (``olmes requests --output``, JSON lines) give the exact prompts and, for the
  instance browser, each instance's question and choices. They are read as a stream and only the
  query part of each context is kept (the shared few-shot prefix is stored once per task/subject).
"""

from __future__ import annotations

import gzip
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from olmes.errors import OlmesError
from olmes.scoring import file_sha256
from olmes.tables import ModelInfo, Scores, build_tables, load_scores

TABLE_KEYS = (
    "table3_normalizations",
    "table4_olmes",
    "table6_cf",
    "table7_mcf",
    "table8_mmlu",
    "table9_none",
    "table10_token",
    "table11_char",
    "table12_pmi",
    "near_ties",
    "paired_bootstrap",
)
FIGURE_KEYS = ("figure1_checkpoints", "figure2_cf_vs_mcf")
ANSWER_SUFFIX = "\nAnswer:"


# -- scores and tables ------------------------------------------------------------------------------


@dataclass
class TableSet:
    """The paper's tables as ``table_json`` dicts, the figure rows, and where they came from."""

    tables: dict[str, dict]
    figures: dict[str, list[dict]]
    folder: Path
    index: dict = field(default_factory=dict)

    def get(self, key: str) -> dict | None:
        return self.tables.get(key)


def load_site_scores(
    score_paths: list[str | Path], models_file: str | Path | None, tables_dir: Path | None, scratch: Path
):
    """Summaries (ordered and named by the models file, else by the tables' index) and the tables.

    Without ``tables_dir`` the tables are built with ``olmes.tables.build_tables`` into ``scratch``
    (the site's downloads folder), exactly as ``olmes tables`` would write them.
    """
    scores = load_scores(score_paths, models_file)
    if tables_dir is None:
        build_tables(scores, scratch)
        tables_dir = scratch
    tables = read_tables(tables_dir)
    check_tables_match(scores, tables)
    if models_file is None and tables.index.get("models"):
        scores.models = _models_from_index(scores, tables.index["models"])
    return scores, tables


def _models_from_index(scores: Scores, listed: list[dict]) -> list[ModelInfo]:
    present = {model for model, _ in scores.summaries}
    known = set(ModelInfo.__dataclass_fields__)
    models = [ModelInfo(**{k: v for k, v in entry.items() if k in known}) for entry in listed]
    models = [info for info in models if info.name in present]
    named = {info.name for info in models}
    return models + [info for info in scores.models if info.name not in named]


def read_tables(folder: Path) -> TableSet:
    folder = Path(folder)
    index_path = folder / "index.json"
    if not index_path.is_file():
        raise OlmesError(
            f"{folder}: no index.json; build the tables first with `olmes tables --out {folder}`"
        )
    index = _read_json(index_path)
    tables, figures = {}, {}
    for key in TABLE_KEYS:
        path = folder / f"{key}.json"
        if not path.is_file():
            raise OlmesError(f"{path} missing; re-run `olmes tables --out {folder}`")
        tables[key] = _read_json(path)
    for key in FIGURE_KEYS:
        path = folder / f"{key}.json"
        figures[key] = _read_json(path).get("rows", []) if path.is_file() else []
    return TableSet(tables=tables, figures=figures, folder=folder, index=index)


def check_tables_match(scores: Scores, tables: TableSet) -> None:
    """The tables folder must have been built from exactly these summaries (by SHA-256)."""
    recorded = {(row["model"], row["task"]): row.get("sha256") for row in tables.index.get("inputs", [])}
    for key, path in sorted(scores.paths.items()):
        if key not in recorded:
            raise OlmesError(
                f"{tables.folder} was built without {path} ({key[0]} on {key[1]}); re-run `olmes tables`"
            )
        if recorded[key] != file_sha256(path):
            raise OlmesError(f"{path} changed after {tables.folder} was built; re-run `olmes tables`")
    extra = sorted(set(recorded) - set(scores.paths))
    if extra:
        model, task = extra[0]
        raise OlmesError(
            f"{tables.folder} includes {model} on {task}, which is not among the score summaries given; "
            "pass the same --scores to `olmes tables` and `olmes site`"
        )


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise OlmesError(f"{path}: cannot read JSON ({error})") from error


# -- requests ---------------------------------------------------------------------------------------


@dataclass
class RequestInstance:
    index: int
    native_id: str
    label: int
    subject: str | None
    queries: list[str]  # per choice: the context without the shared few-shot prefix
    continuations: list[str]


@dataclass
class TaskRequests:
    """One task x formulation's requests, reduced to what the site shows."""

    task: str
    formulation: str
    path: Path
    instances: dict[int, RequestInstance]
    prefixes: dict[str | None, str]  # per subject (None for tasks without): instruction + shots
    example: list[dict]  # every row (conditional and unconditional) of the first instance
    unconditional: bool = False

    def prefix(self, subject: str | None) -> str:
        return self.prefixes.get(subject, "")


def expand_request_paths(paths: list[str | Path]) -> list[Path]:
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.name.endswith((".jsonl", ".jsonl.gz")))
        elif path.is_file():
            found.append(path)
        else:
            raise OlmesError(f"{path}: no such request file or directory")
    return found


def _open_text(path: Path):
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_requests_file(path: Path) -> TaskRequests | None:
    """Stream one JSONL request file. Returns None for an empty file."""
    instances: dict[int, RequestInstance] = {}
    contexts: dict[int, list[str]] = {}
    example: list[dict] = []
    first_index = None
    task = formulation = None
    unconditional = False
    try:
        with _open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    row_task, row_form = row["task"], row["formulation"]
                    index, choice = int(row["instance_index"]), int(row["choice"])
                    context, continuation = row["context"], row["continuation"]
                except (ValueError, KeyError, TypeError) as error:
                    raise OlmesError(f"{path}:{number}: not an olmes request row ({error})") from error
                if task is None:
                    task, formulation, first_index = row_task, row_form, index
                elif (row_task, row_form) != (task, formulation):
                    raise OlmesError(
                        f"{path}:{number}: mixes {task}/{formulation} with {row_task}/{row_form}"
                    )
                if index == first_index:
                    example.append(row)
                if row.get("unconditional"):
                    unconditional = True
                    continue
                item = instances.get(index)
                if item is None:
                    item = instances[index] = RequestInstance(
                        index=index,
                        native_id=str(row.get("native_id", index)),
                        label=int(row["label"]),
                        subject=row.get("subject"),
                        queries=[],
                        continuations=[],
                    )
                    contexts[index] = []
                if choice != len(item.continuations):
                    raise OlmesError(f"{path}:{number}: instance {index} choice {choice} out of order")
                previous = contexts[index]
                previous.append(previous[-1] if previous and previous[-1] == context else context)
                item.continuations.append(continuation)
    except OSError as error:
        raise OlmesError(f"{path}: cannot read requests ({error})") from error
    if task is None:
        return None
    prefixes = _shared_prefixes(instances, contexts)
    for index, item in instances.items():
        cut = len(prefixes.get(item.subject, ""))
        item.queries = [context[cut:] for context in contexts[index]]
    return TaskRequests(task, formulation, path, instances, prefixes, example, unconditional)


def _shared_prefixes(instances: dict[int, RequestInstance], contexts: dict[int, list[str]]) -> dict:
    """Instruction + shots per subject: the common prefix of every context, cut after its last blank line.

    With a single context the prefix ends at the context's last blank line (the shots end in one).
    """
    groups: dict[str | None, list[str]] = {}
    for index, item in instances.items():
        groups.setdefault(item.subject, []).extend(contexts[index])
    prefixes = {}
    for subject, texts in groups.items():
        common = os.path.commonprefix([min(texts), max(texts)])
        cut = common.rfind("\n\n")
        prefixes[subject] = common[: cut + 2] if cut >= 0 else ""
    return prefixes


def load_requests(paths: list[str | Path]) -> dict[tuple[str, str], TaskRequests]:
    """Every request file, keyed by (task, formulation); of two files for one key the larger wins."""
    found: dict[tuple[str, str], TaskRequests] = {}
    for path in expand_request_paths(paths):
        requests = read_requests_file(path)
        if requests is None:
            continue
        key = (requests.task, requests.formulation)
        if key not in found or len(requests.instances) > len(found[key].instances):
            found[key] = requests
    return found


# -- the instance browser's view of one instance ---------------------------------------------------

_CHOICE_LINE = "\n {letter}. "


def mcf_parts(query: str, count: int) -> tuple[str, list[str]] | None:
    """Split an MCF query into its stem and the choice texts of its ``count`` lines, or None."""
    if not query.endswith(ANSWER_SUFFIX) or count < 1:
        return None
    body = query[: -len(ANSWER_SUFFIX)]
    starts = []
    search_end = len(body)
    for position in range(count - 1, -1, -1):
        marker = _CHOICE_LINE.format(letter=chr(ord("A") + position))
        start = body.rfind(marker, 0, search_end)
        if start < 0:
            return None
        starts.insert(0, start)
        search_end = start
    texts = []
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(body)
        texts.append(body[start + len(_CHOICE_LINE.format(letter="A")) : end])
    return body[: starts[0]], texts


def instance_view(cf: RequestInstance | None, mcf: RequestInstance | None) -> dict:
    """Question and choices as shown to a reader: MCF's stem and choice lines where there is an MCF
    request (the texts the model saw listed), else the CF query and continuations."""
    base = cf or mcf
    question, choices = None, None
    if mcf is not None:
        parts = mcf_parts(mcf.queries[0], len(mcf.queries))
        if parts is not None:
            question, choices = parts
    if question is None and cf is not None:
        question = cf.queries[0]
        if len(set(cf.queries)) > 1:  # WinoGrande: the options differ in the context
            question = os.path.commonprefix(cf.queries) + "_" + cf.continuations[0]
        question = question.removesuffix(ANSWER_SUFFIX)
    if choices is None and cf is not None:
        if len(set(cf.continuations)) > 1:
            choices = [text[1:] if text.startswith(" ") else text for text in cf.continuations]
        else:
            common = len(os.path.commonprefix(cf.queries))
            choices = [query[common:] for query in cf.queries]
    if question is None:
        question = base.queries[0].removesuffix(ANSWER_SUFFIX)
        choices = [text.strip() for text in base.continuations]
    return {"question": re.sub(r"\s+$", "", question), "choices": choices}
