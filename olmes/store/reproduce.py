"""Reproduce a published model on this machine: recompute the first N instances of every task it was
published with, and compare request by request with the results store.

One process per model loads the weights once and scores every task x request set of the first N
instances (never from the log-prob cache: the point is to compute them here). Each request's sum
log-prob is compared with the store's (max |delta|, and against the float error model's bound,
olmes/core/numerics.py), and each scoring method's decision per instance is compared with the
decision the store's log-probs give for the same instances. A decision that flips with its two
choices' scores within the error model of each other is a tie within float error, reported apart;
only a flip the model does not explain makes the verdict DIFFERS. The report (format
``olmes.reproduction/2``, docs/file-formats.md) is what ``bash run.sh`` prints and the site shows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from olmes import __version__
from olmes.core.errors import OlmesError
from olmes.core.records import REPRODUCTION_FORMAT, ReproductionReport, write_records
from olmes.logprobs.embedded import SHORT_NAMES
from olmes.logprobs.identity import model_identity
from olmes.logprobs.models import prepare
from olmes.logprobs.options import DTYPE_NAMES, HUB_ID
from olmes.logprobs.runner import hardware, score_file
from olmes.logprobs.spec import parse_model_spec
from olmes.store.canonical import canonical_requests
from olmes.store.generative import reproduce_generations
from olmes.store.layout import (
    LOGPROBS,
    REPRODUCTION_RECORD,
    REQUESTS,
    logprob_name,
    reproduction_folder,
    requests_name,
)
from olmes.store.lock import store_lock
from olmes.store.naming import shown_name
from olmes.store.provenance import compare_task, store_sha256, store_subset, totals
from olmes.store.reading import read_model_record


def reproduce(
    store: Path,
    model: str,
    limit: int,
    workdir: Path,
    cache_root: Path,
    weights: str | None = None,
    dtype: str | None = None,
    device: str | None = None,
    generative_limit: int = 0,
) -> ReproductionReport:
    """Recompute ``model``'s first ``limit`` instances of every published task; return the report.

    ``weights`` is where this machine has the model when the store's spec does not say (a local folder
    is recorded by its name only, olmes/store/portable.py); they must be the store's weights (the same
    content hash, the run records' revision). ``dtype`` and ``device`` default to the store's dtype and
    this machine's device (benchmarks/gpu_check.py compares other precisions). The first
    ``generative_limit`` instances of each generative task (OLMES v0.2) are generated again and
    compared with the store's generations (:func:`olmes.store.generative.compare_generations`)."""
    started = time.perf_counter()
    record = read_model_record(store, model)
    stored = record["dtype"] if record["dtype"] in DTYPE_NAMES else None  # an import may not record it
    plan = prepare(weights or record["spec"], dtype=dtype or stored, device=device)
    if weights is not None and plan.resolved.content_id != record["revision"]:
        raise OlmesError(
            f"{weights} is not the weights of {shown_name(model, record['display_name'])} in {store} "
            f"({plan.resolved.content_id}, the store has "
            f"{record['revision']}); give the folder or file it was published from"
        )
    loaded = plan.load()
    tasks = []
    for task, entry in record["tasks"].items():
        first = min(limit, entry["limit"] or limit)  # a partial result holds only its own first instances
        mine, theirs = {}, {}
        for request_set in entry["requests_sha256"]:
            rows = list(canonical_requests(task, request_set, first, "bundle"))
            requests_path = workdir / REQUESTS / requests_name(task, request_set)
            write_records(rows, requests_path)
            mine[request_set] = workdir / LOGPROBS / logprob_name(task, request_set)
            score_file(loaded, rows, requests_path, mine[request_set], cache_root, use_cache=False)
            theirs[request_set] = store_subset(store, model, task, request_set, first, workdir)
        tasks.append(compare_task(task, first, mine, theirs))
    summed = totals(tasks)
    generative = [
        reproduce_generations(store, model, task, min(generative_limit, entry["limit"] or generative_limit),
                              loaded, workdir, cache_root)
        for task, entry in record.get("generative", {}).items()
        if generative_limit
    ]  # fmt: skip
    report = {
        "format": REPRODUCTION_FORMAT.tag,
        "model": model,
        "spec": record["spec"],
        "limit": limit,
        "hardware": hardware(plan.device),
        "store_hardware": sorted({h for entry in record["tasks"].values() for h in entry["hardware"]}),
        "same_fingerprint": plan.fingerprint == record["fingerprint"],
        "wall_time_s": round(time.perf_counter() - started, 1),
        "requests": summed["requests"],
        "max_abs_delta": summed["max_abs_delta"],
        "max_share_of_tolerance": summed["max_share_of_tolerance"],
        "beyond_tolerance": summed["beyond_tolerance"],
        "decisions": summed["decisions"],
        "identical": summed["identical"],
        "ties_within_error": summed["ties_within_error"],
        "unexplained_flips": summed["unexplained_flips"],
        "verdict": summed["verdict"],
        "tasks": tasks,
        "date": _now(),
        "olmes_commit": olmes_commit(),
        "identity": model_identity(plan.resolved, plan.dtype),
        "store_files": {task["task"]: store_sha256(store, model, task["task"]) for task in tasks},
    }
    if generative:
        report["generative"] = generative
    return report


WEIGHT_FILES = (".safetensors", ".bin", ".gguf")  # the files of a hub repository that are weights


def fit_problem(spec: str, revision: str, max_bytes: int) -> str | None:
    """Why the store model of ``spec`` and ``revision`` cannot be reproduced on a machine that holds
    at most ``max_bytes`` of weights (None: it can): a local folder or GGUF file is named in the store
    by its name only (its weights are not public); a hub model's weight files at the recorded commit
    are sized from the hub's listing before anything is downloaded; an embedded short name is small."""
    parsed = parse_model_spec(spec) if spec in SHORT_NAMES or HUB_ID.match(spec) else None
    if parsed is None:
        return f"its weights are a local {spec!r}, not public; a maintainer who has them uses --weights"
    if parsed.kind == "short-name":
        return None
    commit = revision.rpartition("@")[2] if revision.startswith("hub:") else parsed.revision
    size = hub_weight_bytes(parsed.repo_id, commit)
    if size > max_bytes:
        return (
            f"its weights are {size / 1e9:.1f} GB, more than the {max_bytes / 1e9:.1f} GB this machine holds"
        )
    return None


def hub_weight_bytes(repo_id: str, revision: str | None) -> int:
    """The bytes of a hub repository's weight files at ``revision``, from the hub's file listing."""
    from huggingface_hub import HfApi

    try:
        info = HfApi().model_info(repo_id, revision=revision, files_metadata=True)
    except Exception as exc:  # network, auth, missing repo or revision
        raise OlmesError(f"cannot list {repo_id!r} on the Hugging Face hub: {exc}") from exc
    return sum(file.size or 0 for file in info.siblings if file.rfilename.endswith(WEIGHT_FILES))


def record_reproduction(store: Path, report: ReproductionReport, workdir: Path) -> Path:
    """Write ``report`` and its recomputed log-prob files into the store as the model's reproduction
    record (``reproductions/<model>/``), replacing an earlier one in one rename, under the store's
    lock. Maintainers run this on the base branch; a pull request may not change it."""
    model = report["model"]
    final = reproduction_folder(store, model)
    final.parent.mkdir(parents=True, exist_ok=True)
    with store_lock(store):
        staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{model}.recording-"))
        try:
            for task in report["tasks"]:
                for request_set in report["store_files"][task["task"]]:
                    name = logprob_name(task["task"], request_set)
                    shutil.copyfile(workdir / LOGPROBS / name, staging / name)
            # a record holds what verify can recompute from the files it keeps: the ten tasks' log-probs
            recorded = {key: value for key, value in report.items() if key != "generative"}
            REPRODUCTION_FORMAT.write(staging / REPRODUCTION_RECORD, recorded)
            old = final.parent / f".{model}.old-{staging.name.rsplit('-', 1)[-1]}"
            if final.exists():
                os.rename(final, old)
            os.rename(staging, final)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return final


def olmes_commit() -> str:
    """The git commit of the olmes code running, with ``+changes`` when the package's files differ
    from it (the store a reproduction writes into is data, not code), or its version where it is not
    a git checkout."""
    package = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "-C", str(package), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return f"olmes {__version__} (not a git checkout)"
    changed = subprocess.run(
        ["git", "-C", str(package), "status", "--porcelain", "--untracked-files=no", "--", "."],
        capture_output=True,
        text=True,
    )
    return head.stdout.strip() + ("+changes" if changed.stdout.strip() else "")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
