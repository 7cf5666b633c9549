"""The scoring methods: one registry that scoring, the predict jobs, flags, tables and the site iterate.

A method turns a model x task's log-probs into one decision per instance. There are five: the cloze
formulation (CF) under each of the four normalizations of docs/standard.md section 3, and the
multiple-choice formulation (MCF). Words used throughout: a *formulation* is CF or MCF; a *request
set* is a kind of request file (``cf``, ``pmi``, ``mcf``, ``mcf_rot``); a *method* is a formulation
with, for CF, its normalization. Each method names the request sets it reads, so the workflow asks
for exactly those files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from olmes.core.errors import OlmesError

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


@dataclass(frozen=True)
class Method:
    """One scoring method: its key in predictions and summaries, what it reads and how it is named."""

    key: str
    formulation: Formulation
    normalization: Normalization | None  # None for MCF, which compares the letters' log-probs as they are
    label: str  # how every table, flag and page names it
    request_sets: tuple[RequestSet, ...]  # the log-prob files it reads
    formula: str  # how a choice's score is computed

    @property
    def is_mcf(self) -> bool:
        return self.formulation == MCF


def _cf(normalization: Normalization, formula: str) -> Method:
    sets: tuple[RequestSet, ...] = (CF, PMI) if normalization == PMI else (CF,)
    return Method(f"cf_{normalization}", CF, normalization, f"CF {normalization}", sets, formula)


METHODS: dict[str, Method] = {
    method.key: method
    for method in (
        _cf("none", "sum of the continuation's token log-probs"),
        _cf("token", "sum / number of continuation tokens"),
        _cf("char", "sum / number of continuation characters, leading space included"),
        _cf("pmi", 'sum - sum of the same continuation after the context "Answer:"'),
        Method(MCF, MCF, None, "MCF", (MCF,), "log-prob of the answer letter"),
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
