"""Checkpoint series (olmes.tables.training, the Training pages): where MCF overtakes CF for good, its
paired bootstrap interval, "not yet" with the last gap, MMLU resampled within subjects, a series whose
checkpoints scored other instances refused, the export's rows, the atlas' order, and the series page
drawn in Chromium with its transitions.

Every series here is scored the way a real run is (benchmarks/training_at_scale.py, write_checkpoint:
log-prob files whose gold wins under CF and MCF exactly on the instances asked, scored by score_task),
so the tables read real predictions files and summaries; the per-instance correctness is set here, so
each test knows where MCF overtakes CF."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.training_at_scale import write_checkpoint, write_models_file
from olmes.core.errors import OlmesError
from olmes.core.methods import MCF
from olmes.site.svg import static_svg
from olmes.site.training_charts import decades, series_spec
from olmes.tables.bootstrap import paired_bootstrap
from olmes.tables.results import ModelInfo, load_scores
from olmes.tables.training import TRAINING_KEYS, _in_order, first_for_good, training_tables
from tests.helpers import draw_charts_live, olmes, watched

RESAMPLES, SEED = 1000, 1234


def tokens(k: int) -> float:
    """Checkpoint k's training tokens: 1B doubled k times."""
    return 1e9 * 2**k


def write_series(
    root: Path, name: str, task: str, cf: list[np.ndarray], mcf: list[np.ndarray], subjects=None
) -> list[ModelInfo]:
    """A series of len(cf) checkpoints on ``task`` (checkpoint k at :func:`tokens` (k)), CF and MCF right
    on the instances asked; its models, listed newest first (the tables order them by tokens)."""
    models = []
    for k, (cf_correct, mcf_correct) in enumerate(zip(cf, mcf, strict=True)):
        model = f"{name.lower()}-{k}"
        write_checkpoint(root, model, task, np.asarray(cf_correct), np.asarray(mcf_correct), subjects)
        models.append(ModelInfo(model, f"{name} step {k}", name, tokens(k), f"step{k}"))
    return models[::-1]


def exactly(share: float, ranks: np.ndarray) -> np.ndarray:
    """Right on the instances ranked below share x n: an accuracy of exactly ``share`` (to 1/n), the
    same instances right at every checkpoint with that share or more."""
    return ranks < round(share * len(ranks))


def tables(root: Path, models: list[ModelInfo]) -> dict[str, dict]:
    """The training tables of the series under ``root``: key -> {header, rows, records}."""
    scores = load_scores([root / "scores"], models)
    built = training_tables(scores, RESAMPLES, SEED)
    return {
        table.key: {"rows": [[cell.display for cell in row] for row in table.rows], "records": table.records}
        for table in built
    }


def transition(found: dict, series: str, task: str) -> dict:
    return next(
        r for r in found["training_transitions"]["records"] if (r["series"], r["task"]) == (series, task)
    )


# -- the rule ----------------------------------------------------------------------------------------------


def test_first_for_good_is_the_start_of_the_lead_that_lasts():
    lead = np.array(
        [[False, True, False, True, True], [True, True, True, True, True], [True, True, True, True, False]]
    )
    assert first_for_good(lead).tolist() == [3, 0, -1]
    assert int(first_for_good(np.array([False, True, False, True, True]))) == 3


def test_the_transition_and_its_interval_where_mcf_jumps(tmp_path):
    """CF at 70% throughout; MCF at 50% then at 90% from checkpoint 4: the transition is checkpoint 4's
    tokens, and no draw puts it elsewhere; the estimates are the summaries' accuracies."""
    rng = np.random.default_rng(0)
    n = 400
    cf_ranks, mcf_ranks = rng.permutation(n), rng.permutation(n)
    cf = [exactly(0.7, cf_ranks)] * 8
    mcf = [exactly(0.5 if k < 4 else 0.9, mcf_ranks) for k in range(8)]
    found = tables(tmp_path, write_series(tmp_path, "Jump", "boolq", cf, mcf))
    record = transition(found, "Jump", "boolq")
    assert record["crossed"] and record["transition_tokens"] == tokens(4) == record["ci_low_tokens"]
    assert record["ci_high_tokens"] == tokens(4) and record["no_transition_share"] == 0.0
    assert record["previous_tokens"] == tokens(3) and record["transition_checkpoint"] == "step4"
    assert record["checkpoints"] == 8 and record["n"] == n and record["cf_method"] == "cf_none"
    assert record["last_gap"] == pytest.approx(0.2)
    values = {(r["method"], r["model"]): r["value"] for r in found["training_series"]["records"]}
    assert values["cf_none", "jump-5"] == pytest.approx(0.7) and values[MCF, "jump-5"] == pytest.approx(0.9)
    assert values["olmes", "jump-2"] == pytest.approx(0.7) and values["olmes", "jump-6"] == pytest.approx(0.9)
    row = next(row for row in found["training_transitions"]["rows"] if row[1] == "BoolQ")
    assert row[3:6] == ["16B", "step4", "[16B, 16B]"]


def _gradual(root: Path, name: str, n: int, seed: int) -> list[ModelInfo]:
    """CF right with probability 0.7 and MCF with 0.5 rising by 0.04 per checkpoint (12): in the
    population MCF overtakes CF for good at checkpoint 5 (0.70 is a tie, 0.74 a lead). Each instance is
    learned once and kept (a latent skill per instance), so the checkpoints are paired as in training."""
    rng = np.random.default_rng(seed)
    cf_skill, mcf_skill = rng.random(n), rng.random(n)
    cf = [cf_skill < 0.7] * 12
    mcf = [mcf_skill < 0.5 + 0.04 * k for k in range(12)]
    return write_series(root, name, "boolq", cf, mcf)


TRUE_TRANSITION = 6
"""The population's transition of :func:`_gradual`: 0.5 + 0.04 k > 0.7 from k = 6 (k = 5 is a tie)."""


def test_the_interval_covers_the_truth_and_narrows_with_more_instances(tmp_path):
    """MCF rising slowly past a flat CF: on 150 and on 1,000 instances the 95% interval covers the
    population's transition, and the one of 1,000 instances is narrower (in checkpoints)."""
    widths = []
    for n in (150, 1000):
        found = tables(tmp_path / str(n), _gradual(tmp_path / str(n), "Gradual", n, seed=3))
        record = transition(found, "Gradual", "boolq")
        low, high = record["ci_low_tokens"], record["ci_high_tokens"] or np.inf
        assert low <= tokens(TRUE_TRANSITION) <= high, (n, record)
        widths.append(np.log2(min(high, tokens(11))) - np.log2(low))
    assert widths[1] < widths[0], widths


def test_a_blip_is_not_a_transition(tmp_path):
    """MCF ahead at checkpoint 2 only (a blip near chance), then behind, then ahead from checkpoint 6 on:
    the transition is checkpoint 6. A series whose only lead is the blip has not crossed."""
    rng = np.random.default_rng(1)
    n = 300
    cf_ranks, mcf_ranks = rng.permutation(n), rng.permutation(n)
    lead_at = {2, 6, 7, 8}
    cf = [exactly(0.6, cf_ranks)] * 9
    mcf = [exactly(0.75 if k in lead_at else 0.5, mcf_ranks) for k in range(9)]
    blip_only = [exactly(0.75 if k == 2 else 0.5, mcf_ranks) for k in range(9)]
    models = write_series(tmp_path, "Blip", "boolq", cf, mcf)
    models += write_series(tmp_path, "OnlyBlip", "boolq", cf, blip_only)
    found = tables(tmp_path, models)
    assert transition(found, "Blip", "boolq")["transition_tokens"] == tokens(6)
    only = transition(found, "OnlyBlip", "boolq")
    assert not only["crossed"] and only["transition_tokens"] is None
    assert only["no_transition_share"] > 0.99  # MCF ends 10 points behind: a draw seldom puts it ahead


def test_not_yet_reports_the_last_gap_with_its_interval(tmp_path):
    """MCF behind CF at every checkpoint: "not yet", and the last checkpoint's MCF - CF gap with the
    paired bootstrap's interval (the same draws as olmes.tables.bootstrap's)."""
    rng = np.random.default_rng(2)
    n = 500
    cf = [rng.random(n) < 0.5 + 0.03 * k for k in range(5)]
    mcf = [rng.random(n) < 0.4 + 0.02 * k for k in range(5)]
    found = tables(tmp_path, write_series(tmp_path, "Behind", "boolq", cf, mcf))
    record = transition(found, "Behind", "boolq")
    gap, low, high = paired_bootstrap(mcf[-1], cf[-1], None, RESAMPLES, SEED)
    assert not record["crossed"] and record["ci_low_tokens"] is None
    assert record["last_gap"] == pytest.approx(gap) == pytest.approx(mcf[-1].mean() - cf[-1].mean())
    assert (record["last_gap_ci_low"], record["last_gap_ci_high"]) == pytest.approx((low, high))
    assert record["last_gap_ci_low"] < record["last_gap"] < record["last_gap_ci_high"] < 0
    assert record["last_tokens"] == tokens(4)
    row = next(row for row in found["training_transitions"]["rows"] if row[0] == "Behind")
    assert row[3] == "not yet" and row[5] == "—" and row[6] == "100.0"


def test_mmlu_is_resampled_within_subjects(tmp_path):
    """MMLU with a small subject where MCF is always right and a large one where it is always wrong:
    its macro MCF accuracy is 50% in every draw when each subject is resampled on its own (pooled
    resampling would move it by the subjects' shares), and the estimates are the macro averages."""
    subjects = np.array(["anatomy"] * 20 + ["virology"] * 200)
    rng = np.random.default_rng(4)
    mcf = [subjects == "anatomy"] * 3
    cf = [rng.random(len(subjects)) < 0.3 + 0.1 * k for k in range(3)]
    found = tables(tmp_path, write_series(tmp_path, "Subjects", "mmlu", cf, mcf, subjects))
    rows = [r for r in found["training_series"]["records"] if r["method"] == MCF]
    assert [(r["value"], r["ci_low"], r["ci_high"]) for r in rows] == [(0.5, 0.5, 0.5)] * 3
    char = [r for r in found["training_series"]["records"] if r["method"] == "cf_char"]
    for r, correct in zip(char, cf, strict=True):
        macro = np.mean([correct[subjects == name].mean() for name in ("anatomy", "virology")])
        assert r["value"] == pytest.approx(macro) and r["ci_low"] < r["value"] < r["ci_high"]
    record = transition(found, "Subjects", "mmlu")
    gap, low, high = paired_bootstrap(mcf[-1], cf[-1], subjects, RESAMPLES, SEED)
    assert (record["last_gap"], record["last_gap_ci_low"], record["last_gap_ci_high"]) == pytest.approx(
        (gap, low, high)
    )


def test_a_series_whose_checkpoints_scored_other_instances_is_refused(tmp_path):
    rng = np.random.default_rng(5)
    cf = [rng.random(100) < 0.6 for _ in range(3)]
    mcf = [rng.random(100) < 0.5 for _ in range(3)]
    cf[2], mcf[2] = cf[2][:90], mcf[2][:90]  # the last checkpoint scored the first 90 instances only
    models = write_series(tmp_path, "Mixed", "boolq", cf, mcf)
    with pytest.raises(
        OlmesError, match="series 'Mixed' on boolq: checkpoint 'mixed-2' scored other instances"
    ):
        training_tables(load_scores([tmp_path / "scores"], models), RESAMPLES, SEED)
    models_file = write_models_file(tmp_path / "models.json", models)
    code, err = olmes("tables", "--scores", str(tmp_path / "scores"), "--models", str(models_file),
                      "--out", str(tmp_path / "tables"))  # fmt: skip
    assert code != 0 and "scored other instances" in err and len(err.strip().splitlines()) == 1, err


def test_the_export_has_a_row_per_series_checkpoint_task_and_measure(tmp_path):
    """Three checkpoints on BoolQ (CF none/token/char) and ARC-Easy (and pmi): every measure of every
    checkpoint, the values those of the summaries, bits per byte with its mean's normal interval; the
    tables are written as CSV, JSON and LaTeX by olmes tables, and without a series they have no rows."""
    rng = np.random.default_rng(6)
    for task in ("boolq", "arc_easy"):  # the same three models, each scored on both tasks
        cf = [rng.random(200) < 0.4 + 0.1 * k for k in range(3)]
        mcf = [rng.random(200) < 0.3 + 0.2 * k for k in range(3)]
        models = write_series(tmp_path, "Export", task, cf, mcf)
    scores = load_scores([tmp_path / "scores"], models)
    found = tables(tmp_path, models)
    records = found["training_series"]["records"]
    methods = {"boolq": ["cf_none", "cf_token", "cf_char", MCF, "olmes", "bpb"],
               "arc_easy": ["cf_none", "cf_token", "cf_char", "cf_pmi", MCF, "olmes", "bpb"]}  # fmt: skip
    expected = [
        (task, method, f"export-{k}")
        for task in ("arc_easy", "boolq")
        for method in methods[task]
        for k in range(3)
    ]
    assert [(r["task"], r["method"], r["model"]) for r in records] == expected
    for record in records:
        summary = scores.get(record["model"], record["task"])
        if record["method"] == "bpb":
            bpb = summary["bpb"]
            assert record["value"] == bpb["bpb"] and record["n"] == bpb["n"]
            assert record["ci_high"] - record["value"] == pytest.approx(1.959964 * bpb["stderr"])
        elif record["method"] == "olmes":
            assert record["value"] == pytest.approx(summary["best_of_two"]["score"])
        else:
            assert record["value"] == pytest.approx(summary["methods"][record["method"]]["accuracy"])
            assert record["ci_low"] <= record["value"] <= record["ci_high"]
        assert record["recommended"] == (
            record["method"] == {"boolq": "cf_none", "arc_easy": "cf_char"}[record["task"]]
        )
        assert record["training_tokens"] == tokens(int(record["model"][-1])) and record["partial"]
    models_file = write_models_file(tmp_path / "models.json", models)
    out = tmp_path / "tables"
    assert (
        olmes(
            "tables", "--scores", str(tmp_path / "scores"), "--models", str(models_file), "--out", str(out)
        )[0]
        == 0
    )
    csv_lines = (out / "training_series.csv").read_text(encoding="utf-8").splitlines()
    assert csv_lines[0].startswith("Series,Task,Method,Checkpoint,Model,Display name,Training tokens,Value")
    assert len(csv_lines) == 1 + len(records)
    assert (
        json.loads((out / "training_series.json").read_text())["records"][0]["value"] == records[0]["value"]
    )
    bare = tmp_path / "bare"
    assert olmes("tables", "--scores", str(tmp_path / "scores"), "--out", str(bare))[0] == 0  # no series
    for key in TRAINING_KEYS:
        assert {(bare / f"{key}.{ext}").is_file() for ext in ("csv", "json", "tex")} == {True}
        assert json.loads((bare / f"{key}.json").read_text())["records"] == []


def test_the_atlas_orders_tasks_by_when_they_cross(tmp_path):
    """Series A crosses on ARC-Easy at checkpoint 2 and on BoolQ at 5, never on WinoGrande; series B
    crosses on BoolQ at 1: BoolQ (1, the earliest of any series), ARC-Easy (2), WinoGrande (never)."""
    rng = np.random.default_rng(7)
    n = 200
    ranks = rng.permutation(n)
    plan = {("A", "arc_easy"): 2, ("A", "boolq"): 5, ("A", "winogrande"): None, ("B", "boolq"): 1}
    models = {}
    for (name, task), crossing in plan.items():
        mcf = [exactly(0.8 if crossing is not None and k >= crossing else 0.4, ranks) for k in range(6)]
        models[name] = write_series(tmp_path, name, task, [exactly(0.6, ranks)] * 6, mcf)
    found = tables(tmp_path, models["A"] + models["B"])
    assert [r["task"] for r in found["training_atlas"]["records"]] == ["boolq", "arc_easy", "winogrande"]
    assert found["training_atlas"]["rows"] == [
        ["BoolQ", "32B [32B, 32B]", "2B [2B, 2B]"],
        ["ARC-Easy", "4B [4B, 4B]", "—"],
        ["WinoGrande", "not yet", "—"],
    ]


def test_predictions_are_matched_by_instance_index_then_native_id():
    """Rows of a predictions file out of order are put in (instance_index, native_id) order; rows in
    order are taken as they are."""
    rows = pd.DataFrame(
        {"instance_index": [2, 0, 1, 1], "native_id": ["c", "a", "z", "b"], "correct": [1, 0, 1, 0]}
    )
    assert _in_order(rows)[["instance_index", "native_id"]].values.tolist() == [
        [0, "a"],
        [1, "b"],
        [1, "z"],
        [2, "c"],
    ]
    ordered = rows.iloc[[1, 3, 0]]
    assert _in_order(ordered) is ordered


def test_the_charts_log_axis_ticks_decades_within_the_tokens():
    """Ticks at the powers of ten inside the series' tokens; vega's own where fewer than two are (a
    series within one decade still draws)."""
    rows = [{"kind": "value", "tokens": value} for value in (3e9, 2e10, 4e11)]
    assert decades(rows) == [1e10, 1e11]
    assert decades([{"kind": "value", "tokens": value} for value in (1e12, 2e12)]) is None
    record = {
        "series": "S", "task": "boolq", "task_name": "BoolQ", "method": MCF, "method_label": "MCF",
        "recommended": False, "checkpoint": "c", "model": "m", "display_name": "m", "value": 0.5,
        "ci_low": 0.4, "ci_high": 0.6, "n": 10, "partial": True,
    }  # fmt: skip
    records = [{**record, "training_tokens": value, "model": str(value)} for value in (1e12, 2e12)]
    chart = series_spec(records, [], {}, ["BoolQ"])
    assert "values" not in chart.spec["spec"]["layer"][0]["encoding"]["x"]["axis"]
    assert static_svg(chart.spec, "narrow").startswith("<svg")


# -- the site ------------------------------------------------------------------------------------------------

TRICKY = "OLMo <b>7B</b> & co"
"""A series name with markup: the pages show it as text."""


@pytest.fixture(scope="module")
def training_site(tmp_path_factory) -> Path:
    """Tables and site of two series: one that crosses on BoolQ and not on ARC-Easy, one (named
    :data:`TRICKY`) that crosses on both."""
    root = tmp_path_factory.mktemp("training-site")
    rng = np.random.default_rng(8)
    n = 300
    ranks = rng.permutation(n)
    models = []
    for name, crossings in (
        ("Pythia-like", {"boolq": 3, "arc_easy": None}),
        (TRICKY, {"boolq": 2, "arc_easy": 4}),
    ):
        for task, crossing in crossings.items():
            cf = [exactly(0.45 + 0.03 * k, ranks) for k in range(7)]
            mcf = [exactly(0.9 if crossing is not None and k >= crossing else 0.3, ranks) for k in range(7)]
            models += write_series(root, name, task, cf, mcf)
    unique = list({info.name: info for info in models}.values())  # each model is on both tasks
    models_file = write_models_file(root / "models.json", unique)
    scores, out = str(root / "scores"), root / "tables"
    assert olmes("tables", "--scores", scores, "--models", str(models_file), "--out", str(out))[0] == 0
    assert olmes("site", "--scores", scores, "--tables", str(out), "--out", str(root / "site"))[0] == 0
    return root / "site"


def test_the_training_pages_replace_the_checkpoints_page(training_site):
    pages = {str(path.relative_to(training_site)) for path in training_site.rglob("*.html")}
    assert {"training.html", "training/Pythia-like.html", "training/OLMo-b-7B-b-co.html"} <= pages
    assert "checkpoints.html" not in pages
    index = (training_site / "training.html").read_text(encoding="utf-8")
    assert 'href="training/Pythia-like.html"' in index and "OLMo &lt;b&gt;7B&lt;/b&gt; &amp; co" in index
    assert "<b>7B</b>" not in index
    assert "1 of 2 tasks" in index and "2 of 2 tasks" in index


def test_a_series_page_draws_its_transitions_in_chromium(training_site, browser):
    """The series page in Chromium: no console error; both charts drawn at build time, with a transition
    rule in each task that crossed (BoolQ) and the "not yet" note where it did not (ARC-Easy), then live
    by vega with the same transitions; the transitions table holds this series' rows only."""
    with watched(browser) as w:
        page = w.goto((training_site / "training" / "Pythia-like.html").as_uri())
        for chart in ("figure1", "training-measures"):
            assert page.locator(f"#{chart} svg .transition_marks line").count() == 1, chart
            notes = page.locator(f"#{chart} svg .not_yet_marks text").all_text_contents()
            assert notes == ["not yet"], notes
        assert page.locator("#series-transitions tbody tr").count() == 2
        assert page.locator("#series-transitions tbody tr", has_text=TRICKY).count() == 0
        assert "Not yet on ARC-Easy." in page.locator(".lede").inner_text()
        assert draw_charts_live(page) == 2
        for chart in ("figure1", "training-measures"):
            assert page.locator(f"#{chart} svg .transition_marks line").count() == 1, chart
        tricky = w.goto((training_site / "training" / "OLMo-b-7B-b-co.html").as_uri())
        assert tricky.locator("h1").inner_text() == f"{TRICKY} over training"
        assert tricky.locator("#figure1 svg .transition_marks line").count() == 2
        w.goto((training_site / "training.html").as_uri())
        assert w.errors == []
