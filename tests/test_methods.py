"""The scoring-method registry."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from olmes.core.errors import OlmesError
from olmes.core.methods import METHODS, cf_method, get_method, methods_for

REPO = Path(__file__).resolve().parent.parent


def test_methods_read_exactly_their_request_sets() -> None:
    """Without pmi requests a task has no pmi method; MCF alone reads only the mcf set."""
    assert [m.key for m in methods_for({"cf", "mcf"})] == ["cf_none", "cf_token", "cf_char", "mcf"]
    assert [m.key for m in methods_for({"cf", "pmi", "mcf"})] == [*METHODS]
    assert [m.key for m in methods_for({"mcf"})] == ["mcf"]
    assert get_method("cf_pmi").request_sets == ("cf", "pmi")
    assert cf_method("char") is get_method("cf_char") and cf_method("char").normalization == "char"
    assert get_method("mcf").is_mcf and not cf_method("none").is_mcf


def test_each_method_scores_choices_by_its_formula() -> None:
    """2 instances x 2 choices; each method ranks them differently, so a wrong formula shows."""
    table = SimpleNamespace(
        path="x.parquet",
        sum_logprob=np.array([[-4.0, -6.0], [-3.0, -2.0]]),
        num_tokens=np.array([[1, 4], [3, 1]]),
        num_chars=np.array([[2, 12], [6, 5]]),
        uncond_sum=np.array([[-1.0, -5.5], [-3.5, -1.0]]),
    )
    expected = {
        "cf_none": [[-4.0, -6.0], [-3.0, -2.0]],
        "cf_token": [[-4.0, -1.5], [-1.0, -2.0]],
        "cf_char": [[-2.0, -0.5], [-0.5, -0.4]],
        "cf_pmi": [[-3.0, -0.5], [0.5, -1.0]],
        "mcf": [[-4.0, -6.0], [-3.0, -2.0]],
    }
    for key, scores in expected.items():
        assert get_method(key).choice_scores(table).tolist() == scores, key
    with pytest.raises(OlmesError, match=r"^x.parquet: pmi asked but no pmi log-prob file was given"):
        get_method("cf_pmi").choice_scores(SimpleNamespace(**{**vars(table), "uncond_sum": None}))


def test_unknown_method_or_normalization_is_one_clear_error() -> None:
    with pytest.raises(OlmesError, match="unknown scoring method 'cf_bytes'; choose one of: cf_none, "):
        get_method("cf_bytes")
    with pytest.raises(OlmesError, match="unknown normalization 'bytes'"):
        cf_method("bytes")
