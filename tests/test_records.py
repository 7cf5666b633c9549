"""The file formats' records: every reader checks each row against the one declaration of its type."""

from __future__ import annotations

import gzip
import json

import pytest

from olmes.errors import OlmesError
from olmes.records import (
    SUMMARY_SCHEMA,
    InstanceRow,
    RequestRow,
    read_records,
    read_run_record,
    read_score_summary,
    write_records,
)
from olmes.requests import build_requests

ROW = {"task": "piqa", "formulation": "cf", "instance_index": 0, "native_id": 7, "choice": 1, "label": 0,
       "context": "Goal: x\nAnswer:", "continuation": " y", "unconditional": False}  # fmt: skip


def test_request_rows_round_trip_plain_and_gzipped(tmp_path):
    rows = build_requests("mmlu", "mcf", limit=2)
    write_records(rows, tmp_path / "r.jsonl")
    assert read_records(tmp_path / "r.jsonl", RequestRow) == rows
    with gzip.open(tmp_path / "r.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write((tmp_path / "r.jsonl").read_text(encoding="utf-8"))
    assert read_records(tmp_path / "r.jsonl.gz", RequestRow) == rows


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"choice": "1"}, r"r\.jsonl:2: field 'choice' of this RequestRow is not int"),
        ({"instance_index": True}, "field 'instance_index' of this RequestRow is not int"),
        ({"native_id": None}, "field 'native_id' of this RequestRow is not str | int"),
        ({"context": None}, "field 'context'"),
        ({"unconditional": None}, "field 'unconditional'"),
    ],
)
def test_a_bad_row_is_one_error_naming_file_and_line(tmp_path, change, message):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(ROW) + "\n" + json.dumps({**ROW, **change}) + "\n")
    with pytest.raises(OlmesError, match=message):
        read_records(path, RequestRow)


def test_missing_fields_and_non_json(tmp_path):
    path = tmp_path / "i.jsonl"
    path.write_text(json.dumps({"task": "piqa", "instance_index": 0, "native_id": 1, "question": "q"}) + "\n")
    with pytest.raises(OlmesError, match=r"i\.jsonl:1: not an olmes InstanceRow: field 'choices' is missing"):
        read_records(path, InstanceRow)
    path.write_text("{not json\n")
    with pytest.raises(OlmesError, match=r"i\.jsonl:1: not JSON"):
        read_records(path, InstanceRow)
    path.write_text(json.dumps({"task": "piqa", "instance_index": 0, "native_id": 1, "question": "q",
                                "choices": ["a", 2], "gold": 0}) + "\n")  # fmt: skip
    with pytest.raises(OlmesError, match=r"field 'choices' of this InstanceRow is not list\[str\]"):
        read_records(path, InstanceRow)


def test_run_record_and_summary_readers(tmp_path):
    assert read_run_record(tmp_path / "none.parquet") is None
    (tmp_path / "x.parquet.run.json").write_text(json.dumps({"model": "m"}))
    with pytest.raises(
        OlmesError, match=r"x\.parquet\.run\.json: not an olmes RunRecord: field 'model_kind'"
    ):
        read_run_record(tmp_path / "x.parquet")
    summary = tmp_path / "s.scores.json"
    summary.write_text(json.dumps({"schema": "other/1"}))
    with pytest.raises(OlmesError, match="not an olmes ScoreSummary"):
        read_score_summary(summary)
    assert SUMMARY_SCHEMA == "olmes.scores/1"
