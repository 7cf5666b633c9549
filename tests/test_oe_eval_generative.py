"""olmes export / import oe-eval for the OLMES v0.2 generative tasks (docs/oe-eval.md, "Generative
tasks (OLMES v0.2)"): DROP and GSM8K results built by hand from the real generation requests and
made-up generations, exported in oe-eval's layout, imported back to the same generations and
metrics; a changed prompt, stop sequence or reported metric refused or flagged in one line.
No model runs: the import loads the embedded SmolLM2's tokenizer only."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from olmes.core.records import write_records
from olmes.core.records.generative import GENERATION_COLUMNS, GENERATIONS_FORMAT
from olmes.scoring.generative_score import score_generative
from olmes.store.generative import canonical_generation_requests
from tests.helpers import olmes

N = 3
TASKS = ("drop", "gsm8k")
SPEC = "smollm2-135m"


def _generations(task: str, rows) -> list[str]:
    """Made up: the first right, the second wrong, the third half right (DROP) or wrong (GSM8K)."""
    gold = rows[0]["answers"][0][0]
    if task == "gsm8k":
        return [f" 3 + 4 = 7. So the answer is {gold}.", " So the answer is 12345.", " I do not know."]
    return [f" {gold}", " forty two", f" {rows[2]['answers'][0][0]} and more words"]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("gen") / "results"
    for task in TASKS:
        rows = list(canonical_generation_requests(task, N))
        requests = root / "requests" / f"{task}.gen.jsonl"
        write_records(rows, requests)
        folder = root / "generative" / "Gen"
        folder.mkdir(parents=True, exist_ok=True)
        texts = _generations(task, rows)
        columns = {
            "request_index": list(range(N)),
            "task": [task] * N,
            "instance_index": [r["instance_index"] for r in rows],
            "native_id": [str(r["native_id"]) for r in rows],
            "generation": texts,
            "num_tokens": [5, 6, 7],
            "stop_reason": ["stop", "eos", "length"],
            "gold_sum_logprob": [-1.5, -2.5, -3.5],
            "gold_num_tokens": [2, 2, 2],
            "gold_num_bytes": [len(r["gold_continuation"].encode()) for r in rows],
        }
        fields = [pa.field(c.name, pa.type_for_alias(c.arrow_type)) for c in GENERATION_COLUMNS]
        schema = pa.schema(fields, metadata=GENERATIONS_FORMAT.metadata())
        pq.write_table(pa.Table.from_pydict(columns, schema=schema), folder / f"{task}.generations.parquet")
        score_generative(
            task, "Gen", requests, folder / f"{task}.generations.parquet", folder / f"{task}.generative.json",
            limit=N,
        )  # fmt: skip
    return root


@pytest.fixture(scope="module")
def exported(results, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "run"
    code, err = olmes("export", "oe-eval", "--from", str(results), "--model", "Gen", "--tasks", *TASKS,
                      "--output", str(out))  # fmt: skip
    assert code == 0, err
    return out


def _import(run: Path, output: Path) -> tuple[int, str]:
    return olmes(
        "import", "oe-eval", str(run), "--model", "Back", "--model-spec", SPEC, "--output", str(output)
    )


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_export_writes_oe_evals_generation_task_files(exported, results):
    assert sorted(p.name for p in exported.iterdir()) == [
        "metrics-all.jsonl", "metrics.json",
        "task-000-drop-metrics.json", "task-000-drop-predictions.jsonl", "task-000-drop-requests.jsonl",
        "task-001-gsm8k-metrics.json", "task-001-gsm8k-predictions.jsonl", "task-001-gsm8k-requests.jsonl",
    ]  # fmt: skip
    drop = json.loads((exported / "task-000-drop-metrics.json").read_text())
    ours = json.loads((results / "generative/Gen/drop.generative.json").read_text())
    config = drop["task_config"]
    assert config["metadata"]["alias"] == "drop::olmes" and config["num_shots"] == 5
    assert config["generation_kwargs"] == {
        "max_gen_toks": 50, "temperature": 0.0, "do_sample": False,
        "stop_sequences": ["Passage:", "Question:", "\n\n"],
    }  # fmt: skip
    assert drop["metrics"]["f1"] == ours["metrics"]["f1"]["value"] == drop["metrics"]["primary_score"]
    assert drop["num_instances"] == N and drop["olmes_export"]["task"] == "drop"
    gsm = json.loads((exported / "task-001-gsm8k-metrics.json").read_text())
    assert "f1" not in gsm["metrics"] and gsm["metrics"]["primary_score"] == gsm["metrics"]["exact_match"]
    rows = canonical_generation_requests("gsm8k", N)
    requests = _lines(exported / "task-001-gsm8k-requests.jsonl")
    assert [r["request"]["context"] for r in requests] == [r["context"] for r in rows]
    assert requests[0]["request_type"] == "generate_until" and requests[0]["idx"] == 0
    assert requests[0]["label"] == "18"  # AI2's label, from its request dump
    predictions = _lines(exported / "task-001-gsm8k-predictions.jsonl")
    assert predictions[0]["model_output"][0]["continuation"] == _generations("gsm8k", rows)[0]
    assert predictions[0]["metrics"]["exact_match"] == 1.0


def test_export_then_import_gives_the_same_generations_and_metrics(exported, results, tmp_path):
    code, err = _import(exported, tmp_path / "back")
    assert code == 0, err
    for task in TASKS:
        assert f"(Back) {task}: imported {N} generations (first {N}, partial" in err
        assert "3 of 3" in err if task == "drop" else "2 of 2" in err
        theirs = pq.read_table(tmp_path / f"back/generative/Back/{task}.generations.parquet").to_pydict()
        ours = pq.read_table(results / f"generative/Gen/{task}.generations.parquet").to_pydict()
        for column in (
            "instance_index",
            "native_id",
            "generation",
            "num_tokens",
            "stop_reason",
            "gold_num_bytes",
        ):
            assert theirs[column] == ours[column], (task, column)
        assert all(math.isnan(value) for value in theirs["gold_sum_logprob"])  # oe-eval has none
        back = json.loads((tmp_path / f"back/generative/Back/{task}.generative.json").read_text())
        first = json.loads((results / f"generative/Gen/{task}.generative.json").read_text())
        for key in ("metrics", "n_instances", "limit", "partial", "partial_reasons", "generation_counts"):
            assert back[key] == first[key], (task, key)
        assert math.isnan(back["bits_per_byte"]["value"]) and "not computed" in back["bits_per_byte_note"]
        assert back["imported"]["implementation"] == "olmes export"
        assert all(entry["agrees"] for entry in back["imported"]["comparison"])
        run = json.loads((tmp_path / f"back/generative/Back/{task}.generations.parquet.run.json").read_text())
        assert run["requests_sha256"] and run["imported"]["run_task"] == f"{task}::olmes"


def _edited(exported: Path, tmp_path: Path, name: str, edit) -> Path:
    run = tmp_path / "run"
    shutil.copytree(exported, run)
    path = run / name
    if name.endswith(".json"):
        path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    else:
        path.write_text("".join(json.dumps(edit(row)) + "\n" for row in _lines(path)))
    return run


def _refused(run: Path, tmp_path: Path) -> str:
    code, err = _import(run, tmp_path / "results")
    assert code == 2 and err.startswith("olmes: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "results").exists()
    return err


def test_a_changed_prompt_is_refused_naming_the_instance(exported, tmp_path):
    def edit(row):
        if row["doc_id"] == 1:
            head, tail = row["request"]["context"].rsplit("Answer:", 1)
            row["request"]["context"] = head + "Answer :" + tail
        return row

    err = _refused(_edited(exported, tmp_path, "task-000-drop-requests.jsonl", edit), tmp_path)
    native = canonical_generation_requests("drop", N)[1]["native_id"]
    assert f"task-000-drop-requests.jsonl: instance 1 ({native}): context differs" in err
    assert "(in the question)" in err


def test_a_changed_stop_sequence_is_refused(exported, tmp_path):
    def edit(row):
        row["request"]["stop_sequences"] = ["Question:", "\n\n"]
        return row

    err = _refused(_edited(exported, tmp_path, "task-001-gsm8k-requests.jsonl", edit), tmp_path)
    assert "instance 0 (0): stop sequences ['Question:', '\\n\\n'], the standard's are" in err


def test_a_changed_reported_metric_is_flagged(exported, tmp_path):
    def edit(metrics):
        metrics["metrics"]["f1"] += 0.25
        return metrics

    code, err = _import(_edited(exported, tmp_path, "task-000-drop-metrics.json", edit), tmp_path / "back")
    assert code == 0, err
    flagged = [line for line in err.splitlines() if line.startswith("  drop f1:")]
    assert len(flagged) == 1 and "difference +0.2500" in flagged[0], err
    assert "2 of 3 reported metrics equal ours" in err
