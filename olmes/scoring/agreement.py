"""Decisions of two computations of the same log-probs compared, each differing one classified by the
float error model (:mod:`olmes.core.numerics`): a tie within float error, or a difference the model
does not explain. ``olmes reproduce`` compares a recomputation with the store this way."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

import numpy as np

from olmes.core.errors import OlmesError
from olmes.core.methods import Method
from olmes.core.numerics import flip_within_error
from olmes.core.records import Flip
from olmes.scoring.logprob_files import ChoiceTable, read_tables
from olmes.scoring.predictions import available_methods, decide, playable_scores


class DecisionComparison(TypedDict):
    decisions: int
    identical: int
    flips: list[Flip]


def compare_decisions(here: dict[str, Path], there: dict[str, Path]) -> DecisionComparison:
    """Every method's decisions from the log-prob files ``here`` and ``there`` (request set -> path,
    the same requests), and each decision that differs with its margins."""
    mine, theirs = read_tables(**_inputs(here)), read_tables(**_inputs(there))
    decisions, identical, flips = 0, 0, []
    for method in available_methods(*mine):
        a, b = (pair[1] if method.is_mcf else pair[0] for pair in (mine, theirs))
        _same_instances(a, b)
        scores_a = playable_scores(method.choice_scores(a), a)
        scores_b = playable_scores(method.choice_scores(b), b)
        errors = np.maximum(method.choice_errors(a), method.choice_errors(b))
        picks_a, picks_b = decide(scores_a)[0], decide(scores_b)[0]
        decisions += len(picks_a)
        identical += int((picks_a == picks_b).sum())
        for row in np.flatnonzero(picks_a != picks_b):
            x, y = int(picks_a[row]), int(picks_b[row])
            margin_here = float(scores_a[row, x] - scores_a[row, y])
            margin_there = float(scores_b[row, y] - scores_b[row, x])
            bound = float(errors[row, x] + errors[row, y])
            flips.append({
                "method": method.key, "instance_index": int(a.instance_index[row]), "here": x, "there": y,
                "margin_here": margin_here, "margin_there": margin_there, "bound": bound,
                "within_error": bool(flip_within_error(margin_here, margin_there, bound)),
            })  # fmt: skip
    return {"decisions": decisions, "identical": identical, "flips": flips}


def _inputs(paths: dict[str, Path]) -> dict:
    return {f"{request_set}_path": path for request_set, path in paths.items()}


def _same_instances(a: ChoiceTable, b: ChoiceTable) -> None:
    if not np.array_equal(a.instance_index, b.instance_index) or not np.array_equal(
        a.num_choices, b.num_choices
    ):
        raise OlmesError(f"{a.path} and {b.path} hold other instances; compare the same requests")


def flips_against(
    method: Method, table: ChoiceTable, rows: np.ndarray, their_picks: np.ndarray
) -> tuple[int, int]:
    """How many of ``rows``' decisions (positions in ``table``) differ from another implementation's
    ``their_picks``, and how many of those are ties within float error here: the other choice within
    the two scores' bounds of ours (its own margin is not known, so this is the model's necessary
    condition, :func:`olmes.core.numerics.flip_within_error` with a margin of 0 there)."""
    scores = playable_scores(method.choice_scores(table), table)[rows]
    errors = method.choice_errors(table)[rows]
    ours = decide(scores)[0]
    theirs = np.asarray(their_picks, dtype=np.int64)
    differ = np.flatnonzero(ours != theirs)
    if differ.size == 0:
        return 0, 0
    valid = (theirs[differ] >= 0) & (theirs[differ] < table.num_choices[rows][differ])
    a, b = ours[differ], np.where(valid, theirs[differ], 0)
    margin = scores[differ, a] - scores[differ, b]
    within = valid & flip_within_error(margin, 0.0, errors[differ, a] + errors[differ, b])
    return int(differ.size), int(within.sum())
