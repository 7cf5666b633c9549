"""Request and instance files: the rows ``olmes requests`` writes (JSON lines)."""

from typing import NotRequired, TypedDict

from olmes.core.records.jsonlines import JsonLinesFormat


class RequestRow(TypedDict):
    """One line of a request file (``olmes requests --output``): what the engine scores."""

    task: str
    formulation: str  # the request set: cf, pmi or mcf
    instance_index: int
    native_id: str | int
    choice: int
    label: int
    subject: NotRequired[str]
    rotation: NotRequired[int]  # the mcf_rot request set only: which answer order
    context: str
    continuation: str
    unconditional: bool
    variant: NotRequired[str]  # a prompt variant's request sets only (docs/standard.md section 6)


class InstanceRow(TypedDict):
    """One line of an instance file (``olmes requests --instances``): what a reader sees."""

    task: str
    instance_index: int
    native_id: str | int
    subject: NotRequired[str]
    question: str
    choices: list[str]
    gold: int


REQUESTS_FORMAT = JsonLinesFormat("olmes.requests", RequestRow)
INSTANCES_FORMAT = JsonLinesFormat("olmes.instances", InstanceRow)
