"""Every answer order for MCF: the rotation requests, and the report on made-up log-probs whose
answers are known (a model that always says A, and one that knows every answer)."""

from __future__ import annotations

import json

import pytest

from olmes.cli.main import main
from olmes.core.errors import OlmesError
from olmes.core.tasks import TASKS
from olmes.requests.build import requests_of, rotated, task_instances
from olmes.scoring.rotations import analyze
from tests.helpers import rotation_frames, write


def test_rotation_requests_move_the_gold_and_keep_the_shots():
    task = TASKS["arc_easy"]
    instances = task_instances(task, 2, "bundle")
    standard = requests_of(task, "mcf", instances)
    rows = requests_of(task, "mcf_rot", instances)
    k = len(instances[0].choices)
    assert [row["rotation"] for row in rows[: k * (k - 1)]] == [r for r in range(1, k) for _ in range(k)]
    first = rows[0]  # rotation 1 shows choices 1, 2, 3, 0: the gold (choice 0, "casting") is now D
    assert first["label"] == 3 and first["formulation"] == "mcf_rot"
    assert first["context"].endswith("\n A. milling\n B. finishing\n C. refining\n D. casting\nAnswer:")
    shots = standard[0]["context"].rsplit("\n\n", 1)[0]
    assert first["context"].rsplit("\n\n", 1)[0] == shots  # the five shots are the standard's
    assert rotated(instances[0], 0) == instances[0]


def test_a_model_that_always_answers_a(tmp_path):
    labels, choices = [0, 1, 2, 3, 1, 2], [4, 4, 4, 4, 3, 5]
    mcf, rot = rotation_frames(labels, choices, lambda gold_position, k: 0)
    report = analyze("M", write(tmp_path, "mcf.parquet", mcf), write(tmp_path, "rot.parquet", rot))
    assert report["standard_accuracy"] == pytest.approx(1 / 6)  # only instance 0 has its gold at A
    assert report["consistent_accuracy"] == 0.0
    assert report["letters"]["A"]["predicted"] == 1.0
    assert report["letters"]["A"]["gold"] == pytest.approx(6 / sum(choices))  # each gold sits at A once
    # every choice is A once over the rotations: all tie, and the first choice wins the tie
    assert report["permutation_averaged_accuracy"] == pytest.approx(1 / 6)
    assert report["rotations"] == 5 and len(report["accuracy_by_rotation"]) == 5


def test_a_model_that_knows_every_answer(tmp_path):
    labels, choices = [0, 1, 2, 3, 2], [4, 4, 4, 4, 3]
    mcf, rot = rotation_frames(labels, choices, lambda gold_position, k: gold_position)
    report = analyze("M", write(tmp_path, "mcf.parquet", mcf), write(tmp_path, "rot.parquet", rot))
    assert report["accuracy_by_rotation"] == [1.0] * 4 and report["spread"] == 0.0
    assert report["consistent_accuracy"] == report["permutation_averaged_accuracy"] == 1.0


def test_a_missing_rotation_is_an_error_and_the_command_writes_the_report(tmp_path, capsys):
    mcf, rot = rotation_frames([1, 2], [4, 4], lambda gold_position, k: gold_position)
    mcf_path = write(tmp_path, "mcf.parquet", mcf)
    with pytest.raises(OlmesError, match="instance 1 lacks some rotation of its 4 choices"):
        analyze("M", mcf_path, write(tmp_path, "short.parquet", rot[:-4]))
    out = tmp_path / "report.json"
    rotations = write(tmp_path, "r.parquet", rot)
    assert main(["rotations", "--model-name", "M", "--mcf", str(mcf_path), "--rotations", str(rotations),
                 "--output", str(out)]) == 0  # fmt: skip
    assert json.loads(out.read_text())["format"] == "olmes.rotations/1"
    assert "MCF by rotation 100.0 100.0 100.0 100.0 (spread 0.0)" in capsys.readouterr().err
