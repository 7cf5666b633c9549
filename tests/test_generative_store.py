"""The OLMES v0.2 generative results end to end: requests -> olmes generate (a tiny model) ->
olmes score-generative -> olmes publish -> olmes verify -> tables and site from the store; and every
way a published generative result can be wrong, each named by verify in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from olmes.core.records.generative import GENERATIVE_INSTANCES_FORMAT, read_generative_summary
from olmes.core.resources import file_sha256
from olmes.store.publish import publish
from olmes.store.verify import verify_store
from tests.helpers import olmes
from tests.tiny_model import build_tiny_model

TASKS = {"drop": 3, "naturalqs_open": 4}  # task -> instances


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A results folder with a tiny model's generative results on two tasks' first instances."""
    root = tmp_path_factory.mktemp("generative")
    weights = build_tiny_model(root / "weights")
    for task, limit in TASKS.items():
        requests = root / "requests" / f"{task}.gen.jsonl"
        folder = root / "generative" / "tiny"
        code, out = olmes("requests", task, "--limit", str(limit), "--output", str(requests))
        assert code == 0, out
        generations = folder / f"{task}.generations.parquet"
        code, out = olmes("generate", "--model", str(weights), "--requests", str(requests), "--output",
                          str(generations), "--quiet")  # fmt: skip
        assert code == 0, out
        code, out = olmes("score-generative", task, "--model-name", "tiny", "--requests", str(requests),
                          "--generations", str(generations), "--limit", str(limit),
                          "--summary", str(folder / f"{task}.generative.json"))  # fmt: skip
        assert code == 0, out
        assert f"on {task.upper() if task == 'drop' else 'Natural Questions (open)'}" in out
    models = {"models": [{"name": "tiny", "display_name": "tiny test LM"}]}
    (root / "models.json").write_text(json.dumps(models))
    return root


COMMITTED_STORE = Path(__file__).resolve().parents[1] / "leaderboard"


@pytest.fixture
def store(results, tmp_path) -> Path:
    """The committed store with the tiny model's generative results published into it."""
    target = tmp_path / "store"
    shutil.copytree(COMMITTED_STORE, target)
    lines = publish(results, target, allow_partial=True)
    folder = target / "models" / "tiny"
    assert lines == [f"tiny test LM: 0 task(s), 2 generative task(s) (2 partial) -> {folder}"]
    return target


def test_a_generative_summary_holds_what_its_generations_give(results):
    summary = read_generative_summary(results / "generative" / "tiny" / "drop.generative.json")
    assert summary["version"] == "OLMES v0.2" and summary["primary_metric"] == "f1"
    assert summary["n_instances"] == 3 and summary["partial"]
    assert summary["partial_reasons"] == ["3 of the standard's 1000 instances"]
    assert summary["inputs"]["generations"]["run"]["generation"]["requests"] == 3
    table = pq.read_table(results / "generative" / "tiny" / "drop.instances.parquet")
    assert table.schema.metadata[b"olmes.format"] == GENERATIVE_INSTANCES_FORMAT.tag.encode()
    f1 = table.column("f1").to_pylist()
    assert summary["metrics"]["f1"]["value"] == pytest.approx(sum(f1) / 3)


def test_publish_then_verify_is_clean_and_lists_the_tasks(store):
    found = verify_store(store, ["tiny"])
    assert found.problems == [], [problem.line() for problem in found.problems]
    assert found.results == 2
    record = json.loads((store / "models" / "tiny" / "model.json").read_text())
    assert list(record["generative"]) == ["drop", "naturalqs_open"]
    assert record["tasks"] == {} and record["wall_time_s"] == 0
    assert record["generative"]["drop"]["instances"] == 3
    present = {p.name for p in (store / "tasks").iterdir()}
    for task in TASKS:
        assert {f"{task}.gen.examples.jsonl", f"{task}.gen.instances.jsonl.gz"} <= present
    summary = json.loads((store / "models" / "tiny" / "generative" / "drop.generative.json").read_text())
    assert "model_path" not in summary["inputs"]["generations"]["run"]  # the store's portable form


def test_partial_needs_the_flag_and_a_second_publish_needs_replace(results, store, tmp_path):
    with pytest.raises(Exception, match="is partial .*publish it with --partial"):
        publish(results, tmp_path / "other")
    again = r"already has tiny test LM \(tiny\) on drop \(generative\), naturalqs_open \(generative\)"
    with pytest.raises(Exception, match=again):
        publish(results, store, allow_partial=True)
    publish(results, store, allow_partial=True, replace=True)
    assert verify_store(store, ["tiny"]).problems == []


def _problems(store: Path) -> list[str]:
    return [problem.line() for problem in verify_store(store, ["tiny"]).problems]


def _rewrite_summary(path: Path, change) -> None:
    summary = json.loads(path.read_text())
    change(summary)
    path.write_text(json.dumps(summary))


def test_verify_recomputes_the_metrics(store):
    path = store / "models" / "tiny" / "generative" / "drop.generative.json"
    _rewrite_summary(path, lambda s: s["metrics"]["f1"].update(value=0.99))
    assert any("drop.generative.json: metrics is" in line for line in _problems(store))


def test_verify_recomputes_each_instance_from_the_generations(store):
    folder = store / "models" / "tiny" / "generative"
    generations = folder / "drop.generations.parquet"
    table = pq.read_table(generations)
    texts = table.column("generation").to_pylist()
    texts[0] = " 1507"  # a made-up answer, its hashes made to match
    table = table.set_column(table.schema.get_field_index("generation"), "generation", pa.array(texts))
    pq.write_table(table, generations)
    sha256 = file_sha256(generations)
    summary = folder / "drop.generative.json"
    _rewrite_summary(summary, lambda s: s["inputs"]["generations"].update(sha256=sha256))
    lines = _problems(store)
    assert any("its generations give" in line or "column generation differs" in line for line in lines), lines


def test_verify_names_a_changed_file_a_stray_file_and_the_record(store):
    folder = store / "models" / "tiny" / "generative"
    with (folder / "naturalqs_open.instances.parquet").open("ab") as handle:
        handle.write(b"x")
    (folder / "notes.txt").write_text("hello")
    shutil.copy(folder / "drop.generative.json", folder / "trivia.generative.json")
    record_path = store / "models" / "tiny" / "model.json"
    record = json.loads(record_path.read_text())
    record["generative"]["drop"]["instances"] = 1000
    record_path.write_text(json.dumps(record))
    lines = _problems(store)
    changed = "naturalqs_open.instances.parquet changed after its summary was written"
    assert any(changed in line for line in lines)
    assert any("notes.txt: not a file of a results store" in line for line in lines)
    assert any("trivia.generative.json: a stray summary" in line for line in lines)
    assert any("generative.drop: instances is 1000, its result says 3" in line for line in lines)


def test_verify_refuses_other_requests(store):
    folder = store / "models" / "tiny" / "generative"
    run_path = folder / "drop.generations.parquet.run.json"
    run = json.loads(run_path.read_text())
    run["requests_sha256"] = "0" * 64
    run_path.write_text(json.dumps(run))
    assert any("generated from other requests" in line for line in _problems(store))


def test_tables_and_site_of_the_store_show_the_generative_tasks(store, tmp_path):
    code, out = olmes("tables", "--store", str(store), "--out", str(tmp_path / "tables"))
    assert code == 0, out
    table = json.loads((tmp_path / "tables" / "generative_scores.json").read_text())
    assert "OLMES v0.2" in json.dumps(table)
    assert [row["model"] for row in table["records"]][-1] == "tiny"
    code, out = olmes("site", "--store", str(store), "--tables", str(tmp_path / "tables"), "--out",
                      str(tmp_path / "site"))  # fmt: skip
    assert code == 0, out
    page = (tmp_path / "site" / "tasks" / "drop.html").read_text()
    assert "tiny test LM" in page and "OLMES v0.2" in page


def test_reproduction_compares_generations_and_reports_them(store, tmp_path):
    """olmes reproduce's generative part: the store's generations against ones made again (here a copy
    with one generation changed), each differing instance named; the lines and the site show them;
    a reproduction record never holds them (verify could not recompute them from its files)."""
    from olmes.core.records import REPRODUCTION_FORMAT
    from olmes.store.generative import compare_generations
    from olmes.store.reproduction_lines import summary_lines
    from tests.helpers import reproduction_report

    stored = store / "models" / "tiny" / "generative" / "drop.generations.parquet"
    assert compare_generations("drop", 3, stored, stored)["differing"] == []
    table = pq.read_table(stored)
    texts = table.column("generation").to_pylist()
    texts[1] += " and more"
    again = tmp_path / "again.parquet"
    changed = table.set_column(table.schema.get_field_index("generation"), "generation", pa.array(texts))
    pq.write_table(changed.replace_schema_metadata(table.schema.metadata), again)
    compared = compare_generations("drop", 2, again, stored)
    expected = {"task": "drop", "instances": 2, "identical": 1, "differing": [1], "max_abs_delta": 0.0}
    assert compared == expected
    report = {**reproduction_report([]), "model": "tiny", "generative": [compared]}
    REPRODUCTION_FORMAT.stamped(report)  # a valid report
    lines = summary_lines(report)
    assert "drop               2 generations (OLMES v0.2)  1/2 identical (differ: instances 1)" in lines[-2]
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(report))
    code, out = olmes("tables", "--store", str(store), "--out", str(tmp_path / "tables"))
    assert code == 0, out
    code, out = olmes("site", "--store", str(store), "--tables", str(tmp_path / "tables"), "--reproduction",
                      str(path), "--out", str(tmp_path / "site"))  # fmt: skip
    assert code == 0, out
    page = (tmp_path / "site" / "reproduction.html").read_text()
    assert "OLMES v0.2 generative tasks: the first instances generated again here" in page
    assert '<strong class="bad">1/2</strong>' in page
