"""The float error model (olmes/core/numerics.py) and what uses it: decisions compared between two
computations, each flip classified as a tie within float error or not (olmes reproduce), the import's
per-instance agreement."""

from __future__ import annotations

import numpy as np
import pytest

from olmes.core.methods import METHODS
from olmes.core.numerics import (
    RELATIVE,
    TOKEN_NATS,
    flip_within_error,
    logprob_tolerance,
    share_of_tolerance,
    within_tolerance,
)
from olmes.scoring.agreement import compare_decisions, flips_against
from olmes.scoring.logprob_files import read_tables
from olmes.store.reproduction_lines import summary_lines
from tests.helpers import cf_files, instance_rows, reproduction_report

CHOICES = [" a", " bb", " ccc", " dddd"]


def test_the_bound_grows_with_tokens_and_magnitude_and_refuses_other_precisions():
    assert logprob_tolerance(1, 0.0) == pytest.approx(TOKEN_NATS)
    assert logprob_tolerance(10, -100.0) == pytest.approx(10 * TOKEN_NATS + 100 * RELATIVE)
    assert logprob_tolerance(0, -1.0) == logprob_tolerance(1, -1.0)  # an empty continuation counts one
    bounds = logprob_tolerance(np.array([1, 5, 50]), np.array([-1.0, -10.0, -150.0]))
    assert (np.diff(bounds) > 0).all()
    with pytest.raises(ValueError, match="covers float32"):
        logprob_tolerance(1, -1.0, dtype="bfloat16")


def test_within_tolerance_is_at_the_bound_and_not_past_it():
    bound = float(logprob_tolerance(3, -20.0))
    assert within_tolerance([-20.0], [-20.0 + 0.99 * bound], [3]).all()
    assert not within_tolerance([-20.0], [-20.0 - 1.01 * bound - 1e-9], [3]).any()
    assert share_of_tolerance([-20.0], [-20.0 + bound / 2], [3])[0] == pytest.approx(0.5, rel=1e-3)


def test_a_flip_is_a_tie_only_when_both_margins_fit_in_the_pair_bound():
    assert flip_within_error(1e-5, 1e-5, 3e-5)
    assert not flip_within_error(2e-5, 2e-5, 3e-5)  # each margin fits, together they do not
    assert not flip_within_error(0.5, 0.0, 3e-5)


def _rows(instances):
    rows = []
    for index, sums in enumerate(instances):
        rows += instance_rows("arc_easy", "cf", index, CHOICES, sums, 0, tokens=[1, 2, 3, 4])
    return rows


def test_decisions_compared_with_their_margins(tmp_path):
    bound = float(logprob_tolerance(1, -1.0) + logprob_tolerance(2, -1.0))
    here = _rows([[-1.0, -1.0 - bound / 4, -3, -4], [-1.0, -1.5, -3, -4], [-1.0, -2.0, -3, -4]])
    there = _rows([[-1.0 - bound / 4, -1.0, -3, -4], [-1.5, -1.0, -3, -4], [-1.0, -2.0, -3, -4]])
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    mine = cf_files(tmp_path / "a", "cf.parquet", here)
    theirs = cf_files(tmp_path / "b", "cf.parquet", there)
    compared = compare_decisions({"cf": mine["cf_path"]}, {"cf": theirs["cf_path"]})
    flips = [flip for flip in compared["flips"] if flip["method"] == "cf_none"]
    assert compared["decisions"] == 3 * 3 and [f["instance_index"] for f in flips] == [0, 1]
    tie, real = flips
    assert tie["within_error"] and (tie["here"], tie["there"]) == (0, 1)
    assert tie["margin_here"] == pytest.approx(bound / 4) and tie["bound"] == pytest.approx(bound, rel=1e-4)
    assert not real["within_error"] and real["margin_here"] == pytest.approx(0.5)
    assert compared["identical"] == compared["decisions"] - len(compared["flips"])


def test_per_token_and_char_scores_carry_the_bound_through_their_formula(tmp_path):
    files = cf_files(tmp_path, "cf.parquet", _rows([[-2.0, -4.0, -6.0, -8.0]]))
    table, _ = read_tables(**files)
    none, token, char = (METHODS[key].choice_errors(table)[0] for key in ("cf_none", "cf_token", "cf_char"))
    assert token == pytest.approx(none / np.array([1, 2, 3, 4]))
    assert char == pytest.approx(none / np.array([len(choice) for choice in CHOICES]))


def test_another_implementations_picks_classified(tmp_path):
    files = cf_files(tmp_path, "cf.parquet", _rows([[-1.0, -1.0 - 1e-6, -3, -4], [-1.0, -1.5, -3, -4]]))
    table, _ = read_tables(**files)
    method = METHODS["cf_none"]
    assert flips_against(method, table, np.array([0, 1]), np.array([1, 1])) == (2, 1)
    assert flips_against(method, table, np.array([0, 1]), np.array([0, 0])) == (0, 0)
    assert flips_against(method, table, np.array([0]), np.array([7])) == (1, 0)  # not a choice: never a tie


def test_the_report_says_differs_only_for_a_flip_the_model_does_not_explain():
    tie = {"method": "cf_none", "instance_index": 3, "here": 0, "there": 1, "margin_here": 1e-5,
           "margin_there": 2e-5, "bound": 1e-4, "within_error": True}  # fmt: skip
    lines = summary_lines(reproduction_report([tie]))
    assert "tie within float error" in lines[2] and "cf_none instance 3" in lines[2]
    assert lines[-1].startswith("  reproduced within float error: 49/50 decisions identical, 1 ties")
    real = {**tie, "instance_index": 4, "margin_here": 0.5, "within_error": False}
    lines = summary_lines(reproduction_report([tie, real]))
    assert "NOT explained by float error" in lines[3] and lines[-1].startswith("  DIFFERS: 48/50")
    assert summary_lines(reproduction_report([]))[-1].startswith("  reproduced: 50/50 decisions identical;")
    assert summary_lines(reproduction_report([]), "M instruct Q4_1 GGUF")[0].startswith(
        "M instruct Q4_1 GGUF: first 10"
    )


def test_the_main_job_names_each_reproduced_model_by_its_display_name(tmp_path, capsys):
    """The main job's report (olmes.cli.workflow.print_reproduction) names a model as the tables and
    the site do: the store's display name says what it is, the folder name does not."""
    import json
    from pathlib import Path

    from olmes.cli.workflow import print_reproduction

    report = tmp_path / "SmolLM2-135M.json"
    report.write_text(json.dumps({**reproduction_report([]), "model": "SmolLM2-135M"}))
    print_reproduction([str(report)], 0.0, str(Path(__file__).resolve().parent.parent / "leaderboard"))
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("SmolLM2-135M instruct Q4_1 GGUF: first 10 instances of each task recomputed")
