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

import time
from pathlib import Path

import numpy as np
import pandas as pd

from olmes.core.errors import OlmesError
from olmes.core.numerics import share_of_tolerance
from olmes.core.records import REPRODUCTION_FORMAT, ReproducedTask, ReproductionReport, write_records
from olmes.logprobs.models import prepare
from olmes.logprobs.options import DTYPE_NAMES
from olmes.logprobs.runner import hardware, score_file
from olmes.scoring.agreement import compare_decisions
from olmes.store.blobs import model_logprob_file
from olmes.store.canonical import canonical_requests
from olmes.store.layout import LOGPROBS, REQUESTS, logprob_name, requests_name
from olmes.store.reading import read_model_record

KEY = ["instance_index", "choice", "unconditional"]


def reproduce(
    store: Path,
    model: str,
    limit: int,
    workdir: Path,
    cache_root: Path,
    weights: str | None = None,
    dtype: str | None = None,
    device: str | None = None,
) -> ReproductionReport:
    """Recompute ``model``'s first ``limit`` instances of every published task; return the report.

    ``weights`` is where this machine has the model when the store's spec does not say (a local folder
    is recorded by its name only, olmes/store/portable.py); they must be the store's weights (the same
    content hash, the run records' revision). ``dtype`` and ``device`` default to the store's dtype and
    this machine's device (benchmarks/gpu_check.py compares other precisions)."""
    started = time.perf_counter()
    record = read_model_record(store, model)
    stored = record["dtype"] if record["dtype"] in DTYPE_NAMES else None  # an import may not record it
    plan = prepare(weights or record["spec"], dtype=dtype or stored, device=device)
    if weights is not None and plan.resolved.content_id != record["revision"]:
        raise OlmesError(
            f"{weights} is not the weights of {model} in {store} ({plan.resolved.content_id}, the store has "
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
            theirs[request_set] = _store_subset(store, model, task, request_set, first, workdir)
        tasks.append(_compare_task(task, first, mine, theirs))
    unexplained = sum(t["unexplained_flips"] for t in tasks)
    ties = sum(t["ties_within_error"] for t in tasks)
    return {
        "format": REPRODUCTION_FORMAT,
        "model": model,
        "spec": record["spec"],
        "limit": limit,
        "hardware": hardware(plan.device),
        "store_hardware": sorted({h for entry in record["tasks"].values() for h in entry["hardware"]}),
        "same_fingerprint": plan.fingerprint == record["fingerprint"],
        "wall_time_s": round(time.perf_counter() - started, 1),
        "requests": sum(t["requests"] for t in tasks),
        "max_abs_delta": max(t["max_abs_delta"] for t in tasks),
        "max_share_of_tolerance": max(t["max_share_of_tolerance"] for t in tasks),
        "beyond_tolerance": sum(t["beyond_tolerance"] for t in tasks),
        "decisions": sum(t["decisions"] for t in tasks),
        "identical": sum(t["identical"] for t in tasks),
        "ties_within_error": ties,
        "unexplained_flips": unexplained,
        "verdict": "DIFFERS" if unexplained else "reproduced within float error" if ties else "reproduced",
        "tasks": tasks,
    }


def _store_subset(store: Path, model: str, task: str, request_set: str, limit: int, workdir: Path) -> Path:
    """The store's log-prob rows of the first ``limit`` instances, as a log-prob file of their own."""
    frame = pd.read_parquet(model_logprob_file(store, model, task, request_set))
    path = workdir / "store" / logprob_name(task, request_set)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame[frame["instance_index"] < limit].to_parquet(path, index=False)
    return path


def _compare_task(
    task: str, instances: int, mine: dict[str, Path], theirs: dict[str, Path]
) -> ReproducedTask:
    deltas, shares = [], []
    for request_set in mine:
        here, there = pd.read_parquet(mine[request_set]), pd.read_parquet(theirs[request_set])
        joined = here.merge(there, on=KEY, how="outer", suffixes=("", "_store"), indicator=True)
        if (joined["_merge"] != "both").any():
            raise OlmesError(
                f"{task} {request_set}: the requests recomputed here are not the store's; "
                "re-publish the model with this olmes version"
            )
        deltas.append(np.abs(joined["sum_logprob"] - joined["sum_logprob_store"]).to_numpy())
        shares.append(
            share_of_tolerance(joined["sum_logprob"], joined["sum_logprob_store"], joined["num_tokens"])
        )
    share = np.concatenate(shares)
    compared = compare_decisions(mine, theirs)
    flips = compared["flips"]
    return {
        "instances": instances,
        "task": task,
        "requests": len(share),
        "max_abs_delta": float(np.concatenate(deltas).max()),
        "max_share_of_tolerance": float(share.max()),
        "beyond_tolerance": int((share > 1).sum()),
        "decisions": compared["decisions"],
        "identical": compared["identical"],
        "ties_within_error": sum(flip["within_error"] for flip in flips),
        "unexplained_flips": sum(not flip["within_error"] for flip in flips),
        "differing_methods": sorted({flip["method"] for flip in flips}),
        "flips": flips,
    }


def summary_lines(report: ReproductionReport) -> list[str]:
    """The comparison as the main job prints it: one line per task, each flipped decision with its
    margins, then the verdict."""
    model, limit, where = report["model"], report["limit"], report["hardware"]
    lines = [f"{model}: first {limit} instances of each task recomputed here ({where})"]
    for task in report["tasks"]:
        lines.append(
            f"  {task['task']:<14} {task['requests']:>5} requests"
            f"  max |delta logprob| {task['max_abs_delta']:.2e}"
            f" ({task['max_share_of_tolerance']:.2f} of the bound)"
            f"  decisions {task['identical']}/{task['decisions']} identical"
        )
        for flip in task["flips"]:
            kind = "tie within float error" if flip["within_error"] else "NOT explained by float error"
            lines.append(
                f"    {flip['method']} instance {flip['instance_index']}: {kind} (choice {flip['here']} "
                f"by {flip['margin_here']:.1e} here, {flip['there']} by {flip['margin_there']:.1e} in the "
                f"store; bound {flip['bound']:.1e})"
            )
    lines.append(
        f"  {report['verdict']}: {report['identical']}/{report['decisions']} decisions identical"
        + (f", {report['ties_within_error']} ties within float error" if report["ties_within_error"] else "")
        + (f", {report['unexplained_flips']} not explained" if report["unexplained_flips"] else "")
        + f"; max |delta logprob| {report['max_abs_delta']:.2e} over {report['requests']} requests "
        f"({report['max_share_of_tolerance']:.2f} of the error model's bound"
        + (f", {report['beyond_tolerance']} beyond it" if report["beyond_tolerance"] else "")
        + f"), {report['wall_time_s']:.0f} s"
    )
    return lines
