"""The paper's tables, the statistics and the two commands, from hand-made scores with known answers."""

from __future__ import annotations

import json
import shutil
import typing
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from olmes.cli.main import main
from olmes.core import records
from olmes.core.errors import OlmesError
from olmes.core.methods import cf_method
from olmes.core.records import SCORES_FORMAT
from olmes.core.tasks import TASKS
from olmes.scoring.flags import chance_accuracy
from olmes.scoring.predictions import NEAR_TIE_NATS
from olmes.scoring.statistics import olmes_result
from olmes.site import inputs
from olmes.tables import bootstrap, build, figures, leaderboard, render, results, score_tables, table3
from olmes.tables.digest import PredictionDigest
from tests.helpers import compile_latex, write_model_files


def fake_summary(model: str, task: str, accuracies: dict[str, float], partial: bool = False) -> dict:
    """A score summary as olmes score writes it, with the given accuracy per method."""
    methods = {}
    for name, accuracy in accuracies.items():
        methods[name] = {"accuracy": accuracy, "stderr": 0.01, "n": 100, "correct": round(100 * accuracy)}
        methods[name]["near_ties"] = 2
        if task == "mmlu":
            methods[name].update(micro_accuracy=accuracy - 0.01, subjects={"anatomy": {}, "virology": {}})
    best = olmes_result(methods, TASKS[task])
    return {
        "format": SCORES_FORMAT.tag, "model": model, "task": task, "display_name": TASKS[task].display_name,
        "recommended_norm": TASKS[task].recommended_norm, "n_instances": 100, "full_count": 100,
        "limit": 100 if partial else None, "partial": partial,
        "partial_reasons": ["run with limit 100"] if partial else [], "methods": methods,
        "best_of_two": best, "near_tie_nats": NEAR_TIE_NATS, "inputs": {},
    }  # fmt: skip


def make_scores(summaries: list[dict], models: list[results.ModelInfo] | None = None) -> results.ScoreSet:
    keyed = {(s["model"], s["task"]): s for s in summaries}
    names = list(dict.fromkeys(s["model"] for s in summaries))
    models = models or [results.ModelInfo(name, name) for name in names]
    task_order = [task for task in TASKS if any(t == task for _, t in keyed)]
    return results.ScoreSet(keyed, dict.fromkeys(keyed, Path("x")), models, task_order)


def shown(rows: list[list[render.Cell]]) -> list[list[str]]:
    """The rows as displayed (what the CSV holds)."""
    return render.display_rows(rows)


def cf_mcf(cf: float, mcf: float, task: str) -> dict[str, float]:
    return {cf_method(TASKS[task].recommended_norm).key: cf, "mcf": mcf}


# -- Table 3 -----------------------------------------------------------------------------------------


def test_table3_win_rates_count_every_tied_winner_and_diff_oracle():
    arc = [
        fake_summary("m1", "arc_challenge", {"cf_none": 0.5, "cf_token": 0.6, "cf_char": 0.6, "cf_pmi": 0.4}),
        fake_summary("m2", "arc_challenge", {"cf_none": 0.5, "cf_token": 0.6, "cf_char": 0.6, "cf_pmi": 0.7}),
        fake_summary("m3", "arc_challenge", {"cf_none": 0.5, "cf_token": 0.5, "cf_char": 0.5, "cf_pmi": 0.5}),
    ]
    boolq = [
        fake_summary(m, "boolq", {"cf_none": 0.7, "cf_token": 0.6, "cf_char": 0.6}) for m in ("m1", "m2")
    ]
    table = table3.table3(make_scores(arc + boolq))
    record = table.records[0]
    assert record["wins"] == {"none": 1, "token": 2, "char": 2, "pmi": 2}
    assert record["diff_oracle"] == pytest.approx((0.2 + 0.0 + 0.0) / 3)
    rows = {row[0]: row[1:] for row in shown(table.rows)}
    assert rows["token"] == ["66.7", "0.0"] and rows["none"] == ["33.3", "100.0"]
    assert rows["pmi"] == ["66.7", render.MISSING]  # BoolQ has no pmi rows: pmi does not compete
    assert rows["OLMES choice"] == ["pmi", "none"] and rows["Diff oracle"] == ["6.7", "0.0"]
    values = {row[0].display: [cell.value for cell in row[1:]] for row in table.rows}
    assert values["token"] == [pytest.approx(2 / 3), 0.0] and values["pmi"] == [pytest.approx(2 / 3), None]
    assert values["OLMES choice"] == [None, None] and values["Models"] == [3, 2]
    assert "every normalization whose accuracy equals the best counts as a winner" in table.caption


def test_table3_counts_partial_models():
    summaries = [fake_summary("m1", "piqa", {"cf_none": 0.5, "cf_token": 0.6, "cf_char": 0.7}, partial=True)]
    rows = {row[0]: row[1:] for row in shown(table3.table3(make_scores(summaries)).rows)}
    assert rows["Models"] == [f"1 (1{render.PARTIAL_MARK})"]


# -- Table 4 and the averages ---------------------------------------------------------------------


def ten_tasks(model: str, cf: float, mcf: float, partial_task: str | None = None) -> list[dict]:
    return [fake_summary(model, task, cf_mcf(cf, mcf, task), partial=task == partial_task) for task in TASKS]


def test_table4_daggers_average_and_partial_runs():
    summaries = ten_tasks("full", 0.6, 0.4)
    summaries[3] = fake_summary("full", "csqa", cf_mcf(0.5, 0.8, "csqa"))  # MCF wins on CSQA
    summaries += ten_tasks("limited", 0.6, 0.4, partial_task="boolq")
    summaries += [fake_summary("subset", "piqa", cf_mcf(0.6, 0.4, "piqa"))]
    table = score_tables.table4(make_scores(summaries))
    (_, complete), (label, partial) = table.groups
    assert label == results.PARTIAL_GROUP
    full_row, subset_row = shown(complete)
    partial = shown(partial)
    assert full_row[table.header.index("CommonsenseQA")] == "80.0" + render.DAGGER
    assert full_row[table.header.index("PIQA")] == "60.0"
    assert full_row[-1] == f"{100 * (0.6 * 9 + 0.8) / 10:.1f}"
    assert subset_row[0] == "subset" and subset_row[-1] == render.MISSING  # 1 task of 10: no average
    assert partial[0][0] == "limited (partial)" and partial[0][-1] == render.MISSING
    assert partial[0][table.header.index("BoolQ")] == "60.0" + render.PARTIAL_MARK
    limited = next(r for r in table.records if r["model"] == "limited")
    assert (
        limited["tasks"]["boolq"]["olmes_score"] is None and limited["tasks"]["boolq"]["best_of_two"] == 0.6
    )
    assert limited["tasks"]["piqa"]["olmes_score"] == 0.6
    full = next(r for r in table.records if r["model"] == "full")
    assert full["averages"]["Average"] == pytest.approx((0.6 * 9 + 0.8) / 10)
    assert full["average_stderr"] == pytest.approx(0.01 / 10**0.5)  # ten errors of 0.01, independent
    assert limited["averages"]["Average"] is None and limited["average_stderr"] is None
    assert complete[0][-1].value == full["averages"]["Average"] and complete[0][0].value is None
    assert "not an OLMES score" in table.caption
    latex = render.table_latex(table)
    assert "Model & ARC-C & ARC-E & BoolQ & CSQA & HSwag" in latex  # short labels keep ten tasks narrow
    assert r"\midrule" + "\n" + r"\multicolumn{12}{l}{\emph{Partial runs" in latex


def test_tables_6_and_7_with_max_averages():
    summaries = ten_tasks("a", 0.6, 0.4)
    summaries[0] = fake_summary("a", "arc_challenge", cf_mcf(0.3, 0.9, "arc_challenge"))
    scores = make_scores(summaries)
    cf, mcf = score_tables.cf_accuracy_table(scores), score_tables.mcf_accuracy_table(scores)
    assert cf.header[-2:] == ["Average", "Max average"]
    (cf_row,), (mcf_row,) = shown(cf.rows), shown(mcf.rows)
    assert cf_row[1] == "30.0" and mcf_row[1] == "90.0"
    assert cf_row[-2] == f"{100 * (0.3 + 0.6 * 9) / 10:.1f}"
    assert mcf_row[-2] == f"{100 * (0.9 + 0.4 * 9) / 10:.1f}"
    assert cf_row[-1] == mcf_row[-1] == f"{100 * (0.9 + 0.6 * 9) / 10:.1f}"


def test_table8_mmlu_macro_and_micro():
    (table,) = score_tables.table8(make_scores([fake_summary("a", "mmlu", {"cf_char": 0.5, "mcf": 0.6})]))
    assert table.key == "table8_mmlu"
    assert table.header[1:5] == ["MCF macro", "MCF micro", "CF macro", "CF micro"]  # the paper's order
    assert shown(table.rows) == [["a", "60.0", "59.0", "50.0", "49.0", "2", "100"]]
    assert [cell.value for cell in table.rows[0]] == [None, 0.6, 0.59, 0.5, 0.49, 2, 100]


def test_one_table_per_normalization():
    summaries = [fake_summary("a", "boolq", {"cf_none": 0.7, "cf_token": 0.6, "cf_char": 0.5})]
    nine, ten, eleven, twelve = score_tables.normalization_tables(make_scores(summaries))
    keys = [f"normalization_{norm}" for norm in ("none", "token", "char", "pmi")]
    assert [t.key for t in (nine, ten, eleven, twelve)] == keys
    assert [shown(table.rows)[0][1] for table in (nine, eleven, twelve)] == ["70.0", "50.0", render.MISSING]
    assert cf_method("char").formula in eleven.caption


def test_near_ties_table_shows_cf_and_mcf_counts():
    table = score_tables.near_ties_table(
        make_scores([fake_summary("a", "boolq", {"cf_none": 0.7, "mcf": 0.5})])
    )
    assert shown(table.rows) == [["a", "2 / 2"]]


# -- the leaderboard's rows ----------------------------------------------------------------------------


def test_leaderboard_ranks_ties_chance_and_flags():
    summaries = ten_tasks("a", 0.6, 0.4) + ten_tasks("b", 0.7, 0.4)
    summaries += ten_tasks("e", 0.6, 0.4) + ten_tasks("f", 0.6, 0.4)  # equal averages: by name
    summaries[TASKS_INDEX["csqa"]] = fake_summary("a", "csqa", cf_mcf(0.5, 0.7, "csqa"))  # MCF wins
    summaries += ten_tasks("p", 0.9, 0.9, partial_task="boolq")  # partial: last and never ranked
    summaries += [fake_summary("c", "piqa", cf_mcf(0.9, 0.1, "piqa"))]  # no average: after a, b, e
    summaries += [fake_summary("d", "piqa", cf_mcf(0.5, 0.1, "piqa"))]
    summaries += [fake_summary("d", "boolq", {"mcf": 0.8})]  # no CF: no best-of-two score
    names = {"a": "Alpha", "b": "Beta", "e": "Echo", "f": "Bravo", "p": "Partial", "c": "C", "d": "D"}
    scores = make_scores(summaries, [results.ModelInfo(name, display) for name, display in names.items()])
    frame = pd.DataFrame({"method": ["mcf"] * 4 + ["cf_char"] * 4, "num_choices": [2, 2, 2, 4] * 2})
    chance = chance_accuracy(frame)  # of the predictions behind each cell: (3 x 1/2 + 1/4) / 4
    ids = np.arange(100)
    for key, summary in scores.summaries.items():  # right on the first instances, as many as the score says
        right = ids < round(100 * (summary["best_of_two"] or {"score": 0})["score"])
        scores._digests[key] = PredictionDigest(
            chance, [], ids, json.dumps(ids.tolist()).encode(), None, [], right
        )
    pairs = [("piqa", "b", "a", True), ("piqa", "a", "c", False), ("boolq", "b", "e", None)]
    boot = render.Table("paired_bootstrap", "", "", [], [], [
        {"task": task, "higher": higher, "lower": lower, "tied": tied} for task, higher, lower, tied in pairs
    ])  # fmt: skip
    flags = [
        {"model": "a", "task": "piqa", "code": "one_answer", "method": "mcf", "message": "always A"},
        {"model": "a", "task": "piqa", "code": "near_ties", "method": "cf_none", "message": "not CF char"},
        {"model": "a", "task": "boolq", "code": "nan", "method": "mcf", "message": "another task"},
    ]
    table = leaderboard.leaderboard_table(scores, score_tables.table4(scores), boot, flags)
    rows = table.records
    # complete models by average (equal ones by display name), then those without one (by the mean
    # of the scores they have), then partial runs
    assert [(r["model"], r["rank"]) for r in rows] == [
        ("b", 1), ("a", 2), ("f", 3), ("e", 4), ("c", None), ("d", None), ("p", None)
    ]  # fmt: skip
    a, c, d, p = rows[1], rows[4], rows[5], rows[6]
    assert a["average"] == pytest.approx((0.6 * 9 + 0.7) / 10) and a["average_stderr"] is not None
    required = records.LeaderboardRow.__required_keys__  # kind, source: only with reported rows
    assert list(a) == [key for key in typing.get_type_hints(records.LeaderboardRow) if key in required]
    assert list(a["tasks"]) == scores.tasks and c["tasks"]["boolq"] is None  # not scored
    piqa = a["tasks"]["piqa"]
    assert list(piqa) == list(typing.get_type_hints(records.LeaderboardTask))
    assert piqa["statistically_tied_with"] == ["b"]
    assert rows[0]["tasks"]["piqa"]["statistically_tied_with"] == ["a"]
    assert c["tasks"]["piqa"]["statistically_tied_with"] == []  # separated from a
    assert rows[3]["tasks"]["boolq"]["statistically_tied_with"] == []  # tied None: no comparison
    assert piqa["flags"] == [{"code": "one_answer", "method": "mcf", "message": "always A"}]
    assert piqa["chance"] == pytest.approx(0.4375) and piqa["n"] == 100 and piqa["method"] == "cf_char"
    assert (piqa["score"], piqa["stderr"], piqa["formulation"], piqa["dagger"]) == (0.6, 0.01, "cf", False)
    assert (piqa["cf_accuracy"], piqa["mcf_accuracy"]) == (0.6, 0.4)
    csqa = a["tasks"]["csqa"]
    assert (csqa["score"], csqa["formulation"], csqa["dagger"], csqa["method"]) == (0.7, "mcf", True, "mcf")
    missing = d["tasks"]["boolq"]  # MCF only: no best-of-two score, the cell still says what it has
    assert (missing["score"], missing["formulation"], missing["method"]) == (None, None, None)
    assert missing["n"] == 100 and missing["chance"] == pytest.approx(0.4375)
    assert p["partial"] and p["average"] is None and p["tasks"]["boolq"]["partial"]
    (_, ranked), (label, partial) = table.groups
    assert label == results.PARTIAL_GROUP
    assert shown(partial)[0][:3] == ["Partial (partial)", render.MISSING, render.MISSING]
    header = table.header
    expected = [["Beta", "1"], ["Alpha", "2"], ["Bravo", "3"], ["Echo", "4"], ["C", "—"], ["D", "—"]]
    assert [row[:2] for row in shown(ranked)] == expected
    assert shown(ranked)[1][header.index("CommonsenseQA")] == "70.0" + render.DAGGER
    assert shown(ranked)[5][header.index("BoolQ")] == render.MISSING
    assert ranked[0][1].value == 1 and ranked[0][header.index("Average")].value == rows[0]["average"]
    # rank intervals and tie groups: b and a apart, f and e the same answers (tied in every draw)
    intervals = [(r["rank_low"], r["rank_high"], r["tie_group"], r["interval"]) for r in rows]
    assert (
        intervals
        == [(1, 1, 1, "paired bootstrap"), (2, 2, 2, "paired bootstrap")]
        + [(3, 4, 3, "paired bootstrap")] * 2
        + [(None, None, None, None)] * 3
    )
    assert [row[2:4] for row in shown(ranked)] == [["[1, 1]", "1"], ["[2, 2]", "2"], ["[3, 4]", "3"],
                                                  ["[3, 4]", "3"], ["—", "—"], ["—", "—"]]  # fmt: skip
    assert shown(partial)[0][header.index("BoolQ")] == "90.0" + render.PARTIAL_MARK


def test_the_site_reads_the_tables_the_builders_declare(tmp_path):
    assert build.TABLE_KEYS[-1] == "leaderboard" and len(set(build.TABLE_KEYS)) == len(build.TABLE_KEYS)
    assert inputs.TABLE_KEYS is build.TABLE_KEYS and inputs.FIGURE_KEYS is figures.FIGURE_KEYS
    scores = results.load_scores(write_model_files(tmp_path, "m", 0.7), None)
    built = [table.key for table in build.all_tables(scores, resamples=10)]
    assert tuple(built) == build.TABLE_KEYS


TASKS_INDEX = {task: position for position, task in enumerate(TASKS)}


# -- paired bootstrap --------------------------------------------------------------------------------


def test_paired_bootstrap_is_reproducible_with_its_seed():
    rng = np.random.default_rng(0)
    a, b = rng.random(300) < 0.6, rng.random(300) < 0.5
    first = bootstrap.paired_bootstrap(a, b, seed=7)
    assert first == bootstrap.paired_bootstrap(a, b, seed=7)
    assert any(first != bootstrap.paired_bootstrap(a, b, seed=seed) for seed in range(8, 13))
    estimate, low, high = first
    assert estimate == pytest.approx(a.mean() - b.mean()) and low < estimate < high


def test_paired_bootstrap_ties_and_clear_differences():
    same = np.array([True, False] * 50)
    assert bootstrap.paired_bootstrap(same, same) == (0.0, 0.0, 0.0)
    better, worse = np.ones(200, bool), np.zeros(200, bool)
    worse[:20] = True
    estimate, low, high = bootstrap.paired_bootstrap(better, worse)
    assert estimate == pytest.approx(0.9) and low > 0


def test_paired_bootstrap_macro_over_strata():
    a = np.array([1, 1, 0, 0, 0, 0], bool)  # stratum x: 2/2, stratum y: 0/4
    b = np.zeros(6, bool)
    estimate, _, _ = bootstrap.paired_bootstrap(a, b, np.array(["x", "x", "y", "y", "y", "y"]))
    assert estimate == pytest.approx(0.5)  # macro (1 + 0) / 2, not micro 2/6


# -- the models file --------------------------------------------------------------------------------


def test_models_file(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(
        "models:\n"
        "  - {name: ckpt-b, display_name: OLMo step 2, series: OLMo, training_tokens: 2.0e12}\n"
        "  - {name: ckpt-a, series: OLMo, training_tokens: 1000000000000, checkpoint: step1}\n"
    )
    first, second = results.read_models_file(path)
    assert first == results.ModelInfo("ckpt-b", "OLMo step 2", "OLMo", 2.0e12, None)
    assert second.display_name == "ckpt-a" and second.training_tokens == 1e12
    for bad, message in (
        ("models: [{name: a, tokens: 3}]", "unknown key"),
        ("models: [{name: a}, {name: a}]", "listed twice"),
        ("models: [{name: a, training_tokens: many}]", "positive number"),
        ("name: a", "top-level 'models:' list"),
    ):
        path.write_text(bad)
        with pytest.raises(OlmesError, match=message):
            results.read_models_file(path)


def test_figure1_orders_checkpoints_by_training_tokens():
    models = [
        results.ModelInfo("late", "late", "S", 3e12), results.ModelInfo("early", "early", "S", 1e12),
        results.ModelInfo("other", "other"),
    ]  # fmt: skip
    summaries = [fake_summary(m.name, "mmlu", {"cf_char": 0.3, "mcf": 0.5}) for m in models]
    rows = figures.figure1_data(make_scores(summaries, models))
    assert [(r["model"], r["training_tokens"], r["mcf_accuracy"]) for r in rows] == [
        ("early", 1e12, 0.5), ("late", 3e12, 0.5)
    ]  # fmt: skip
    assert len(figures.figure2_data(make_scores(summaries, models))) == 3


# -- LaTeX -------------------------------------------------------------------------------------------


def test_latex_escapes_model_names():
    assert render.latex_escape("a_b & 50% #1 {x} ~^\\") == (
        r"a\_b \& 50\% \#1 \{x\} \textasciitilde{}\textasciicircum{}\textbackslash{}"
    )
    assert render.latex_escape("61.0†ᵖ") == r"61.0$^{\dagger}$\textsuperscript{p}"


# -- both commands, end to end ---------------------------------------------------------------------


def test_score_and_tables_commands_end_to_end(tmp_path):
    write_model_files(tmp_path, "tiny_lm", 0.9)
    write_model_files(tmp_path, "small&lm", 0.5)
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"models": [{"name": "small&lm", "display_name": "Small & LM 50%"}]}))
    out = tmp_path / "tables"
    argv = ["tables", "--scores", str(tmp_path / "scores"), "--out", str(out), "--models", str(models)]
    assert main(argv) == 0
    index = json.loads((out / "index.json").read_text())
    expected = [
        "table3_normalizations",
        "table4_olmes",
        "table6_cf_mcf",
        "table7_cf_mcf",
        "cf_accuracy",
        "mcf_accuracy",
        "table8_mmlu",
        "near_ties",
    ]
    expected += ["table9_olmes_normalization", "table10_normalizations", "table12_normalizations"]
    expected += ["normalization_none", "normalization_pmi", "paired_bootstrap", "paper_check"]
    for key in expected:
        assert {f"{key}.csv", f"{key}.json", f"{key}.tex"} <= set(index["files"])
    assert {"figure1_checkpoints.csv", "figure2_cf_vs_mcf.json"} <= set(index["files"])
    assert [m["name"] for m in index["models"]] == ["small&lm", "tiny_lm"]
    table4 = pd.read_csv(out / "table4_olmes.csv")
    assert list(table4["Model"]) == ["Small & LM 50% (partial)", "tiny_lm (partial)"]
    assert table4["Average"].isna().all() or (table4["Average"] == render.MISSING).all()
    for key in expected:  # the cells' values, parallel to the displayed rows
        written = json.loads((out / f"{key}.json").read_text())
        assert [len(row) for row in written["values"]] == [len(row) for row in written["rows"]]
    table8 = json.loads((out / "table8_mmlu.json").read_text())
    assert [row[1] for row in table8["values"]] == [record["mcf"]["macro"] for record in table8["records"]]
    bootstrap = json.loads((out / "paired_bootstrap.json").read_text())["records"]
    assert [r["task"] for r in bootstrap] == ["boolq", "mmlu"]
    assert all(r["higher"] == "tiny_lm" and r["n_shared"] == 40 for r in bootstrap)
    again = tmp_path / "again"
    assert (
        main(["tables", "--scores", str(tmp_path / "scores"), "--out", str(again), "--models", str(models)])
        == 0
    )
    assert (again / "paired_bootstrap.json").read_text() == (out / "paired_bootstrap.json").read_text()
    tex = (out / "table4_olmes.tex").read_text()
    assert r"Small \& LM 50\%" in tex and r"\toprule" in tex and r"\bottomrule" in tex
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
    done = compile_latex(out)
    assert done.returncode == 0, done.stdout[-3000:]


def test_tables_command_errors(tmp_path, capsys):
    assert main(["tables", "--scores", str(tmp_path / "nothing"), "--out", str(tmp_path / "t")]) == 2
    assert "no such score summary" in capsys.readouterr().err
    files = write_model_files(tmp_path, "m", 0.7)
    twin = tmp_path / "twin.scores.json"
    shutil.copy(files[0], twin)
    assert main(["tables", "--scores", files[0], str(twin), "--out", str(tmp_path / "t")]) == 2
    assert "both hold scores of model 'm' on boolq" in capsys.readouterr().err
    predictions = Path(files[0]).parent / "boolq.predictions.parquet"
    assert main(["tables", "--scores", str(predictions), "--out", str(tmp_path / "t")]) == 2
    assert "is a predictions file" in capsys.readouterr().err
    pd.read_parquet(predictions).head(3).to_parquet(predictions)
    assert main(["tables", "--scores", *files, "--out", str(tmp_path / "t")]) == 2  # read for the flags
    assert "changed after" in capsys.readouterr().err
