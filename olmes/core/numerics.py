"""The error model of float32 log-prob sums: how far two correct computations of the same request may
differ (docs/numerics.md gives the measurements behind it).

A request's ``sum_logprob`` is the sum of its continuation's token log-probs, each the log-softmax of
one row of logits that the whole network computed in float32. Two correct computations (other CPU
kernels, another chunking of the same requests, a GPU in float32, another machine) add the same
numbers in other orders, so each token's log-prob moves by a rounding error of the network's depth,
not of the sum alone; the tokens' errors add up. The bound is therefore

    tolerance(n, s) = TOKEN_NATS * n + RELATIVE * |s|

for a request of ``n`` continuation tokens whose sum is ``s``: ``TOKEN_NATS`` per token (about three
times the largest per-token deviation measured), and a relative term for the few requests whose token
log-probs are large (a rare token, a long gold answer of -100 nats), where the logits' own rounding
grows with their size. It holds for float32 compute; bfloat16 and float16 round 2^16 and 2^13 times
coarser and are not covered (:func:`logprob_tolerance` refuses them).

Every numeric comparison of log-probs (tests, ``olmes reproduce``, ``olmes import`` agreement,
``olmes check-model``, ``benchmarks/gpu_check.py``) takes its bound from here. A decision (the best of
an instance's choice scores) flips between two correct computations only when its two choices'
scores lie within their bounds of each other: :func:`flip_within_error`.
"""

from __future__ import annotations

import numpy as np

TOKEN_NATS = 1e-4
"""Bound on one continuation token's log-prob deviation between two correct float32 computations
(measured at most 3.3e-5 beside the relative term below, docs/numerics.md: 3x room)."""
RELATIVE = 1e-5
"""Bound on the deviation relative to the sum's magnitude (large log-probs round coarser; measured
4e-6 beside the per-token term)."""
COVERED_DTYPES = ("float32",)


def logprob_tolerance(num_tokens, sum_logprob, dtype: str = "float32"):
    """How far two correct float32 computations of a request of ``num_tokens`` continuation tokens
    and sum ``sum_logprob`` may differ, in nats (scalars or numpy arrays, elementwise)."""
    if dtype not in COVERED_DTYPES:
        raise ValueError(f"the log-prob error model covers {', '.join(COVERED_DTYPES)} compute, not {dtype}")
    tokens = np.maximum(np.asarray(num_tokens, dtype=np.float64), 1.0)
    return TOKEN_NATS * tokens + RELATIVE * np.abs(np.asarray(sum_logprob, dtype=np.float64))


def _deviation_and_bound(a, b, num_tokens) -> tuple[np.ndarray, np.ndarray]:
    """|a - b| and the bound of the two sums, taken at the larger magnitude of the two."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.abs(a - b), logprob_tolerance(num_tokens, np.maximum(np.abs(a), np.abs(b)))


def within_tolerance(a, b, num_tokens) -> np.ndarray:
    """Elementwise: do sums ``a`` and ``b`` of the same requests agree within the error model?"""
    deviation, bound = _deviation_and_bound(a, b, num_tokens)
    return deviation <= bound


def share_of_tolerance(a, b, num_tokens) -> np.ndarray:
    """|a - b| as a share of the error model's bound (<= 1: within it), elementwise."""
    deviation, bound = _deviation_and_bound(a, b, num_tokens)
    return deviation / bound


def flip_within_error(margin_here, margin_there, error_pair):
    """Whether a decision that differs between two computations is a tie within float error.

    Here choice ``a`` beat ``b`` by ``margin_here`` (>= 0); there ``b`` beat ``a`` by ``margin_there``
    (>= 0); ``error_pair`` is the bound of ``a``'s score plus ``b``'s. If each score differs between the
    two by at most its bound, the margins add up to at most the pair's bound
    ((s_a - s_b) + (t_b - t_a) = (s_a - t_a) + (t_b - s_b)); a flip whose margins add up to more is
    one the error model does not explain."""
    return np.asarray(margin_here) + np.asarray(margin_there) <= np.asarray(error_pair)
