"""Versioned formats: real files of every earlier version (tests/data/formats, written by earlier
commits) read through their upgrades; newer versions and other formats refused in one line; the
writers tag what they write; ``olmes upgrade`` rewrites a store's documents and changes nothing else."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from olmes.cli.main import main
from olmes.core.errors import OlmesError
from olmes.core.records import (
    DOCUMENT_FORMATS,
    FIGURE_FORMAT,
    FLAGS_FORMAT,
    LEADERBOARD_FORMAT,
    LOGPROB_FORMAT,
    MODEL_FORMAT,
    PREDICTION_FORMAT,
    REPRODUCTION_FORMAT,
    REQUESTS_FORMAT,
    ROTATIONS_FORMAT,
    RUN_FORMAT,
    SCORES_FORMAT,
    SITE_MANIFEST_FORMAT,
    STORE_FORMAT,
    TABLE_FORMAT,
    TABLES_INDEX_FORMAT,
    Format,
    read_records,
    write_records,
)
from olmes.requests.build import build_requests

REPO = Path(__file__).resolve().parent.parent
OLD = REPO / "tests" / "data" / "formats"

EARLIER_FILES = [
    ("olmes.scores-1.boolq.json", SCORES_FORMAT, 1),
    ("olmes.scores-2.boolq.json", SCORES_FORMAT, 2),
    ("olmes.run-1.e8a588a.json", RUN_FORMAT, 1),
    ("olmes.run-1.21af53b.json", RUN_FORMAT, 1),
    ("olmes.model-1.e8a588a.json", MODEL_FORMAT, 1),
    ("olmes.model-1.21af53b.json", MODEL_FORMAT, 1),
    ("olmes.store-1.json", STORE_FORMAT, 1),
    ("olmes.rotations-1.json", ROTATIONS_FORMAT, 1),
    ("olmes.reproduction-2.json", REPRODUCTION_FORMAT, 2),
    ("olmes.tables-index-1.json", TABLES_INDEX_FORMAT, 1),
    ("olmes.table-1.bpb.json", TABLE_FORMAT, 1),
    ("olmes.figure-1.json", FIGURE_FORMAT, 1),
    ("olmes.table-3.table3.json", TABLE_FORMAT, 3),
    ("olmes.figure-2.json", FIGURE_FORMAT, 2),
    ("olmes.table-4.leaderboard.json", LEADERBOARD_FORMAT, 4),
    ("olmes.flags-1.json", FLAGS_FORMAT, 1),
    ("olmes.site-manifest-1.json", SITE_MANIFEST_FORMAT, 1),
]


@pytest.mark.parametrize(("name", "form", "version"), EARLIER_FILES, ids=[name for name, *_ in EARLIER_FILES])
def test_a_file_of_each_earlier_version_reads_as_the_current_record(name, form: Format, version) -> None:
    document = json.loads((OLD / name).read_text(encoding="utf-8"))
    assert form.version_of(document, name) == version
    record = form.read(OLD / name)
    assert next(iter(record)) == "format" and record["format"] == form.tag
    kept = {key: value for key, value in document.items() if key not in ("format", "schema", "olmes")}
    assert set(kept) <= set(record)  # an upgrade adds and renames; it drops only what it names


def test_the_earlier_score_summaries_upgrade_their_runs_and_drop_the_repeated_score() -> None:
    old = json.loads((OLD / "olmes.scores-1.boolq.json").read_text(encoding="utf-8"))
    summary = SCORES_FORMAT.read(OLD / "olmes.scores-1.boolq.json")
    assert "olmes" not in summary and "schema" not in summary and old["olmes"] == summary["best_of_two"]
    assert (
        summary["methods"] == old["methods"]
        and summary["inputs"]["cf"]["sha256"] == old["inputs"]["cf"]["sha256"]
    )
    for entry in summary["inputs"].values():
        assert entry["run"]["format"] == RUN_FORMAT.tag and entry["run"]["hardware"] == "not recorded"


def test_a_run_record_before_hardware_says_not_recorded_in_its_place() -> None:
    run = RUN_FORMAT.read(OLD / "olmes.run-1.e8a588a.json")
    keys = list(run)
    assert run["hardware"] == "not recorded" and keys.index("hardware") == keys.index("device") + 1


def test_a_table_of_two_shapes_reads_as_one() -> None:
    """Tables before olmes.table/3 kept a models x tasks table's averages at the top of the record by
    label (Table 4, bits per byte...) or under ``averages`` (the paper's layouts); /3 has one shape."""
    old = json.loads((OLD / "olmes.table-1.bpb.json").read_text(encoding="utf-8"))
    table = TABLE_FORMAT.read(OLD / "olmes.table-1.bpb.json")
    for before, after in zip(old["records"], table["records"], strict=True):
        assert "Average" not in after and after["averages"] == {"Average": before["Average"]}
        assert list(after)[: list(after).index("averages") + 1] == [
            "model",
            "display_name",
            "partial",
            "tasks",
            "averages",
        ]


def test_tables_and_figures_before_reported_rows_say_they_have_none() -> None:
    """olmes.table/4 marks each group that holds a paper's numbers, olmes.figure/3 each row's kind; the
    files before had only evaluated models."""
    old = json.loads((OLD / "olmes.table-3.table3.json").read_text(encoding="utf-8"))
    table = TABLE_FORMAT.read(OLD / "olmes.table-3.table3.json")
    assert [{**group, "reported": False} for group in old["groups"]] == table["groups"]
    for name in ("olmes.figure-1.json", "olmes.figure-2.json"):
        old = json.loads((OLD / name).read_text(encoding="utf-8"))
        figure = FIGURE_FORMAT.read(OLD / name)
        at = old["columns"].index("display_name") + 1
        assert figure["columns"] == [*old["columns"][:at], "kind", *old["columns"][at:]]
        assert [list(row) for row in figure["rows"]] == [figure["columns"]] * len(old["rows"])
        assert [{**row, "kind": "evaluated"} for row in old["rows"]] == figure["rows"]


def test_a_repeated_score_that_is_not_the_best_of_two_is_refused(tmp_path) -> None:
    document = json.loads((OLD / "olmes.scores-1.boolq.json").read_text(encoding="utf-8"))
    path = tmp_path / "boolq.scores.json"
    path.write_text(json.dumps({**document, "olmes": {**document["olmes"], "score": 0.99}}))
    with pytest.raises(OlmesError, match=r"\(olmes\.scores/1\): its olmes field is not its best_of_two"):
        SCORES_FORMAT.read(path)


@pytest.mark.parametrize("form", DOCUMENT_FORMATS, ids=[form.name for form in DOCUMENT_FORMATS])
def test_a_newer_version_is_refused_naming_both(tmp_path, form: Format) -> None:
    path = tmp_path / "newer.json"
    path.write_text(json.dumps({"format": f"{form.name}/{form.version + 1}"}))
    message = rf"newer\.json: {form.name}/{form.version + 1} is newer than this olmes reads \({form.tag}\)"
    with pytest.raises(OlmesError, match=message):
        form.read(path)


def test_another_format_is_refused_with_what_makes_one(tmp_path) -> None:
    with pytest.raises(OlmesError, match=r"not a ScoreSummary \(olmes\.scores/3\); run olmes score"):
        SCORES_FORMAT.read(OLD / "olmes.rotations-1.json")
    with pytest.raises(OlmesError, match=r"not a ModelRecord \(olmes\.model/2\)"):
        MODEL_FORMAT.read(OLD / "olmes.run-1.21af53b.json")


def test_an_earlier_file_that_is_not_its_record_says_which_version_and_what_to_do(tmp_path) -> None:
    path = tmp_path / "bpb.json"
    table = json.loads((OLD / "olmes.table-1.bpb.json").read_text(encoding="utf-8"))
    path.write_text(json.dumps({key: value for key, value in table.items() if key != "values"}))
    with pytest.raises(
        OlmesError, match=r"field 'values' is missing \(a olmes\.table/1 file\); re-run olmes tables"
    ):
        TABLE_FORMAT.read(path)


def test_writers_tag_first_check_and_write_nothing_wrong(tmp_path) -> None:
    record = RUN_FORMAT.read(OLD / "olmes.run-1.21af53b.json")
    path = tmp_path / "x.run.json"
    RUN_FORMAT.write(path, {key: value for key, value in record.items() if key != "format"})
    written = json.loads(path.read_text(encoding="utf-8"))
    assert next(iter(written)) == "format" and written == record and written["format"] == RUN_FORMAT.tag
    with pytest.raises(OlmesError, match="field 'num_requests' of this RunRecord is not int"):
        RUN_FORMAT.write(tmp_path / "bad.run.json", {**record, "num_requests": "many"})
    assert not (tmp_path / "bad.run.json").exists()


def test_parquet_files_carry_their_format_in_the_schema_metadata(tmp_path) -> None:
    assert LOGPROB_FORMAT.check_file(OLD / "olmes.logprobs-1.parquet") == 1
    assert PREDICTION_FORMAT.check_file(OLD / "olmes.predictions-1.parquet") == 1
    frame = pd.read_parquet(OLD / "olmes.logprobs-1.parquet")
    table = pa.Table.from_pandas(frame, preserve_index=False)
    for tag, message in (
        (b"olmes.logprobs/3", r"olmes\.logprobs/3 is newer than this olmes reads \(olmes\.logprobs/2\)"),
        (b"olmes.predictions/2", r"a Parquet file of 'olmes\.predictions/2', not olmes\.logprobs/2"),
    ):
        path = tmp_path / "x.parquet"
        pq.write_table(table.replace_schema_metadata({b"olmes.format": tag}), path)
        with pytest.raises(OlmesError, match=message):
            LOGPROB_FORMAT.check_file(path)
    pq.write_table(table.replace_schema_metadata(LOGPROB_FORMAT.metadata()), path)
    assert LOGPROB_FORMAT.check_file(path) == 2


def test_the_engine_and_the_scorer_write_the_current_parquet_versions(tmp_path) -> None:
    from olmes.logprobs.runner import write_parquet
    from olmes.scoring.predictions import read_predictions_file, write_predictions

    rows = build_requests("piqa", "cf", limit=1)
    write_parquet(tmp_path / "l.parquet", rows, [(-1.0, 2, False)] * len(rows))
    assert LOGPROB_FORMAT.check_file(tmp_path / "l.parquet") == LOGPROB_FORMAT.version
    predictions = read_predictions_file(OLD / "olmes.predictions-1.parquet")
    write_predictions(predictions, tmp_path / "p.parquet")
    assert PREDICTION_FORMAT.check_file(tmp_path / "p.parquet") == PREDICTION_FORMAT.version
    assert read_predictions_file(tmp_path / "p.parquet").equals(predictions)


def test_a_request_file_may_name_its_format_in_a_first_line(tmp_path) -> None:
    rows = build_requests("piqa", "cf", limit=1)
    path = tmp_path / "r.jsonl"
    write_records(rows, path)
    plain = path.read_bytes()
    path.write_bytes(b'{"format": "olmes.requests/1"}\n' + plain)
    assert read_records(path, REQUESTS_FORMAT) == rows
    path.write_bytes(b'{"format": "olmes.requests/2"}\n' + plain)
    with pytest.raises(
        OlmesError, match=r"olmes\.requests/2 is newer than this olmes reads \(olmes\.requests/1\)"
    ):
        read_records(path, REQUESTS_FORMAT)


PLANTED = {  # the committed store's files as commit 21af53b wrote them (tests/data/formats)
    "models/SmolLM2-135M/scores/boolq.scores.json": "olmes.scores-2.boolq.json",
    "models/SmolLM2-135M/logprobs/boolq.cf.parquet.run.json": "olmes.run-1.21af53b.json",
    "models/SmolLM2-135M/model.json": "olmes.model-1.21af53b.json",
}


def _old_store(tmp_path: Path) -> Path:
    """A copy of the committed store (upgraded since) with three of its files back as 21af53b wrote
    them: a score summary /2, a run record /1 and a model record /1."""
    store = tmp_path / "store"
    # as the store was then: before the OLMES v0.2 generative results
    shutil.copytree(REPO / "leaderboard", store, ignore=shutil.ignore_patterns("generative", "*.gen.*"))
    for record in (store / "models").glob("*/model.json"):
        record.write_bytes(_without_generative(record))
    for relative, name in PLANTED.items():
        shutil.copyfile(OLD / name, store / relative)
    return store


def _without_generative(path: Path) -> bytes:
    """A committed file as it was before the generative results: model.json without ``generative``."""
    if path.name != "model.json":
        return path.read_bytes()
    record = json.loads(path.read_text(encoding="utf-8"))
    record.pop("generative", None)
    return (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def test_olmes_upgrade_rewrites_each_earlier_document_as_the_committed_store_has_it(tmp_path, capsys) -> None:
    """The committed store was upgraded from these very files: upgrading them again gives its bytes,
    and nothing else of the store changes; a second run writes nothing."""
    store = _old_store(tmp_path)
    before = {path: path.read_bytes() for path in store.rglob("*") if path.is_file()}
    assert main(["upgrade", str(store)]) == 0
    said = capsys.readouterr().err
    rewritten = "olmes.model/1 -> /2: 1, olmes.run/1 -> /2: 1, olmes.scores/2 -> /3: 1"
    assert f"3 of 175 document(s) rewritten ({rewritten})" in said
    changed = {
        path.relative_to(store).as_posix() for path, data in before.items() if path.read_bytes() != data
    }
    assert changed == set(PLANTED)
    for relative in PLANTED:
        assert (store / relative).read_bytes() == _without_generative(REPO / "leaderboard" / relative)
    again = {path: path.read_bytes() for path in store.rglob("*") if path.is_file()}
    assert main(["upgrade", str(store)]) == 0
    assert "nothing written" in capsys.readouterr().err
    assert all(path.read_bytes() == data for path, data in again.items())


@pytest.mark.slow
def test_an_old_store_verifies_and_makes_the_same_tables_before_and_after_upgrade(tmp_path, capsys) -> None:
    store = _old_store(tmp_path)
    assert main(["tables", "--store", str(store), "--out", str(tmp_path / "before")]) == 0
    assert main(["verify", str(store)]) == 0
    assert (
        "3 document(s) of an earlier format version (olmes.model/1: 1, olmes.run/1: 1, olmes.scores/2: 1)"
        in capsys.readouterr().err
    )
    assert main(["upgrade", str(store)]) == 0
    assert main(["verify", str(store)]) == 0
    assert "earlier format" not in capsys.readouterr().err
    assert main(["tables", "--store", str(store), "--out", str(tmp_path / "after")]) == 0
    for path in sorted((tmp_path / "before").glob("*")):
        if path.name != "index.json":  # it holds each summary's SHA-256, and the summaries were rewritten
            assert path.read_bytes() == (tmp_path / "after" / path.name).read_bytes(), path.name
