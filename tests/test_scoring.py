"""Scoring on hand-built log-prob files whose right answers are known."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from olmes.cli.main import main
from olmes.core.errors import OlmesError
from olmes.core.records import PREDICTION_COLUMNS, RUN_FORMAT, SCORES_FORMAT, olmes_score
from olmes.core.tasks import TASKS
from olmes.scoring import score as scoring
from olmes.scoring.predictions import decide, gather_predictions, read_predictions_file, write_predictions
from olmes.scoring.statistics import accuracy_stats, partial_reasons, standard_error
from tests.helpers import cf_files, instance_rows, mcf_rows, run_record, write


def method(summary, name):
    return summary["methods"][name]


# -- each normalization picks the expected choice ----------------------------------------------------


def test_each_normalization_picks_its_choice(tmp_path):
    continuations = [" a", " bb", " cccccc", " ddddddddddddddddddd"]  # 2, 3, 7 and 20 characters
    sums = [-2.0, -2.2, -4.9, -6.0]
    tokens = [1, 1, 1, 1]
    uncond = [-1.0, -1.5, -5.0, -3.0]
    # none/token: -2.0 is best -> 0.  char: -1.0, -0.73, -0.7, -0.3 -> 3.  pmi: -1.0, -0.7, 0.1, -3.0 -> 2.
    rows = instance_rows("arc_challenge", "cf", 0, continuations, sums, 2, tokens=tokens, uncond=uncond)
    predictions, summary = scoring.score_task("m", **cf_files(tmp_path, "cf.parquet", rows))
    picked = dict(zip(predictions["method"], predictions["prediction"], strict=True))
    assert picked == {"cf_none": 0, "cf_token": 0, "cf_char": 3, "cf_pmi": 2}
    assert method(summary, "cf_pmi")["accuracy"] == 1.0
    assert method(summary, "cf_none")["accuracy"] == 0.0


def test_token_normalization_divides_by_token_count(tmp_path):
    rows = instance_rows("arc_easy", "cf", 0, [" x", " y"], [-4.0, -3.0], 0, tokens=[4, 1], uncond=[-1, -1])
    predictions, _ = scoring.score_task("m", **cf_files(tmp_path, "cf.parquet", rows))
    picked = dict(zip(predictions["method"], predictions["prediction"], strict=True))
    assert picked["cf_none"] == 1 and picked["cf_token"] == 0  # -1.0/token beats -3.0/token


def test_char_counts_the_leading_space(tmp_path):
    # " a" is 2 characters and " abcdef" 7: -1.9/2 = -0.95 beats -7.0/7 = -1.0, so choice 0 wins.
    # Without the space it would be -1.9/1 = -1.9 against -7.0/6 = -1.17, and choice 1 would win.
    rows = instance_rows("arc_easy", "cf", 0, [" a", " abcdef"], [-1.9, -7.0], 0, uncond=[-1, -1])
    predictions, summary = scoring.score_task("m", **cf_files(tmp_path, "cf.parquet", rows))
    char = predictions[predictions["method"] == "cf_char"].iloc[0]
    assert char["prediction"] == 0 and bool(char["correct"])
    assert method(summary, "cf_char")["accuracy"] == 1.0


def test_pmi_is_conditional_minus_unconditional(tmp_path):
    rows = instance_rows("csqa", "cf", 0, [" x", " y"], [-5.0, -3.0], 0, uncond=[-9.0, -3.5])
    predictions, _ = scoring.score_task("m", **cf_files(tmp_path, "cf.parquet", rows))
    pmi = predictions[predictions["method"] == "cf_pmi"].iloc[0]
    assert pmi["prediction"] == 0  # 4.0 against 0.5
    assert pmi["top_gap"] == pytest.approx(3.5)


def test_first_index_wins_exact_ties(tmp_path):
    rows = instance_rows("arc_easy", "cf", 0, [" x", " y", " z"], [-2.0, -1.0, -1.0], 2, uncond=[0, 0, 0])
    predictions, summary = scoring.score_task("m", **cf_files(tmp_path, "cf.parquet", rows))
    none = predictions[predictions["method"] == "cf_none"].iloc[0]
    assert none["prediction"] == 1 and not none["correct"]
    assert bool(none["near_tie"]) and method(summary, "cf_none")["near_ties"] == 1


def test_near_ties_count_gaps_up_to_1e_4(tmp_path):
    scores = np.array([[-1.0, -1.00005, -3.0], [-1.0, -1.001, -3.0], [-2.0, -1.0, np.nan]])
    predictions, gaps = decide(scores)
    assert predictions.tolist() == [0, 0, 1]
    assert gaps.tolist() == pytest.approx([0.00005, 0.001, 1.0])
    rows = []
    for index, second in enumerate([-1.00005, -1.0001, -1.0002]):  # top gaps 0.5e-4, 1e-4, 2e-4 nats
        rows += instance_rows("boolq", "mcf", index, [" A", " B"], [-1.0, second], 0)
    marked, summary = scoring.score_task("m", mcf_path=write(tmp_path, "mcf.parquet", rows))
    assert marked["near_tie"].tolist() == [True, True, False]
    assert method(summary, "mcf")["near_ties"] == 2


# -- BoolQ, WinoGrande, ragged choices ---------------------------------------------------------------


def test_boolq_uses_none_and_needs_no_pmi(tmp_path):
    # gold 0 = " yes" (True). none picks " no" (-1.0 > -1.2); char picks " yes" (-1.2/4 > -1.0/3).
    cf = instance_rows("boolq", "cf", 0, [" yes", " no"], [-1.2, -1.0], 0)
    mcf = instance_rows("boolq", "mcf", 0, [" A", " B"], [-0.1, -2.0], 0)
    _, summary = scoring.score_task(
        "m", **cf_files(tmp_path, "cf.parquet", cf), mcf_path=write(tmp_path, "mcf.parquet", mcf)
    )
    assert "cf_pmi" not in summary["methods"]
    assert method(summary, "cf_none")["accuracy"] == 0.0
    assert method(summary, "cf_char")["accuracy"] == 1.0
    best = summary["best_of_two"]
    assert best["cf_method"] == "cf_none" and best["dagger"] and best["score"] == 1.0


def test_winogrande_compares_one_continuation_under_each_context(tmp_path):
    # Same continuation after each option's context: same token and character counts, so every
    # normalization agrees with the plain sum.
    rows = []
    for index, (sums, label) in enumerate((([-7.5, -6.0], 1), ([-3.0, -4.0], 1), ([-2.0, -2.5], 0))):
        rows += instance_rows("winogrande", "cf", index, [" is heavy."] * 2, sums, label, tokens=[3, 3])
    predictions, summary = scoring.score_task("m", **cf_files(tmp_path, "cf.parquet", rows))
    for name in ("cf_none", "cf_token", "cf_char"):
        assert predictions[predictions["method"] == name]["prediction"].tolist() == [1, 0, 0]
        assert method(summary, name)["accuracy"] == pytest.approx(2 / 3)


def test_instances_with_different_numbers_of_choices(tmp_path):
    rows = instance_rows("arc_challenge", "cf", 0, [" a", " b", " c"], [-3, -2, -1], 2, uncond=[0, 0, 0])
    rows += instance_rows("arc_challenge", "cf", 1, [" a", " b", " c", " d", " e"], [-5, -4, -3, -2, -1], 4,
                          uncond=[0] * 5)  # fmt: skip
    predictions, summary = scoring.score_task("m", **cf_files(tmp_path, "cf.parquet", rows))
    assert predictions[predictions["method"] == "cf_none"]["prediction"].tolist() == [2, 4]
    assert method(summary, "cf_pmi")["accuracy"] == 1.0


# -- the OLMES score, MMLU, partial runs, standard errors -------------------------------------------


def test_dagger_when_mcf_is_strictly_better(tmp_path, monkeypatch):
    complete_run_of_4 = dataclasses.replace(TASKS["hellaswag"], split_size=4)
    monkeypatch.setitem(TASKS, "hellaswag", complete_run_of_4)
    cf, labels = [], [0, 1, 2, 3]
    for index, label in enumerate(labels):  # CF right on the first two instances only
        sums = [-4.0] * 4
        sums[label if index < 2 else (label + 1) % 4] = -1.0
        cf += instance_rows("hellaswag", "cf", index, [" a", " b", " c", " d"], sums, label, uncond=[0] * 4)
    mcf_better = mcf_rows("hellaswag", labels, [0, 1, 2, 0])  # 3 of 4
    mcf_equal = mcf_rows("hellaswag", labels, [0, 1, 0, 0])  # 2 of 4
    cf_paths = cf_files(tmp_path, "cf.parquet", cf)
    _, better = scoring.score_task("m", **cf_paths, mcf_path=write(tmp_path, "mcf1.parquet", mcf_better))
    _, equal = scoring.score_task("m", **cf_paths, mcf_path=write(tmp_path, "mcf2.parquet", mcf_equal))
    assert "olmes" not in better and olmes_score(better) == better["best_of_two"]
    assert olmes_score(better)["dagger"] and olmes_score(better)["score"] == 0.75
    assert olmes_score(better)["method"] == "mcf" and olmes_score(better)["cf_method"] == "cf_char"
    assert not olmes_score(equal)["dagger"] and olmes_score(equal)["formulation"] == "cf"
    assert olmes_score(equal)["score"] == 0.5


def test_mmlu_macro_and_micro_on_uneven_subjects(tmp_path):
    rows = []
    layout = [("anatomy", True), ("virology", True), ("virology", False), ("virology", False)]
    for index, (subject, right) in enumerate(layout):
        sums = [-2.0, -1.0, -3.0, -3.0] if right else [-1.0, -2.0, -3.0, -3.0]
        rows += instance_rows("mmlu", "cf", index, [" w", " x", " y", " z"], sums, 1, subject=subject)
    _, summary = scoring.score_task("m", **cf_files(tmp_path, "cf.parquet", rows))
    char = method(summary, "cf_char")
    assert char["accuracy"] == pytest.approx((1.0 + 1 / 3) / 2)  # macro: the score
    assert char["micro_accuracy"] == pytest.approx(0.5)
    assert char["subjects"]["anatomy"]["n"] == 1 and char["subjects"]["virology"]["correct"] == 1
    virology_se = math.sqrt((1 / 3) * (2 / 3) / 2)
    assert char["stderr"] == pytest.approx(virology_se / 2)  # anatomy's single instance adds nothing


def test_standard_error_formula():
    assert standard_error(0.5, 101) == pytest.approx(0.05)
    assert accuracy_stats(np.array([True, True, False, False, True]))["stderr"] == pytest.approx(
        math.sqrt(0.6 * 0.4 / 4)
    )
    assert standard_error(1.0, 1) is None


def test_partial_by_limit_and_by_instance_count(tmp_path):
    rows = instance_rows("piqa", "cf", 0, [" a", " b"], [-1, -2], 0, uncond=[0, 0])
    mcf = instance_rows("piqa", "mcf", 0, [" A", " B"], [-1, -2], 0)
    paths = {**cf_files(tmp_path, "cf.parquet", rows), "mcf_path": write(tmp_path, "mcf.parquet", mcf)}
    _, summary = scoring.score_task("m", **paths)
    assert summary["partial"] and olmes_score(summary) is None and summary["best_of_two"]["score"] == 1.0
    assert summary["partial_reasons"] == ["1 instances scored, the standard has 1000"]
    _, limited = scoring.score_task("m", **paths, limit=1)
    assert limited["partial_reasons"][0] == "run with limit 1"
    assert partial_reasons("piqa", 1000, None, True, True) == []
    assert partial_reasons("piqa", 1000, 1000, True, True) == []
    assert partial_reasons("piqa", 1000, None, True, False) == ["no MCF log-probs"]


# -- bad input: one clear error naming the file and the instance -------------------------------------


def test_missing_pmi_rows_when_the_standard_has_pmi(tmp_path):
    rows = instance_rows("arc_challenge", "cf", 0, [" a", " b"], [-1, -2], 0)
    path = write(tmp_path, "arc.parquet", rows)
    with pytest.raises(OlmesError, match=r"arc\.parquet: pmi asked but no pmi log-prob file was given"):
        scoring.score_task("m", cf_path=path)


def test_missing_pmi_rows_with_pmi_everywhere(tmp_path):
    rows = instance_rows("boolq", "cf", 0, [" yes", " no"], [-1, -2], 0)
    path = write(tmp_path, "boolq.parquet", rows)
    assert scoring.score_task("m", cf_path=path)[1]["methods"].keys() == {"cf_none", "cf_token", "cf_char"}
    with pytest.raises(OlmesError, match="pmi asked"):
        scoring.score_task("m", cf_path=path, require_pmi=True)


def test_one_missing_unconditional_row_names_the_instance(tmp_path):
    rows = instance_rows("csqa", "cf", 0, [" a", " b"], [-1, -2], 0, uncond=[-1, -1])
    rows += instance_rows("csqa", "cf", 1, [" a", " b"], [-1, -2], 0, uncond=[-1, -1])
    rows = [r for r in rows if not (r["instance_index"] == 1 and r["unconditional"] and r["choice"] == 1)]
    with pytest.raises(
        OlmesError, match=r"csqa\.pmi\.parquet: instance 1 \(native_id id-1\) has no unconditional"
    ):
        scoring.score_task("m", **cf_files(tmp_path, "csqa.parquet", rows))


def test_missing_choice_names_the_instance(tmp_path):
    rows = instance_rows("csqa", "cf", 0, [" a", " b", " c"], [-1, -2, -3], 0)
    rows += instance_rows("csqa", "cf", 1, [" a", " b", " c"], [-1, -2, -3], 0)
    rows = [r for r in rows if not (r["instance_index"] == 1 and r["choice"] == 1)]
    with pytest.raises(
        OlmesError, match=r"gap\.parquet: instance 1 \(native_id id-1\) .*choice\(s\) \[1\] missing"
    ):
        scoring.score_task("m", **cf_files(tmp_path, "gap.parquet", rows))


def test_missing_last_choice_is_caught_against_mcf(tmp_path):
    cf = instance_rows("winogrande", "cf", 0, [" x", " x"], [-1, -2], 0)
    cf += instance_rows("winogrande", "cf", 1, [" x", " x"], [-1, -2], 0)
    cf = [r for r in cf if not (r["instance_index"] == 1 and r["choice"] == 1)]
    mcf = instance_rows("winogrande", "mcf", 0, [" A", " B"], [-1, -2], 0)
    mcf += instance_rows("winogrande", "mcf", 1, [" A", " B"], [-1, -2], 0)
    with pytest.raises(OlmesError, match=r"disagree on the num_choices of instance 1 \(native_id id-1\)"):
        scoring.score_task(
            "m", **cf_files(tmp_path, "cf.parquet", cf), mcf_path=write(tmp_path, "mcf.parquet", mcf)
        )


def test_gold_beyond_the_choices_is_an_error(tmp_path):
    rows = instance_rows("boolq", "cf", 7, [" yes"], [-1], 1)
    with pytest.raises(OlmesError, match=r"instance 7 .* gold label 1 but 1 choice"):
        scoring.score_task("m", **cf_files(tmp_path, "cf.parquet", rows))


def test_nan_logprob_is_refused(tmp_path):
    """A NaN is no log-probability (issue 29, case 7; tests/test_faults_cli.py has the CLI's line)."""
    rows = instance_rows("boolq", "cf", 0, [" yes", " no"], [-1, -2], 0)
    rows += instance_rows("boolq", "cf", 1, [" yes", " no"], [float("nan"), -5], 0)
    with pytest.raises(OlmesError, match=r"instance 1 \(native_id id-1\), choice 0 has sum_logprob nan"):
        scoring.score_task("m", **cf_files(tmp_path, "nan.parquet", rows))


def test_duplicate_rows_and_wrong_formulation(tmp_path):
    rows = instance_rows("boolq", "cf", 0, [" yes", " no"], [-1, -2], 0)
    with pytest.raises(OlmesError, match="appears more than once"):
        scoring.score_task("m", cf_path=write(tmp_path, "dup.parquet", rows + rows[:1]))
    with pytest.raises(OlmesError, match="holds request set 'cf' but was given as 'mcf'"):
        scoring.score_task("m", mcf_path=write(tmp_path, "cf.parquet", rows))
    with pytest.raises(OlmesError, match="cf file has unconditional rows; they belong in the task's pmi"):
        scoring.score_task(
            "m", cf_path=write(tmp_path, "mixed.parquet", rows + [{**rows[0], "unconditional": True}])
        )


def test_cf_and_mcf_must_cover_the_same_instances(tmp_path):
    cf = instance_rows("boolq", "cf", 0, [" yes", " no"], [-1, -2], 0)
    mcf = instance_rows("boolq", "mcf", 5, [" A", " B"], [-1, -2], 0)
    with pytest.raises(OlmesError, match="cover different instances"):
        scoring.score_task(
            "m", **cf_files(tmp_path, "cf.parquet", cf), mcf_path=write(tmp_path, "mcf.parquet", mcf)
        )


# -- the command --------------------------------------------------------------------------------------


def test_score_command_writes_predictions_and_summary(tmp_path, capsys):
    cf = instance_rows("boolq", "cf", 0, [" yes", " no"], [-1.2, -1.0], 0)
    mcf = instance_rows("boolq", "mcf", 0, [" A", " B"], [-0.1, -2.0], 0)
    cf_path, mcf_path = write(tmp_path, "cf.parquet", cf), write(tmp_path, "mcf.parquet", mcf)
    record = run_record("x", "boolq", "cf")
    (tmp_path / "cf.parquet.run.json").write_text(json.dumps(record))
    out = tmp_path / "scores" / "m"
    argv = ["score", "--model-name", "m", "--cf", str(cf_path), "--mcf", str(mcf_path), "--task", "boolq"]
    argv += [
        "--predictions",
        str(out / "boolq.predictions.parquet"),
        "--summary",
        str(out / "boolq.scores.json"),
    ]
    assert main(argv) == 0
    summary = json.loads((out / "boolq.scores.json").read_text())
    assert summary["format"] == SCORES_FORMAT.tag and summary["partial"]
    assert summary["predictions"]["path"] == "boolq.predictions.parquet"
    assert summary["inputs"]["cf"]["run"] == RUN_FORMAT.upgraded(record, "run record")  # as read: olmes.run/2
    assert summary["inputs"]["mcf"]["run"] is None
    predictions = pd.read_parquet(out / "boolq.predictions.parquet")
    assert set(predictions["method"]) == {"cf_none", "cf_token", "cf_char", "mcf"}
    assert "partial" in capsys.readouterr().err
    assert main(argv[:-4] + ["--task", "piqa"] + argv[-4:]) == 2
    assert "holds task 'boolq', not 'piqa'" in capsys.readouterr().err


def test_per_method_predictions_gather_into_the_same_scores(tmp_path):
    """The workflow's fan-out (one olmes predict per method, then olmes score --from-predictions)
    gives byte for byte the predictions and the summary of scoring everything at once."""
    cf, mcf = [], []
    for index, label in enumerate([0, 2, 1]):
        sums, uncond = [-2.0, -1.5 - index, -3.0], [-1.0, -0.5, -2.5]
        cf += instance_rows("csqa", "cf", index, [" a", " bb", " ccc"], sums, label, uncond=uncond)
        mcf += instance_rows("csqa", "mcf", index, [" A", " B", " C"], [-1, -2, -0.5], label)
    files = {**cf_files(tmp_path, "cf.parquet", cf), "mcf_path": write(tmp_path, "mcf.parquet", mcf)}
    logprobs = [
        "--cf",
        str(files["cf_path"]),
        "--pmi",
        str(files["pmi_path"]),
        "--mcf",
        str(files["mcf_path"]),
    ]
    parts = []
    for name in ("mcf", "cf_pmi", "cf_none", "cf_char", "cf_token"):  # any order
        parts.append(tmp_path / "parts" / f"{name}.parquet")
        assert (
            main(["predict", "--model-name", "m", "--method", name, *logprobs, "--output", str(parts[-1])])
            == 0
        )
    for folder, extra in (("gathered", ["--from-predictions", *map(str, parts)]), ("direct", [])):
        argv = ["score", "--model-name", "m", "--task", "csqa", *logprobs, *extra, "--limit", "3"]
        argv += [
            "--predictions",
            str(tmp_path / folder / "p.parquet"),
            "--summary",
            str(tmp_path / folder / "s.json"),
        ]
        assert main(argv) == 0
    gathered, direct = (pd.read_parquet(tmp_path / folder / "p.parquet") for folder in ("gathered", "direct"))
    pd.testing.assert_frame_equal(gathered, direct)
    assert list(gathered["method"].unique()) == ["cf_none", "cf_token", "cf_char", "cf_pmi", "mcf"]
    summaries = [json.loads((tmp_path / folder / "s.json").read_text()) for folder in ("gathered", "direct")]
    assert summaries[0] == summaries[1] and set(summaries[0]["inputs"]) == {"cf", "pmi", "mcf"}
    with pytest.raises(OlmesError, match="pmi asked but no pmi log-prob file"):
        scoring.summarize(gathered[gathered["method"] != "cf_pmi"], {"cf": files["cf_path"]})
    with pytest.raises(OlmesError, match="given twice"):
        gather_predictions([pd.read_parquet(parts[0]), pd.read_parquet(parts[0])])


def test_a_run_record_the_engine_never_writes_is_refused(tmp_path):
    rows = instance_rows("boolq", "cf", 0, [" yes", " no"], [-1, -2], 0)
    path = write(tmp_path, "cf.parquet", rows)
    Path(f"{path}.run.json").write_text(json.dumps({**run_record("x", "boolq", "cf"), "wall_time_s": "1 s"}))
    with pytest.raises(
        OlmesError, match=r"cf\.parquet\.run\.json: field 'wall_time_s' of this RunRecord is not float"
    ):
        scoring.score_task("m", cf_path=path)


def test_mmlu_without_subjects_is_an_error(tmp_path):
    rows = instance_rows("mmlu", "cf", 0, [" a", " b"], [-1, -2], 0)
    with pytest.raises(OlmesError, match=r"cf\.parquet: mmlu is averaged over subjects but the file has no"):
        scoring.score_task("m", **cf_files(tmp_path, "cf.parquet", rows))


def test_bits_per_byte_of_the_gold_continuation(tmp_path):
    """-sum_logprob(gold) / (ln 2 x UTF-8 bytes): ' 32° F' is 6 characters but 7 bytes."""
    rows = instance_rows("boolq", "cf", 0, [" 32° F", " no"], [-7 * math.log(2), -1.0], 0)
    rows += instance_rows("boolq", "cf", 1, [" yes", " no"], [-1.0, -3 * 2 * math.log(2)], 1)
    for row in rows:
        row["num_bytes"] = len((" 32° F" if row["instance_index"] == 0 and row["choice"] == 0 else
                                [" yes", " no"][row["choice"]]).encode())  # fmt: skip
    _, summary = scoring.score_task("m", cf_path=write(tmp_path, "cf.parquet", rows))
    assert summary["bpb"]["n"] == 2
    assert summary["bpb"]["bpb"] == pytest.approx((1.0 + 2.0) / 2)  # 7 bits / 7 bytes, 6 bits / 3 bytes
    rows = [{k: v for k, v in row.items() if k != "num_bytes"} for row in rows]
    _, older = scoring.score_task("m", cf_path=write(tmp_path, "old.parquet", rows))
    assert "bpb" not in older  # a file from before num_bytes: no silent guess from characters


def test_predictions_files_hold_exactly_the_declared_columns(tmp_path):
    """The writer refuses a frame that is not the format; a reader refuses a file that lacks a
    required column, in one line that says what to do."""
    rows = instance_rows("boolq", "cf", 0, [" yes", " no"], [-1.2, -1.0], 0)
    predictions, _ = scoring.score_task("m", **cf_files(tmp_path, "cf.parquet", rows))
    path = tmp_path / "p.parquet"
    write_predictions(predictions, path)
    assert list(read_predictions_file(path).columns) == [c.name for c in PREDICTION_COLUMNS]
    with pytest.raises(OlmesError, match="predictions not in the declared columns"):
        write_predictions(predictions.drop(columns="top_gap"), tmp_path / "q.parquet")
    assert not (tmp_path / "q.parquet").exists()
    predictions.drop(columns="nonfinite").to_parquet(tmp_path / "before.parquet")  # an optional column
    read = read_predictions_file(tmp_path / "before.parquet", columns=["correct", "nonfinite"])
    assert list(read.columns) == ["correct"]
    predictions.drop(columns=["label", "correct"]).to_parquet(tmp_path / "old.parquet")
    with pytest.raises(
        OlmesError, match=r"old.parquet: missing column\(s\) label, correct; is this an olmes"
    ):
        read_predictions_file(tmp_path / "old.parquet")
