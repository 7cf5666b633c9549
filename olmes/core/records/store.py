"""The results store's own documents: model records, the store marker, reproduction reports."""

from typing import Any, Literal, NotRequired, TypedDict

from olmes.core.errors import OlmesError
from olmes.core.records.formats import Format
from olmes.core.records.logprobs import ModelIdentity


class Flip(TypedDict):
    """One instance x method whose decision differs between two computations of its log-probs."""

    method: str
    instance_index: int
    here: int  # the choice picked here
    there: int  # the choice picked by the other computation
    margin_here: float  # how far ``here`` beat ``there`` here (>= 0)
    margin_there: float  # how far ``there`` beat ``here`` in the other computation (>= 0)
    bound: float  # the float error model's bound on the two choices' scores together
    within_error: bool  # margin_here + margin_there <= bound: a tie within float error


class ReproducedTask(TypedDict):
    instances: int
    task: str
    requests: int
    max_abs_delta: float
    max_share_of_tolerance: float  # max over requests of |delta| / the error model's bound
    beyond_tolerance: int  # requests whose |delta| exceeds the bound
    decisions: int
    identical: int
    ties_within_error: int  # flipped decisions the error model explains
    unexplained_flips: int  # flipped decisions it does not
    differing_methods: list[str]  # the methods with a decision that differs
    flips: list[Flip]


class ReproducedGeneration(TypedDict):
    """One OLMES v0.2 generative task of a reproduction: its first instances generated again here,
    compared with the store's generations and the gold answers' log-probs."""

    task: str
    instances: int
    identical: int  # generations equal to the store's, character for character
    differing: list[int]  # the instance indices whose generation differs
    max_abs_delta: float  # max |delta| of the gold answers' log-probs (bits per byte)


class ReproductionReport(TypedDict):
    """``results/reproduction/<model>.json`` (``olmes reproduce``): a store model scored again here;
    with ``--record``, also ``<store>/reproductions/<model>/reproduction.json``."""

    format: str
    model: str
    spec: str
    limit: int
    hardware: str
    store_hardware: list[str]
    same_fingerprint: bool
    wall_time_s: float
    requests: int
    max_abs_delta: float
    max_share_of_tolerance: float
    beyond_tolerance: int
    decisions: int
    identical: int
    ties_within_error: int
    unexplained_flips: int
    verdict: Literal["reproduced", "reproduced within float error", "DIFFERS"]
    tasks: list[ReproducedTask]
    generative: NotRequired[list[ReproducedGeneration]]  # reported by olmes reproduce, never recorded
    # a reproduction record in a store (olmes reproduce --record; olmes.store.provenance) has these too
    date: NotRequired[str]  # UTC, when it was recomputed
    olmes_commit: NotRequired[str]  # the olmes code that recomputed it (git commit, or the version)
    identity: NotRequired[ModelIdentity]  # read from the weights it was recomputed from
    store_files: NotRequired[dict[str, dict[str, str]]]  # task -> request set -> store log-prob SHA-256


class StoredTask(TypedDict):
    """One task of a store model (``model.json``'s ``tasks``, and of each robustness kind)."""

    instances: int
    limit: NotRequired[int | None]  # standard results only
    partial: NotRequired[bool]  # standard results only
    requests_sha256: NotRequired[dict[str, str]]  # by request set ("generations" for a generative task)
    hardware: list[str]
    wall_time_s: float
    tokens_forwarded: int
    published: str


class ModelRecord(TypedDict):
    """``<store>/models/<model>/model.json``: a published model's provenance."""

    format: str
    name: str
    display_name: str
    series: NotRequired[str]
    training_tokens: NotRequired[float]
    checkpoint: NotRequired[str]
    identity: NotRequired[ModelIdentity]  # from its run records or a reproduction (olmes upgrade fills it)
    spec: str
    kind: str
    revision: str
    fingerprint: str
    dtype: str
    device: str
    versions: dict[str, str | None]
    wall_time_s: float
    tokens_forwarded: int
    tasks: dict[str, StoredTask]
    robustness: NotRequired[dict[str, dict[str, StoredTask]]]  # by variant or "rotations", then task
    generative: NotRequired[dict[str, StoredTask]]  # OLMES v0.2 generative tasks, by task (not in the totals)


class StoreRecord(TypedDict):
    """``<store>/store.json``: what marks a folder as a results store."""

    format: str
    # where ``olmes fetch-logprobs`` finds the store's external log-prob files (olmes.store.blobs)
    logprob_hosts: NotRequired[list[str]]


def _before_the_error_model(report: dict[str, Any]) -> dict[str, Any]:
    """/1 -> /2 cannot be made in memory: /2's flips, margins and shares of the error model's bound
    are computed from the two sets of log-probs, which a /1 report does not keep."""
    raise OlmesError("made before the float error model's view (flips, bounds); run olmes reproduce again")


def _own_tag(record: dict[str, Any]) -> dict[str, Any]:
    """/1 -> /2: ``model.json`` names its own format (/1 said ``olmes.store/1``, the store's)."""
    return record


REPRODUCTION_FORMAT = Format(
    "olmes.reproduction",
    ReproductionReport,
    made_by="run olmes reproduce",
    upgrades=(_before_the_error_model,),
)
STORE_FORMAT = Format("olmes.store", StoreRecord, made_by="make it with olmes publish")
"""``store.json``: what marks a folder as a results store."""
MODEL_FORMAT = Format(
    "olmes.model",
    ModelRecord,
    made_by="publish the model again with olmes publish",
    upgrades=(_own_tag,),
    older_tags={"olmes.store/1": 1},
)
