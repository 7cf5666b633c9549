"""Flags instead of silent numbers, on made-up log-probs: each condition raises its flag, a healthy
result raises none, and the warning reaches `olmes score`, the tables and the site."""

from __future__ import annotations

import json

import numpy as np

from olmes.cli.main import main
from olmes.scoring.flags import task_flags
from olmes.scoring.score import score_task
from tests.helpers import cf_files, instance_rows, mcf_rows, write

N = 200


def _codes(flags):
    return sorted((flag["code"], flag["method"]) for flag in flags)


def _mcf(tmp_path, name, labels, winners, tie_at=()):
    rows = mcf_rows("arc_easy", labels, winners)
    for row in rows:
        if row["instance_index"] in tie_at and row["choice"] == (winners[row["instance_index"]] + 1) % 4:
            row["sum_logprob"] = -0.5 - 1e-6  # within the near-tie gap, still second
    return write(tmp_path, name, rows)


def test_a_healthy_result_has_no_flag(tmp_path):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, N).tolist()
    winners = [label if k % 2 else int(rng.integers(0, 4)) for k, label in enumerate(labels)]
    predictions, summary = score_task("m", mcf_path=_mcf(tmp_path, "ok.parquet", labels, winners))
    assert task_flags(summary, predictions) == []


def test_one_letter_below_chance_near_ties_and_nan_are_flagged(tmp_path):
    labels = [1 + k % 3 for k in range(N)]  # gold is never A
    winners = [0] * N  # the model always answers A: accuracy 0, far below chance (25%)
    path = _mcf(tmp_path, "bad.parquet", labels, winners, tie_at=set(range(0, N, 10)))
    predictions, summary = score_task("m", mcf_path=path)
    # olmes score refuses a NaN log-prob (issue 29); predictions written before that may mark one
    predictions.loc[predictions["instance_index"] == 3, "nonfinite"] = True
    flags = task_flags(summary, predictions)
    assert _codes(flags) == [
        ("below_chance", "mcf"),
        ("nan", "mcf"),
        ("near_ties", "mcf"),
        ("one_answer", "mcf"),
    ]
    messages = {flag["code"]: flag["message"] for flag in flags}
    assert messages["one_answer"].startswith("MCF answers letter A for 100% of the 200 instances")
    assert messages["below_chance"] == "MCF accuracy 0.0% is all of its instances wrong, below chance (25.0%)"
    assert messages["near_ties"].startswith("MCF: 20 of 200 decisions (10%) are near ties")
    assert messages["nan"].startswith("MCF: 1 instance(s) have a NaN or infinite score")


def test_cf_choice_bias_counts_positions(tmp_path):
    rows = []
    for index in range(N):
        rows += instance_rows("boolq", "cf", index, [" yes", " no"], [-1.0, -2.0], index % 2)
    predictions, summary = score_task("m", cf_path=write(tmp_path, "cf.parquet", rows))
    flags = [flag for flag in task_flags(summary, predictions) if flag["method"] == "cf_none"]
    assert [flag["message"] for flag in flags] == [
        "CF none answers choice 1 for 100% of the 200 instances (gold has it for 50%)"
    ]


def test_flags_reach_score_tables_and_site(tmp_path, capsys):
    labels = [1 + k % 3 for k in range(N)]
    bad = _mcf(tmp_path, "bad.parquet", labels, [0] * N)
    good = _mcf(tmp_path, "good.parquet", labels, labels)
    cf = []
    for index, label in enumerate(labels):
        sums = [-3.0, -3.0, -3.0, -3.0]
        sums[label if index % 2 else (label + 1) % 4] = -1.0
        cf += instance_rows("arc_easy", "cf", index, [" w", " x", " y", " z"], sums, label, uncond=[-2.0] * 4)
    cf_paths = cf_files(tmp_path, "cf.parquet", cf)
    for name, path in (("Broken", bad), ("Fine", good)):
        outputs = [
            "--predictions",
            str(tmp_path / name / "p.parquet"),
            "--summary",
            str(tmp_path / name / "s.scores.json"),
        ]
        inputs = ["--cf", str(cf_paths["cf_path"]), "--pmi", str(cf_paths["pmi_path"]), "--mcf", str(path)]
        code = main(["score", "--model-name", name, *inputs, *outputs])
        assert code == 0
    err = capsys.readouterr().err
    assert "olmes: warning: Broken arc_easy: MCF answers letter A for 100% of the 200 instances" in err
    assert "warning: Fine" not in err
    assert main(["tables", "--scores", str(tmp_path), "--out", str(tmp_path / "tables")]) == 0
    flags = json.loads((tmp_path / "tables" / "flags.json").read_text())["flags"]
    assert {flag["model"] for flag in flags} == {"Broken"}
    site = tmp_path / "site"
    assert (
        main(["site", "--scores", str(tmp_path), "--tables", str(tmp_path / "tables"), "--out", str(site)])
        == 0
    )
    index = (site / "index.html").read_text()
    broken_row = index[index.index(">Broken<") :].split("</tr>")[0]
    fine_row = index[index.index(">Fine<") :].split("</tr>")[0]
    assert 'class="flag"' in broken_row and 'class="flag"' not in fine_row
    assert "MCF answers letter A for 100%" in broken_row
    model_page = (site / "models" / "Broken.html").read_text()
    assert 'id="flags"' in model_page and "ARC-Easy: MCF answers letter A for 100%" in model_page
    assert 'id="flags"' not in (site / "models" / "Fine.html").read_text()
