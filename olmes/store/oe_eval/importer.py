"""``olmes import oe-eval``: a run of AI2's OLMES implementation -> an ordinary olmes results folder.

Each request of the run is checked against this olmes version's canonical requests byte for byte
(the instances, in the standard's order, then every context and continuation and every gold); its
``sum_logits`` (and ``sum_logits_uncond``) become log-prob files of olmes's format, whose token
counts are recounted here with the model's tokenizer as the engine counts them (the run's
``num_tokens`` is not trusted: docs/oe-eval.md), and olmes's own scoring scores them. The run's
configuration, its reported metrics and how they compare with ours go into each run record
(``imported``), so ``olmes publish`` and ``olmes verify`` treat the result like any other.
An OLMES v0.2 generative task of the run (``drop::olmes``) is checked against olmes's generation
requests and its generations scored by olmes (:mod:`~olmes.store.oe_eval.generative`).

Ambiguity is refused, never resolved by a guess: two lines for one request or one instance, a
prediction of another instance than its doc_id's requests, files that name different models, a run
of another model than ``--model-spec``. Nothing is written until everything is checked and built,
and then it is swapped in whole (:func:`olmes.store.oe_eval.staging.staged_import`).
By job: the run checked (:mod:`~olmes.store.oe_eval.checks`), its model (:mod:`~olmes.store.oe_eval.model`),
its log-probs (:mod:`~olmes.store.oe_eval.logprob_values`), the run records
(:mod:`~olmes.store.oe_eval.run_records`), scores and the comparison (:mod:`~olmes.store.oe_eval.comparison`),
all or nothing (:mod:`~olmes.store.oe_eval.staging`); this module puts them together.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml

from olmes.core.atomic import write_json_atomic
from olmes.core.bounded_json import parse_json
from olmes.core.records import write_records
from olmes.store.canonical import canonical_requests
from olmes.store.layout import LOGPROBS, MODELS_FILE, REQUESTS, logprob_name, requests_name
from olmes.store.oe_eval.checks import ImportedTask, check_runs, run_request_sets
from olmes.store.oe_eval.comparison import score_and_compare
from olmes.store.oe_eval.generative import check_generative_run, import_generative
from olmes.store.oe_eval.logprob_values import logprob_results
from olmes.store.oe_eval.model import (
    ImportModel,
    ImportTarget,
    check_spec_is_their_model,
    their_dtype,
    their_model,
)
from olmes.store.oe_eval.run_records import run_record
from olmes.store.oe_eval.staging import staged_import


def import_run(folder: Path, target: ImportTarget) -> list[str]:
    """Import a run folder; returns one line per task (and one per disagreeing metric). Everything is
    checked and written into a staging folder first; only a finished import changes the output."""
    from olmes.core.identities import qualified_name
    from olmes.logprobs.identity import model_identity
    from olmes.logprobs.models import DTYPES, load_tokenizer

    checked, generative_runs = check_runs(folder, target.data_source)
    generative = [check_generative_run(run) for run in generative_runs]  # all checked before a model loads
    first = (next(iter(checked[0].parts.values()))[0] if checked else generative_runs[0]).metrics
    spec = target.spec or their_model(first)
    resolved, tokenizer, bos = load_tokenizer(spec)
    dtype = their_dtype(first.get("model_config") or {})
    model = ImportModel(
        spec, resolved, tokenizer, bos, dtype, model_identity(resolved, DTYPES.get(dtype, dtype))
    )
    check_spec_is_their_model(first, model)
    display_name = target.display_name or qualified_name(target.model, model.identity)
    target = replace(target, display_name=display_name)  # its lines name the model as the tables will
    lines = []
    tasks = {item.task.key for item in checked} | {item.task.key for item in generative}
    with staged_import(target.output, target.model, tasks) as staging:
        # read under the import's lock, after an interrupted import's models file has been moved in
        models_file = _models_file_with(target.output / MODELS_FILE, target.model, display_name)
        write_json_atomic(staging / MODELS_FILE, models_file)
        for item in checked:
            lines += _import_task(item, target, model, staging)
        for generation in generative:
            lines += import_generative(generation, target, model, staging)
    return lines


def _import_task(item: ImportedTask, target: ImportTarget, model: ImportModel, staging: Path) -> list[str]:
    """One task's requests, log-probs, run records and scores, written into ``staging`` (laid out as
    the output folder); the records name the files where they will be, in the output folder."""
    from olmes.logprobs.runner import write_parquet
    from olmes.logprobs.trie import encode_requests

    files, records = {}, {}
    for request_set in run_request_sets(item):
        rows = list(canonical_requests(item.task.key, request_set, item.limit, target.data_source))
        encoded = encode_requests(
            model.tokenizer, [(r["context"], r["continuation"]) for r in rows], model.bos
        )
        results, differing = logprob_results(item, request_set, rows, [e.num_cont for e in encoded])
        requests_path = staging / REQUESTS / target.model / requests_name(item.task.key, request_set)
        write_records(rows, requests_path)
        output = staging / LOGPROBS / target.model / logprob_name(item.task.key, request_set)
        write_parquet(output, rows, results)  # a pmi row's is_greedy is null: oe-eval does not report it
        files[request_set] = output
        requests_file = target.output / requests_path.relative_to(staging)
        record = run_record(item, request_set, model, requests_path, requests_file, rows)
        record["imported"].update(commit=target.commit, num_tokens_recounted=differing)
        records[request_set] = record
    return score_and_compare(item, target, staging, files, records)


def _models_file_with(path: Path, model: str, display_name: str) -> dict:
    """The results folder's models file with ``model`` listed under ``display_name`` (publish reads
    it): every other entry, and every other key of the model's own (series, training_tokens,
    checkpoint, ...), exactly as the file has them. A models file that does not read is refused."""
    from olmes.tables.results import read_models_file

    if not path.is_file():
        return {"models": [{"name": model, "display_name": display_name}]}
    read_models_file(path)  # the one-line error of a file that is no models file
    text = path.read_text(encoding="utf-8")
    try:
        data = parse_json(text, str(path))  # JSON keeps numbers as written (YAML reads 2e12 as text)
    except ValueError:
        data = yaml.safe_load(text)  # a models file in YAML, which read_models_file reads too
    entries = [dict(entry) for entry in data["models"]]
    mine = next((entry for entry in entries if entry["name"] == model), None)
    if mine is None:
        entries.append({"name": model, "display_name": display_name})
    else:
        mine["display_name"] = display_name
    return {**data, "models": entries}
