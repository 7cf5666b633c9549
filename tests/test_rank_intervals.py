"""Ranks with 95% intervals and tie groups (olmes/tables/rank_intervals.py): synthetic models whose
per-instance correctness is drawn here with known accuracies, the paper's reported rows' binomial
intervals from their printed accuracies and the standard's counts, an older leaderboard read through
the format's upgrade, and the committed store's leaderboard with the paper's rows in headless Chromium.
"""

from __future__ import annotations

import csv
import json
import math
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from olmes.cli.main import main
from olmes.core.records import LEADERBOARD_FORMAT, LeaderboardRow
from olmes.core.records.tables import INTERVAL_FIELDS
from olmes.site import nav_views
from olmes.tables.digest import PredictionDigest
from olmes.tables.rank_intervals import (
    BINOMIAL,
    PAIRED,
    evaluated_draws,
    instance_sets,
    rank_intervals,
)
from tests.helpers import watched

REPO = Path(__file__).resolve().parents[1]
STORE = REPO / "leaderboard"
EARLIER = REPO / "tests" / "data" / "formats" / "olmes.table-4.leaderboard.json"
RESAMPLES, SEED = 1000, 1234


# -- synthetic models ---------------------------------------------------------------------------------


def digest(correct, ids=None, subjects=None) -> PredictionDigest:
    """A digest of these per-instance results (instance ids 0.. unless given; subjects as codes)."""
    correct = np.asarray(correct, dtype=bool)
    ids = np.arange(len(correct)) if ids is None else np.asarray(ids)
    names = sorted(set(subjects)) if subjects is not None else []
    codes = None if subjects is None else np.array([names.index(s) for s in subjects], dtype=np.int32)
    native = json.dumps([f"q{k}" for k in ids]).encode()
    return PredictionDigest(0.25, [], ids.astype(np.int64), native, codes, names, correct)


@dataclass
class Digests:
    """What the bootstrap reads of a ScoreSet: its tasks and each model x task's digest."""

    tasks: list[str]
    found: dict[tuple[str, str], PredictionDigest] = field(default_factory=dict)

    def digest(self, model: str, task: str) -> PredictionDigest:
        return self.found[(model, task)]


TASKS3 = ["arc_challenge", "boolq", "piqa"]


def drawn(accuracies: dict[str, float], tasks=TASKS3, n=1000, seed=7) -> Digests:
    """Models right on each instance with their accuracy, independently, on the same instances."""
    rng = np.random.default_rng(seed)
    scores = Digests(list(tasks))
    for model, accuracy in accuracies.items():
        for task in tasks:
            scores.found[(model, task)] = digest(rng.random(n) < accuracy)
    return scores


def ranked_rows(scores: Digests) -> list[dict]:
    """Evaluated rows in rank order by their observed average (what the leaderboard ranks by)."""
    models = sorted({model for model, _ in scores.found})
    average = {m: np.mean([scores.digest(m, t).correct.mean() for t in scores.tasks]) for m in models}
    return [{"model": m, "average": average[m]} for m in sorted(models, key=lambda m: -average[m])]


def fields(intervals) -> list[tuple[int, int, int]]:
    return [(found.rank_low, found.rank_high, found.tie_group) for found in intervals]


def test_well_separated_models_get_exact_ranks_and_groups_of_their_own():
    scores = drawn({"a": 0.8, "b": 0.7, "c": 0.6, "d": 0.5})
    rows = ranked_rows(scores)
    intervals = rank_intervals(scores, rows, RESAMPLES, SEED)
    assert [row["model"] for row in rows] == ["a", "b", "c", "d"]
    assert fields(intervals) == [(1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 4, 4)]
    for row, found in zip(rows, intervals, strict=True):
        assert found.interval == PAIRED
        assert found.average_low < row["average"] < found.average_high
        assert found.average_high - found.average_low < 0.04  # 3 tasks x 1,000 instances: about ±1.7 points


def test_near_equal_models_share_a_group():
    """b and c are right with the same probability, each on its own instances: their order is noise."""
    scores = drawn({"a": 0.8, "b": 0.6, "c": 0.6})
    intervals = rank_intervals(scores, ranked_rows(scores), RESAMPLES, SEED)
    assert fields(intervals) == [(1, 1, 1), (2, 3, 2), (2, 3, 2)]


def test_a_small_difference_on_the_same_instances_is_separated_by_pairing():
    """c is b less 10 right answers per task (1 point): unpaired, that would be within the noise of
    two models' averages on 3,000 instances (about ±2.5 points); paired, c is below b in every draw."""
    scores = drawn({"b": 0.6})
    for task in TASKS3:
        correct = scores.digest("b", task).correct.copy()
        correct[np.flatnonzero(correct)[:10]] = False
        scores.found[("c", task)] = digest(correct)
    assert fields(rank_intervals(scores, ranked_rows(scores), RESAMPLES, SEED)) == [(1, 1, 1), (2, 2, 2)]


def test_identical_models_hold_both_ranks_in_every_draw():
    scores = drawn({"a": 0.6})
    for task in TASKS3:
        scores.found[("twin", task)] = scores.digest("a", task)
    assert fields(rank_intervals(scores, ranked_rows(scores), RESAMPLES, SEED)) == [(1, 2, 1), (1, 2, 1)]


def test_the_interval_covers_the_true_rank():
    """Eight models 0.4 points apart on 10 tasks of 500 instances: close enough that the observed order
    is not the true one, and every interval still holds the model's true rank."""
    truth = {f"m{k}": 0.62 - 0.004 * k for k in range(8)}
    tasks = ["arc_challenge", "arc_easy", "boolq", "csqa", "hellaswag", "openbookqa", "piqa", "socialiqa",
             "winogrande", "mmlu"]  # fmt: skip
    scores = drawn(truth, tasks, n=500, seed=3)
    rows = ranked_rows(scores)
    intervals = rank_intervals(scores, rows, RESAMPLES, SEED)
    observed = [row["model"] for row in rows]
    assert observed != sorted(truth, key=lambda m: -truth[m])  # the point ranking errs somewhere
    for row, found in zip(rows, intervals, strict=True):
        true_rank = int(row["model"][1:]) + 1
        assert found.rank_low <= true_rank <= found.rank_high, (row["model"], found)
    assert all(found.rank_high - found.rank_low < 7 for found in intervals)  # never all of them


def test_mmlu_is_resampled_within_subjects_and_macro_averaged():
    """One subject of 10 questions all right, one of 990 all wrong: within subjects every draw keeps
    each subject's accuracy, so the macro average is 0.5 in every draw; resampled as one pool it is
    about 0.01 and varies. BoolQ (no subjects) with the same answers is resampled as one pool."""
    subjects = ["anatomy"] * 10 + ["virology"] * 990
    correct = [True] * 10 + [False] * 990
    scores = Digests(["mmlu"], {("m", "mmlu"): digest(correct, subjects=subjects)})
    (found,) = rank_intervals(scores, [{"model": "m", "average": 0.5}], RESAMPLES, SEED)
    assert found.average_low == found.average_high == 0.5
    pooled = Digests(["boolq"], {("m", "boolq"): digest(correct)})
    draws = evaluated_draws(pooled, ["m"], RESAMPLES, SEED)
    assert draws.min() < 0.01 < draws.max() < 0.05


def test_models_on_other_instances_are_resampled_on_their_own():
    """Pairing is by instance (index and native id), whatever the file order; a model that scored
    other instances (here: other ids, the same answers) is resampled independently of the others."""
    rng = np.random.default_rng(5)
    correct = rng.random(800) < 0.6
    order = rng.permutation(800)
    scores = Digests(["boolq"])
    scores.found[("x", "boolq")] = digest(correct)
    scores.found[("shuffled", "boolq")] = digest(correct[order], ids=order)  # x, in another file order
    scores.found[("other", "boolq")] = digest(correct, ids=np.arange(800, 1600))
    sets = instance_sets(scores, "boolq", ["x", "other", "shuffled"])
    assert [members for members, _, _ in sets] == [[0, 2], [1]]
    draws = evaluated_draws(scores, ["x", "shuffled", "other"], RESAMPLES, SEED)
    assert np.array_equal(draws[:, 0], draws[:, 1])  # paired: the same draws
    assert not np.array_equal(draws[:, 0], draws[:, 2])  # independent: other draws
    assert abs(np.corrcoef(draws[:, 0], draws[:, 2])[0, 1]) < 0.1


def test_tasks_are_drawn_independently_of_each_other():
    """Two tasks of the same size with the same answers: drawn with one seed each, not the same draw."""
    correct = np.random.default_rng(2).random(500) < 0.5
    scores = Digests(["boolq", "piqa"], {("m", "boolq"): digest(correct), ("m", "piqa"): digest(correct)})
    first = evaluated_draws(Digests(["boolq"], scores.found), ["m"], RESAMPLES, SEED)
    both = evaluated_draws(scores, ["m"], RESAMPLES, SEED)
    assert both.std() < 0.8 * first.std()  # two independent halves average out: about 1/sqrt(2)


# -- reported rows ------------------------------------------------------------------------------------


def reported(model: str, scores: dict[str, float], average: float) -> dict:
    cells = {task: {"score": score} for task, score in scores.items()}
    return {"model": model, "kind": "reported", "average": average, "tasks": cells}


def test_a_reported_row_gets_a_binomial_interval_from_its_printed_accuracies_and_counts():
    """BoolQ: the standard's 1,000 sampled questions; MMLU: all 14,042 (macro average taken as one
    binomial); normal approximation per task, independent over tasks."""
    row = reported("paper", {"boolq": 0.7, "mmlu": 0.5}, 0.6)
    (found,) = rank_intervals(Digests([]), [row], RESAMPLES, SEED)
    stderr = math.sqrt(0.7 * 0.3 / 1000 + 0.5 * 0.5 / 14042) / 2
    assert found.interval == BINOMIAL
    assert found.average_low == pytest.approx(0.6 - 1.959964 * stderr)
    assert found.average_high == pytest.approx(0.6 + 1.959964 * stderr)
    assert (found.rank_low, found.rank_high, found.tie_group) == (1, 1, 1)


def test_reported_rows_are_ranked_jointly_with_the_evaluated_draws():
    """A reported average 0.1 point below an evaluated one cannot be separated from it; one 10 points
    below both can."""
    scores = drawn({"e": 0.7})
    (evaluated,) = ranked_rows(scores)
    printed = {task: 0.7 for task in TASKS3}
    close, far = evaluated["average"] - 0.001, evaluated["average"] - 0.1
    rows = [evaluated, reported("close", printed, close), reported("far", printed, far)]
    intervals = rank_intervals(scores, rows, RESAMPLES, SEED)
    assert fields(intervals) == [(1, 2, 1), (1, 2, 1), (3, 3, 2)]
    assert [found.interval for found in intervals] == [PAIRED, BINOMIAL, BINOMIAL]


# -- the format --------------------------------------------------------------------------------------


def test_a_leaderboard_before_intervals_reads_with_nulls_in_place():
    old = json.loads(EARLIER.read_text(encoding="utf-8"))
    assert old["format"] == "olmes.table/4"
    table = LEADERBOARD_FORMAT.read(EARLIER)
    assert table["format"] == LEADERBOARD_FORMAT.tag == "olmes.table/5"
    required = [
        key for key in typing.get_type_hints(LeaderboardRow) if key in LeaderboardRow.__required_keys__
    ]
    for before, after in zip(old["records"], table["records"], strict=True):
        assert list(after) == required
        assert all(after[key] is None for key in INTERVAL_FIELDS)
        assert {key: value for key, value in after.items() if key not in INTERVAL_FIELDS} == before


# -- the committed store's leaderboard, with the paper's rows --------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The store's tables with ``--reported``, the site from them, and that site with its long tables
    folded after 5 rows."""
    root = tmp_path_factory.mktemp("rank-intervals")
    tables, site, folded = root / "tables", root / "site", root / "folded"
    assert main(["tables", "--store", str(STORE), "--reported", "--out", str(tables)]) == 0
    assert main(["site", "--store", str(STORE), "--tables", str(tables), "--out", str(site)]) == 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nav_views, "TABLE_OPEN_ROWS", 5)
        assert main(["site", "--store", str(STORE), "--tables", str(tables), "--out", str(folded)]) == 0
    records = json.loads((tables / "leaderboard.json").read_text(encoding="utf-8"))["records"]
    return {"tables": tables, "site": site, "folded": folded, "records": records}


def test_every_ranked_row_has_its_intervals_and_group(built):
    records = built["records"]
    assert len(records) == 42 and [record["rank"] for record in records] == list(range(1, 43))
    for record in records:
        assert record["rank_low"] <= record["rank"] <= record["rank_high"], record["model"]
        assert record["average_low"] <= record["average"] <= record["average_high"], record["model"]
        assert record["interval"] == (BINOMIAL if record["kind"] == "reported" else PAIRED)
    groups = [record["tie_group"] for record in records]
    assert groups[0] == 1 and all(
        later - earlier in (0, 1) for earlier, later in zip(groups, groups[1:], strict=False)
    )
    assert 1 < groups[-1] < 42  # some neighbours separated, some not
    with (built["tables"] / "leaderboard.csv").open(encoding="utf-8", newline="") as handle:
        shown = list(csv.DictReader(handle))
    assert [line["Rank 95% CI"] for line in shown] == [
        f"[{r['rank_low']}, {r['rank_high']}]" for r in records
    ]
    assert [line["Tie group"] for line in shown] == [str(group) for group in groups]


def _shown_ranks(page) -> list[list[str]]:
    """Per row: the rank cell's text, its interval's class and the group cell's text."""
    return page.eval_on_selector_all(
        "#leaderboard tbody tr:not(.group-label)",
        "rows => rows.map(r => [r.querySelector('td.rank').innerText.replace(/\\s+/g, ' ').trim(),"
        " (r.querySelector('.rank-ci') || {className: ''}).className,"
        " r.querySelector('td.tie-group').innerText])",
    )


def test_the_page_shows_each_rank_with_its_interval_and_the_tie_groups(built, browser):
    records = built["records"]
    with watched(browser) as w:
        page = w.goto((built["site"] / "index.html").as_uri())
        shown = _shown_ranks(page)
        expected = [f"{r['rank']} ({r['rank_low']}–{r['rank_high']})" for r in records]
        assert [text.removesuffix("ᵇ") for text, _, _ in shown] == expected
        assert [classes for _, classes, _ in shown] == [
            "rank-ci binomial" if r["kind"] == "reported" else "rank-ci" for r in records
        ]
        assert [group for _, _, group in shown] == [str(r["tie_group"]) for r in records]
        assert page.locator("#leaderboard .binomial-mark").count() == 40
        bands = page.eval_on_selector_all("#leaderboard td.tie-group", "cells => cells.map(c => c.className)")
        assert bands == [f"num tie-group band-{r['tie_group'] % 2}" for r in records]
        colors = page.eval_on_selector_all(
            "#leaderboard td.tie-group", "cells => cells.map(c => getComputedStyle(c).backgroundColor)"
        )
        assert len(set(colors)) == 2  # the groups shaded in turn, reported rows too
        legend = page.locator(".legend").inner_text()
        assert "the rank's 95% interval" in legend and "tie group" in legend and "binomial" in legend
        title = page.locator("#leaderboard td.rank .rank-ci.binomial").first.get_attribute("title")
        assert "binomial approximation" in title and "not paired" in title
        # sort by group, first ascending, then descending: the table stays whole
        header = page.locator("#leaderboard thead th.tie-group button")
        header.click()
        groups = [int(group) for _, _, group in _shown_ranks(page)]
        assert groups == sorted(groups) and len(groups) == 42
        header.click()
        assert [int(group) for _, _, group in _shown_ranks(page)] == sorted(groups, reverse=True)
        page = w.goto((built["site"] / "index.html").as_uri())
        page.uncheck("#show-reported")  # the evaluated rows keep the ranks and intervals of the whole table
        visible = page.eval_on_selector_all(
            "#leaderboard tbody tr:not(.group-label)",
            "rows => rows.filter(r => r.offsetParent !== null)"
            ".map(r => r.querySelector('td.rank').innerText)",
        )
        assert [re.sub(r"\s+", " ", text) for text in visible] == [
            f"{r['rank']} ({r['rank_low']}–{r['rank_high']})" for r in records if r["kind"] == "evaluated"
        ]
        assert w.errors == []


def test_a_folded_leaderboard_unfolds_its_intervals_and_groups(built, browser):
    with watched(browser) as w:
        page = w.goto((built["folded"] / "index.html").as_uri())
        assert len(_shown_ranks(page)) == 5
        assert page.locator("#leaderboard tr:visible td.rank .rank-ci").count() == 5
        page.locator("button[data-show-all=leaderboard]").click()
        shown = _shown_ranks(page)
        assert len(shown) == 42 and all(re.fullmatch(r"\d+ \(\d+–\d+\)ᵇ?", text) for text, _, _ in shown)
        assert w.errors == []
