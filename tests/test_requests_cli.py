"""The request stage as a user drives it: `olmes requests` / `olmes tasks`, sampling, limits, errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from olmes.cli.main import main
from olmes.core.records import INSTANCES_FORMAT, REQUESTS_FORMAT, RequestRow, read_records
from olmes.core.tasks import TASKS
from olmes.requests.data import load_instances
from olmes.requests.tasks import get_template


@pytest.mark.parametrize(
    ("task_key", "first_native_ids"),
    [
        ("boolq", [3187, 1805, 478, 30, 371]),
        ("hellaswag", None),
        ("piqa", [1593, 902, 239, 15, 185, 1652]),
        ("socialiqa", [1593, 902, 239, 15, 185, 1865]),
    ],
)
def test_sampled_tasks_keep_the_sampled_order(task_key: str, first_native_ids: list | None) -> None:
    instances = load_instances(get_template(task_key))
    assert len(instances) == 1000
    if first_native_ids:
        assert [i.native_id for i in instances[: len(first_native_ids)]] == first_native_ids


def test_hellaswag_sample_positions_match_spec() -> None:
    """The first picks of docs/standard.md section 1 are split positions; HellaSwag's native id is ``ind``."""
    from olmes.requests.data import raw_rows

    task = get_template("hellaswag")
    rows = raw_rows(task, "bundle", task.split)
    position_of = {row["ind"]: position for position, row in enumerate(rows)}
    picks = [position_of[i.native_id] for i in load_instances(task)[:5]]
    assert picks == [7220, 1914, 122, 1485, 9539]


def test_cli_writes_documented_fields(tmp_path) -> None:
    out = tmp_path / "req.jsonl"
    pmi = tmp_path / "pmi.jsonl"
    assert main(["requests", "csqa", "--request-set", "cf", "--limit", "3", "--output", str(out)]) == 0
    assert main(["requests", "csqa", "--request-set", "pmi", "--limit", "3", "--output", str(pmi)]) == 0
    rows, baseline = read_records(out, REQUESTS_FORMAT), read_records(pmi, REQUESTS_FORMAT)
    assert len(rows) == len(baseline) == 3 * 5  # 3 instances x 5 choices
    optional = RequestRow.__optional_keys__  # e.g. MMLU's subject, mcf_rot's rotation, a variant's name
    fields = tuple(field for field in RequestRow.__annotations__ if field not in optional)  # in file order
    assert all(tuple(row) == fields for row in rows + baseline)
    assert {row["unconditional"] for row in rows} == {False} and {row["formulation"] for row in rows} == {
        "cf"
    }
    assert {row["context"] for row in baseline} == {"Answer:"} and {r["formulation"] for r in baseline} == {
        "pmi"
    }
    assert [row["continuation"] for row in baseline] == [row["continuation"] for row in rows]
    assert [row["instance_index"] for row in rows[:15:5]] == [0, 1, 2]
    assert all(not row["context"][-1].isspace() and row["continuation"][0] == " " for row in rows)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["requests", "nosuchtask", "--request-set", "cf"], "unknown task 'nosuchtask'"),
        (["requests", "piqa", "--request-set", "xx"], "invalid choice: 'xx'"),
        (["requests", "piqa", "--request-set", "cf", "--limit", "0"], "must be a positive number"),
        (["requests", "piqa", "--request-set", "cf", "--limit", "-3"], "must be a positive number"),
        (["requests", "piqa"], "--output and --request-set go together"),
        (["requests", "boolq", "--request-set", "pmi"], "the standard scores boolq without pmi"),
    ],
)
def test_cli_errors_are_one_line_and_non_zero(tmp_path, argv: list[str], message: str) -> None:
    command = [sys.executable, "-m", "olmes.cli.main", *argv, "--output", str(tmp_path / "x.jsonl")]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_cli_writes_instances_with_the_requests(tmp_path) -> None:
    requests, instances = tmp_path / "req.jsonl", tmp_path / "inst.jsonl"
    argv = ["requests", "winogrande", "--request-set", "mcf", "--limit", "2"]
    assert main([*argv, "--output", str(requests), "--instances", str(instances)]) == 0
    rows, shown = read_records(requests, REQUESTS_FORMAT), read_records(instances, INSTANCES_FORMAT)
    assert [row["instance_index"] for row in shown] == [0, 1]
    assert [row["gold"] for row in shown] == [rows[0]["label"], rows[2]["label"]]
    assert shown[0]["question"].count("_") == 1 and len(shown[0]["choices"]) == 2
    assert f"\n A. {shown[0]['choices'][0]}\n B. {shown[0]['choices'][1]}\nAnswer:" in rows[0]["context"]
    assert main(["requests", "mmlu", "--limit", "1", "--instances", str(instances)]) == 0
    assert read_records(instances, INSTANCES_FORMAT)[0]["subject"] == "abstract_algebra"
    assert main(["requests", "piqa", "--limit", "1"]) == 2  # nothing to write


def test_tasks_command_lists_all_ten(capsys) -> None:
    assert main(["tasks", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [row["task"] for row in listed] == list(TASKS)
    assert {row["task"]: row["cf_normalization"] for row in listed}["arc_easy"] == "char"


def test_limit_keeps_the_first_instances() -> None:
    full = load_instances(get_template("winogrande"))
    assert load_instances(get_template("winogrande"), limit=7) == full[:7]
    assert len(full) == 1267


def test_winogrande_cf_contexts_differ_and_continuation_is_shared(tmp_path) -> None:
    out = tmp_path / "w.jsonl"
    assert main(["requests", "winogrande", "--request-set", "cf", "--limit", "1", "--output", str(out)]) == 0
    first, second = read_records(out, REQUESTS_FORMAT)
    assert first["context"].endswith("so Sarah") and second["context"].endswith("so Maria")
    assert first["continuation"] == second["continuation"] == " always got the easier cases."
