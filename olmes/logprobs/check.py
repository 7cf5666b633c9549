"""``olmes check-model``: is the engine's fast (tree) path exact for this model, and which path will score it.

The same comparison as tests/test_architectures.py, on the actual model: about 50 real OLMES requests
(a shared 5-shot prefix, an instance's choices, pmi rows, MCF letters, WinoGrande's shared
continuation) scored on the tree path, at a chunk smaller than a request (so the cached root path is
used) and at the model's default chunk, against each request scored alone (the leaves path one
sequence per call: plain causal attention, nothing packed). A user adding an unusual model runs it
first. The answer does not change the path: that comes from the verified list
(:mod:`olmes.logprobs.architectures`); a model of a listed architecture whose check fails is reported
as an error, for the list to be corrected.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from olmes.core.errors import OlmesError
from olmes.core.numerics import COVERED_DTYPES, share_of_tolerance
from olmes.core.records import CheckReport
from olmes.logprobs.architectures import LEAVES, TREE
from olmes.logprobs.engine import score
from olmes.logprobs.models import LoadedModel, ModelPlan

SMALL_CHUNK = 64


def checkable(plan: ModelPlan) -> bool:
    """Whether the plan's precision is one the float error model covers (float32)."""
    return str(plan.dtype).removeprefix("torch.") in COVERED_DTYPES


def check_model(plan: ModelPlan, pairs: list[tuple[str, str]]) -> CheckReport:
    """Score ``pairs`` (the real requests of :func:`olmes.cli.model_check.check_pairs`) both ways with
    ``plan``'s model and compare."""
    if not checkable(plan):
        raise OlmesError(f"check-model compares in float32 (the error model's precision), not "
                         f"{plan.dtype}: run it with --dtype float32")  # fmt: skip
    lm: LoadedModel = plan.load()
    alone = score(dataclasses.replace(lm, scoring_path=LEAVES), pairs, max_batch_tokens=1)
    delta, share, flips, error = None, None, None, None
    try:
        for chunk in (SMALL_CHUNK, None):
            tree = score(dataclasses.replace(lm, scoring_path=TREE), pairs, max_batch_tokens=chunk)
            delta = max(delta or 0.0, float(np.abs(tree.sum_logprob - alone.sum_logprob).max()))
            shares = share_of_tolerance(tree.sum_logprob, alone.sum_logprob, alone.num_tokens)
            share = max(share or 0.0, float(shares.max()))
            flips = max(flips or 0, int((tree.is_greedy != alone.is_greedy).sum()))
    except Exception as exc:  # noqa: BLE001 - a model's own code may fail on the tree's 4-D mask in any way
        delta, share, flips, error = (
            None,
            None,
            None,
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
        )
    exact = error is None and share <= 1 and flips == 0
    return {
        "model": lm.resolved.spec,
        "model_type": plan.config.get("model_type", ""),
        "requests": len(pairs),
        "tree_max_delta": delta,
        "tree_max_share": share,
        "tree_greedy_flips": flips,
        "tree_error": error,
        "tree_exact": exact,
        "scoring_path": lm.scoring_path,
        "scoring_reason": lm.scoring_reason,
        "ok": exact or lm.scoring_path != TREE,
    }


def summary_line(report: CheckReport) -> str:
    """The answer in one line."""
    head = f"{report['model']} ({report['model_type']}): the fast tree path"
    if report["tree_error"] is not None:
        found = f"{head} fails on it ({report['tree_error']})"
    else:
        verdict = "is exact" if report["tree_exact"] else "is NOT exact"
        found = (
            f"{head} {verdict} on {report['requests']} requests (max |delta| {report['tree_max_delta']:.1e} "
            f"nats, {report['tree_max_share']:.2f} of the float error model's bound, "
            f"{report['tree_greedy_flips']} greedy flags differ)"
        )
    if report["scoring_path"] == TREE:
        then = (
            "olmes scores it on the tree path"
            if report["ok"]
            else (
                "yet its architecture is on the verified list: do not trust its scores, report it "
                "(olmes/logprobs/architectures.py)"
            )
        )
    else:
        then = f"olmes scores it on the safe leaves path (each leaf whole): {report['scoring_reason']}"
    return f"{found}; {then}"
