"""The scoring methods: one registry that scoring, the predict jobs, flags, tables and the site iterate.

A method turns a model x task's log-probs into one decision per instance: it scores every choice
(:meth:`Method.choice_scores`, the formula it states in words) and the best score wins. There are
five: the cloze formulation (CF) under each of the four normalizations of docs/standard.md section 3,
and the multiple-choice formulation (MCF). Words used throughout: a *formulation* is CF or MCF; a *request
set* is a kind of request file (``cf``, ``pmi``, ``mcf``, ``mcf_rot``); a *method* is a formulation
with, for CF, its normalization. Each method names the request sets it reads, so the workflow asks
for exactly those files.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from olmes.core.errors import OlmesError
from olmes.core.numerics import logprob_tolerance

Formulation = Literal["cf", "mcf"]
Normalization = Literal["none", "token", "char", "pmi"]
RequestSet = Literal["cf", "pmi", "mcf", "mcf_rot"]

CF: Formulation = "cf"
MCF: Formulation = "mcf"
PMI: RequestSet = "pmi"  # CF's choices after the bare context "Answer:" (pmi's baseline)

NORMALIZATIONS: tuple[Normalization, ...] = ("none", "token", "char", "pmi")

REQUEST_SETS: tuple[RequestSet, ...] = ("cf", "pmi", "mcf")
"""The request files of a task: CF, the pmi baseline (CF's continuations after the bare context
"Answer:", docs/standard.md section 4; only for tasks that score pmi) and MCF. Each is scored by
its own log-prob job, so pmi's extra compute is a node of its own in the workflow."""
ROTATIONS: RequestSet = "mcf_rot"
"""The MCF request set of every other answer order: rotations 1..k-1 of each instance's choices
(rotation r shows choices r, r+1, ... mod k, the gold letter moving with its choice; rotation 0 is
the standard MCF set). Not part of the standard: a robustness measurement (``olmes rotations``)."""


class ChoiceLogprobs(Protocol):
    """What a method scores: one model x task's log-probs as instance x choice arrays (numpy), read
    from one request set's file (:class:`olmes.scoring.logprob_files.ChoiceTable`)."""

    path: Any  # the file, for messages
    sum_logprob: Any  # log P(continuation | context), nats
    num_tokens: Any
    num_chars: Any  # the continuation's characters, leading space included
    uncond_sum: Any | None  # log P(continuation | "Answer:"), where pmi rows were read


@dataclass(frozen=True)
class Method:
    """One scoring method: its key in predictions and summaries, what it reads, how it is named and
    how it scores a choice."""

    key: str
    formulation: Formulation
    normalization: Normalization | None  # None for MCF, which compares the letters' log-probs as they are
    label: str  # how every table, flag and page names it
    request_sets: tuple[RequestSet, ...]  # the log-prob files it reads
    formula: str  # how a choice's score is computed, in words
    score: Callable[[ChoiceLogprobs], Any]  # the formula: every instance x choice's score
    error: Callable[[ChoiceLogprobs], Any]  # the float error model's bound on each of those scores

    @property
    def is_mcf(self) -> bool:
        return self.formulation == MCF

    def choice_scores(self, table: ChoiceLogprobs) -> Any:
        """The score of every instance x choice (docs/standard.md section 3); the highest wins."""
        return self.score(table)

    def choice_errors(self, table: ChoiceLogprobs) -> Any:
        """How far each score may move between two correct float32 computations of its log-probs
        (:func:`olmes.core.numerics.logprob_tolerance` carried through the formula)."""
        return self.error(table)


def missing_pmi(cf_path: Any) -> OlmesError:
    """The error of CF log-probs scored for pmi without their pmi file."""
    return OlmesError(
        f"{cf_path}: pmi asked but no pmi log-prob file was given; make the task's pmi "
        "requests (olmes requests --request-set pmi) and score them with the engine"
    )


def _pmi(table: ChoiceLogprobs) -> Any:
    if table.uncond_sum is None:
        raise missing_pmi(table.path)
    return table.sum_logprob - table.uncond_sum


def _sum_error(table: ChoiceLogprobs) -> Any:
    return logprob_tolerance(table.num_tokens, table.sum_logprob)


def _pmi_error(table: ChoiceLogprobs) -> Any:
    """Both sums' bounds: the unconditional row scores the same continuation (same tokens)."""
    if table.uncond_sum is None:
        raise missing_pmi(table.path)
    return _sum_error(table) + logprob_tolerance(table.num_tokens, table.uncond_sum)


def _cf(
    normalization: Normalization,
    formula: str,
    score: Callable[[ChoiceLogprobs], Any],
    error: Callable[[ChoiceLogprobs], Any],
) -> Method:
    sets: tuple[RequestSet, ...] = (CF, PMI) if normalization == PMI else (CF,)
    return Method(
        f"cf_{normalization}", CF, normalization, f"CF {normalization}", sets, formula, score, error
    )


METHODS: dict[str, Method] = {
    method.key: method
    for method in (
        _cf("none", "sum of the continuation's token log-probs", lambda t: t.sum_logprob, _sum_error),
        _cf(
            "token",
            "sum / number of continuation tokens",
            lambda t: t.sum_logprob / t.num_tokens,
            lambda t: _sum_error(t) / t.num_tokens,
        ),
        _cf(
            "char",
            "sum / number of continuation characters, leading space included",
            lambda t: t.sum_logprob / t.num_chars,
            lambda t: _sum_error(t) / t.num_chars,
        ),
        _cf("pmi", 'sum - sum of the same continuation after the context "Answer:"', _pmi, _pmi_error),
        Method(
            MCF,
            MCF,
            None,
            "MCF",
            (MCF,),
            "log-prob of the answer letter",
            lambda t: t.sum_logprob,
            _sum_error,
        ),
    )
}
"""Every scoring method, in the order predictions, summaries and tables list them."""


def get_method(key: str) -> Method:
    """The method of a key, or one clear error naming the known ones."""
    try:
        return METHODS[key]
    except KeyError:
        raise OlmesError(f"unknown scoring method {key!r}; choose one of: {', '.join(METHODS)}") from None


def cf_method(normalization: str) -> Method:
    """CF under ``normalization``."""
    if normalization not in NORMALIZATIONS:
        raise OlmesError(f"unknown normalization {normalization!r}; choose from {', '.join(NORMALIZATIONS)}")
    return METHODS[f"cf_{normalization}"]


MCF_METHOD = METHODS[MCF]


def methods_for(request_sets: set[str] | frozenset[str] | tuple[str, ...]) -> list[Method]:
    """The methods whose every request set is among ``request_sets``, in the standard order."""
    return [method for method in METHODS.values() if set(method.request_sets) <= set(request_sets)]


def letter(position: int) -> str:
    """MCF's label of the choice at ``position``: A, B, C, ... whatever the dataset calls it."""
    return string.ascii_uppercase[position]
