"""The file formats' records: every reader checks each row against the one declaration of its type."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from olmes.core.errors import OlmesError
from olmes.core.records import (
    INSTANCES_FORMAT,
    REQUESTS_FORMAT,
    read_records,
    read_run_record,
    read_score_summary,
    write_records,
)
from olmes.requests.build import build_requests

ROW = {"task": "piqa", "formulation": "cf", "instance_index": 0, "native_id": 7, "choice": 1, "label": 0,
       "context": "Goal: x\nAnswer:", "continuation": " y", "unconditional": False}  # fmt: skip


def test_request_rows_round_trip_plain_and_gzipped(tmp_path):
    rows = build_requests("mmlu", "mcf", limit=2)
    write_records(rows, tmp_path / "r.jsonl")
    assert read_records(tmp_path / "r.jsonl", REQUESTS_FORMAT) == rows
    with gzip.open(tmp_path / "r.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write((tmp_path / "r.jsonl").read_text(encoding="utf-8"))
    assert read_records(tmp_path / "r.jsonl.gz", REQUESTS_FORMAT) == rows


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
        read_records(path, REQUESTS_FORMAT)


def test_missing_fields_and_non_json(tmp_path):
    path = tmp_path / "i.jsonl"
    path.write_text(json.dumps({"task": "piqa", "instance_index": 0, "native_id": 1, "question": "q"}) + "\n")
    with pytest.raises(OlmesError, match=r"i\.jsonl:1: not an olmes InstanceRow: field 'choices' is missing"):
        read_records(path, INSTANCES_FORMAT)
    path.write_text("{not json\n")
    with pytest.raises(OlmesError, match=r"i\.jsonl:1: not JSON"):
        read_records(path, INSTANCES_FORMAT)
    path.write_text(json.dumps({"task": "piqa", "instance_index": 0, "native_id": 1, "question": "q",
                                "choices": ["a", 2], "gold": 0}) + "\n")  # fmt: skip
    with pytest.raises(OlmesError, match=r"field 'choices\.1' of this InstanceRow is not str"):
        read_records(path, INSTANCES_FORMAT)


def test_run_record_and_summary_readers(tmp_path):
    assert read_run_record(tmp_path / "none.parquet") is None
    (tmp_path / "x.parquet.run.json").write_text(json.dumps({"model": "m"}))
    with pytest.raises(
        OlmesError, match=r"x\.parquet\.run\.json: not an olmes RunRecord: field 'model_kind'"
    ):
        read_run_record(tmp_path / "x.parquet")
    summary = tmp_path / "s.scores.json"
    summary.write_text(json.dumps({"schema": "other/1"}))
    with pytest.raises(OlmesError, match=r"not a ScoreSummary \(olmes\.scores/3\); run olmes score"):
        read_score_summary(summary)
    summary.write_text(json.dumps({"schema": "olmes.scores/1", "olmes": {"score": 1}}))
    with pytest.raises(
        OlmesError, match=r"s\.scores\.json \(olmes\.scores/1\): its olmes field is not its best_of_two"
    ):
        read_score_summary(summary)
    summary.write_text(json.dumps({"schema": "olmes.scores/2"}))
    with pytest.raises(OlmesError, match="not an olmes ScoreSummary: field 'model' is missing"):
        read_score_summary(summary)


def test_nested_records_are_checked_to_the_field(tmp_path) -> None:
    """A summary's inner records (method stats, best-of-two) are checked too, and the message names
    the field's path: an accuracy turned into text or a formulation outside CF/MCF is refused."""
    store = Path(__file__).resolve().parent.parent / "leaderboard"
    good = read_score_summary(next(store.rglob("scores/boolq.scores.json")))  # in the current format
    path = tmp_path / "boolq.scores.json"
    path.write_text(json.dumps(good))
    assert read_score_summary(path) == good
    for change, field in (
        (lambda s: s["methods"]["mcf"].update(accuracy="0.6"), "methods.mcf.accuracy"),
        (lambda s: s["best_of_two"].update(formulation="pmi"), "best_of_two.formulation"),
        (lambda s: s["methods"]["cf_none"].pop("near_ties"), "methods.cf_none.near_ties"),
    ):
        bad = json.loads(json.dumps(good))
        change(bad)
        path.write_text(json.dumps(bad))
        with pytest.raises(OlmesError, match=f"field '{field}'"):
            read_score_summary(path)


def test_one_json_lines_writer_for_files_bytes_gzip_and_appends(tmp_path):
    from olmes.core.records import records_bytes

    rows = [ROW, {**ROW, "context": "Ziel: ü\nAntwort:"}]
    write_records(rows, tmp_path / "r.jsonl")
    data = (tmp_path / "r.jsonl").read_bytes()
    assert data == records_bytes(rows) and "ü".encode() in data  # UTF-8 as is
    assert records_bytes(rows, compress=True) == records_bytes(rows, compress=True)  # no time in the header
    assert gzip.decompress(records_bytes(rows, compress=True)) == data
    write_records(rows[1:], tmp_path / "r.jsonl", append=True, ascii_only=True)
    assert (tmp_path / "r.jsonl").read_bytes() == data + json.dumps(rows[1]).encode() + b"\n"
