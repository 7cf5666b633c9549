"""The real OLMES requests ``olmes check-model`` (and ``olmes logprobs``, for an architecture not on
the verified list) scores both ways: the engine compares, the requests stage makes them; the
command line, above both, joins them."""

from __future__ import annotations

import functools

from olmes.core.methods import CF, MCF, PMI

CHECK_REQUESTS = (  # (task, request set, instances): 52 requests
    ("arc_challenge", CF, 3), ("arc_challenge", PMI, 3), ("arc_challenge", MCF, 3),
    ("winogrande", CF, 4), ("hellaswag", CF, 2),
)  # fmt: skip
"""A shared 5-shot prefix, an instance's choices, pmi rows, MCF letters, WinoGrande's shared
continuation and HellaSwag's long continuations."""


@functools.cache
def check_pairs() -> list[tuple[str, str]]:
    """The (context, continuation) pairs of :data:`CHECK_REQUESTS`."""
    from olmes.requests.build import build_requests

    rows = [row for task, kind, limit in CHECK_REQUESTS for row in build_requests(task, kind, limit=limit)]
    return [(row["context"], row["continuation"]) for row in rows]
