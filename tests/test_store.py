"""The results store and ``olmes publish``: what goes in, what is refused, and that stores merge.

Results are made here as a workflow would leave them (results/requests, logprobs with run records,
scores), from the canonical requests of a small task with made-up log-probs: publish checks files,
hashes and labels, not the model.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from olmes import store
from olmes.cli.main import main
from olmes.core.errors import OlmesError
from olmes.core.records import olmes_score
from olmes.core.tasks import TASKS, get_task
from olmes.logprobs.runner import hardware
from olmes.store import blobs
from olmes.store import publish as publishing
from olmes.store.checks import check_task
from olmes.store.sources import sources
from olmes.store.verify import verify_store
from tests.helpers import TASK, make_results, make_robustness, publish_cli, snapshot


def test_full_result_becomes_an_olmes_score(tmp_path) -> None:
    results = make_results(tmp_path / "results", "M1")
    code, err = publish_cli("--from", str(results), "--store", str(tmp_path / "store"))
    assert code == 0, err
    record = store.read_model_record(tmp_path / "store", "M1")
    assert record["tasks"][TASK]["partial"] is False and record["tasks"][TASK]["instances"] == 500
    assert record["spec"] == "M1" and record["fingerprint"] == "f" * 32
    assert record["tasks"][TASK]["hardware"] == [hardware("cpu")]
    summary = json.loads((tmp_path / "store/models/M1/scores" / f"{TASK}.scores.json").read_text())
    assert olmes_score(summary) is not None
    files = sorted(p.name for p in (tmp_path / "store/tasks").iterdir())
    assert f"{TASK}.instances.jsonl.gz" in files and f"{TASK}.mcf.examples.jsonl" in files
    assert code == main(["tables", "--store", str(tmp_path / "store"), "--out", str(tmp_path / "tables")])
    table4 = json.loads((tmp_path / "tables/table4_olmes.json").read_text())
    assert "M1" in json.dumps(table4)


def test_other_requests_are_refused_naming_the_task(tmp_path) -> None:
    def one_more_space(row):
        return {**row, "context": row["context"].replace("Answer:", "Answer: ", 1)}

    results = make_results(tmp_path / "results", "M1", tamper=one_more_space)
    code, err = publish_cli("--from", str(results), "--store", str(tmp_path / "store"))
    assert code == 2
    assert err.startswith(f"olmes: error: M1 {TASK} cf: made with other requests (SHA-256 ")
    assert not (tmp_path / "store" / "models").exists()


def test_partial_goes_in_only_when_asked_and_labelled(tmp_path) -> None:
    results = make_results(tmp_path / "results", "M1", limit=7)
    code, err = publish_cli("--from", str(results), "--store", str(tmp_path / "store"))
    assert code == 2 and f"M1 {TASK} is partial" in err and "--partial" in err
    code, err = publish_cli("--from", str(results), "--store", str(tmp_path / "store"), "--partial")
    assert code == 0, err
    assert "(1 partial)" in err
    assert store.read_model_record(tmp_path / "store", "M1")["tasks"][TASK]["partial"] is True


def test_existing_model_is_replaced_only_when_asked(tmp_path) -> None:
    first = make_results(tmp_path / "first", "M1", seed=0)
    second = make_results(tmp_path / "second", "M1", seed=1)
    target = str(tmp_path / "store")
    assert publish_cli("--from", str(first), "--store", target)[0] == 0
    before = snapshot(tmp_path / "store")
    code, err = publish_cli("--from", str(second), "--store", target)
    assert code == 2 and f"already has M1 on {TASK}; pass --replace" in err
    assert snapshot(tmp_path / "store") == before
    code, err = publish_cli("--from", str(second), "--store", target, "--replace")
    assert code == 0, err
    published = (tmp_path / "store/models/M1/scores" / f"{TASK}.predictions.parquet").read_bytes()
    assert published == (second / "scores/M1" / f"{TASK}.predictions.parquet").read_bytes()


def test_model_from_other_weights_is_refused(tmp_path) -> None:
    target = str(tmp_path / "store")
    assert publish_cli("--from", str(make_results(tmp_path / "a", "M1")), "--store", target)[0] == 0
    other = make_results(tmp_path / "b", "M1", fingerprint="e" * 32)
    code, err = publish_cli("--from", str(other), "--store", target, "--tasks", TASK)
    assert code == 2 and "from other weights or settings" in err


def test_interrupted_publish_leaves_the_store_as_it_was(tmp_path, monkeypatch) -> None:
    first = make_results(tmp_path / "first", "M1", seed=0)
    second = make_results(tmp_path / "second", "M1", seed=1)
    publishing.publish(first, tmp_path / "store")
    before = snapshot(tmp_path / "store")
    calls = []

    def copy_then_stop(source, target):
        calls.append(target)
        if len(calls) == 4:
            raise KeyboardInterrupt
        original_copy(source, target)

    original_copy = publishing._copy
    monkeypatch.setattr(publishing, "_copy", copy_then_stop)
    with pytest.raises(KeyboardInterrupt):
        publishing.publish(second, tmp_path / "store", replace=True)
    assert snapshot(tmp_path / "store") == before
    assert not [p for p in (tmp_path / "store/models").iterdir() if p.name.startswith(".")]


def test_two_stores_merge_into_the_leaderboard_of_one(tmp_path) -> None:
    one = make_results(tmp_path / "one", "M1", seed=0)
    make_results(one, "M2", seed=1)  # both models in one results folder, published together
    publishing.publish(one, tmp_path / "together")
    publishing.publish(one, tmp_path / "a", ["M2"])  # machine A has M2, machine B has M1
    publishing.publish(one, tmp_path / "b", ["M1"])
    publishing.publish(tmp_path / "b", tmp_path / "a")  # merge B into A
    for name in ("together", "a"):
        assert (
            main(["tables", "--store", str(tmp_path / name), "--out", str(tmp_path / f"tables-{name}")]) == 0
        )
    together, merged = tmp_path / "tables-together", tmp_path / "tables-a"
    compared = [p.name for p in together.iterdir() if p.name != "index.json"]
    assert compared and all((together / n).read_bytes() == (merged / n).read_bytes() for n in compared)
    assert snapshot(tmp_path / "together", skip="model.json") == snapshot(tmp_path / "a", skip="model.json")
    with pytest.raises(OlmesError, match="already has M1"):
        publishing.publish(tmp_path / "b", tmp_path / "a")


def test_files_get_the_users_umask(tmp_path) -> None:
    old = os.umask(0o022)
    try:
        publishing.publish(make_results(tmp_path / "results", "M1"), tmp_path / "store")
    finally:
        os.umask(old)
    root = tmp_path / "store"
    for path in [
        root / "store.json",
        root / "models/M1/model.json",
        root / ".gitignore",
        *root.glob("tasks/*"),
        *root.rglob("*.parquet"),
    ]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    for path in [root / "models", root / "models/M1", root / "models/M1/scores", root / "blobs"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o755, path


def test_not_a_store_and_unknown_model_are_one_line_errors(tmp_path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/a.txt").write_text("x")
    results = make_results(tmp_path / "results", "M1")
    with pytest.raises(OlmesError, match="is not an olmes results store"):
        publishing.publish(results, tmp_path / "notes")
    with pytest.raises(OlmesError, match="has no results of model 'M9'"):
        publishing.publish(results, tmp_path / "store", ["M9"])
    with pytest.raises(OlmesError, match="not an olmes results store"):
        store.check_store(tmp_path / "notes")


def test_the_committed_store_is_canonical() -> None:
    """Every model x task in the repository's store passes publish's checks as it stands."""
    root = Path(__file__).resolve().parent.parent / "leaderboard"
    for source in sources(root):
        for task in source.tasks():
            checked = check_task(source, task, "bundle", allow_partial=False)
            assert not checked.summary["partial"]
            assert get_task(task).standard_count == checked.summary["n_instances"]
    assert set(store.model_names(root)) and set(TASKS) == {
        p.name.split(".")[0] for p in (root / "tasks").iterdir() if ".gen." not in p.name
    }
    generative = {task for source in sources(root) for task in source.generative_tasks()}
    assert generative == {p.name.split(".")[0] for p in (root / "tasks").iterdir() if ".gen." in p.name}


def test_committed_store_verifies() -> None:
    """The repository's store passes olmes verify as it stands: every accuracy of every committed
    score summary comes out again from the store's log-probs, and the README's table of published
    results (each row's numbers and the averages line) equals the store."""
    root = Path(__file__).resolve().parent.parent / "leaderboard"
    found = verify_store(root)
    assert [problem.line() for problem in found.problems] == []
    assert found.results >= 20 and not found.notes  # 2 models x 10 tasks, and their robustness results
    readme = (root.parent / "README.md").read_text()
    assert readme.count("scores.json](leaderboard/") == 20  # one row per store model x task: 2 x 10
    assert [info.provenance for info in store.model_infos(root)] == ["reproduced", "reproduced"]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["Gemma-3-270M", "SmolLM2-135M"])
def test_the_embedded_models_reproduce_here_and_their_record_verifies(model, tmp_path) -> None:
    """Issue 37: the store's two embedded models are reproduced in CI: the first 2 instances of every
    task recomputed from the weights on this machine, recorded (olmes reproduce --record) into a copy
    of the store, and that record made again by olmes verify."""
    import shutil

    root = Path(__file__).resolve().parent.parent / "leaderboard"
    copy = tmp_path / "leaderboard"
    shutil.copytree(root, copy)
    work = tmp_path / "work"
    argv = ["reproduce", model, "--store", str(copy), "--limit", "2", "--record", "--workdir", str(work)]
    assert main([*argv, "--output", str(tmp_path / "report.json")]) == 0
    report = json.loads((copy / "reproductions" / model / "reproduction.json").read_text())
    assert report["verdict"] == "reproduced" and report["beyond_tolerance"] == 0, report["verdict"]
    assert report["identity"] == store.read_model_record(copy, model)["identity"]
    found = verify_store(copy, [model])
    assert [problem.line() for problem in found.problems] == [] and not found.notes
    assert {info.name: info.provenance for info in store.model_infos(copy)}[model] == "reproduced"


def test_robustness_results_join_their_model_and_survive_its_replacement(tmp_path) -> None:
    leaderboard = tmp_path / "store"
    robustness = make_robustness(tmp_path / "robustness", "M1")
    code, err = publish_cli("--from", str(robustness), "--store", str(leaderboard), "--robustness-only")
    assert code == 2 and "has no model M1; publish its standard results first" in err
    assert (
        publish_cli("--from", str(make_results(tmp_path / "results", "M1")), "--store", str(leaderboard))[0]
        == 0
    )
    code, err = publish_cli("--from", str(robustness), "--store", str(leaderboard), "--robustness-only")
    assert code == 0 and "0 task(s), 2 robustness result(s)" in err, err
    folder = leaderboard / "models/M1/robustness"
    assert sorted(p.name for p in (folder / "var1").iterdir() if p.suffix == ".json") == [
        f"{TASK}.cf.parquet.run.json", f"{TASK}.mcf.parquet.run.json", f"{TASK}.pmi.parquet.run.json",
        f"{TASK}.scores.json",
    ]  # fmt: skip
    report = json.loads((folder / "rotations" / f"{TASK}.rotations.json").read_text())
    rotated = f"{TASK}.mcf_rot.parquet"
    assert (folder / "rotations" / f"{rotated}.run.json").is_file()  # in the model folder; the log-probs:
    sha256 = report["inputs"]["mcf_rot"]["sha256"]
    assert blobs.logprob_file(leaderboard, folder / "rotations", rotated, sha256).name == f"{sha256}.parquet"
    record = store.read_model_record(leaderboard, "M1")
    assert record["robustness"]["var1"][TASK]["instances"] == 7 and record["tasks"][TASK]["instances"] == 500
    code, err = publish_cli("--from", str(robustness), "--store", str(leaderboard), "--robustness-only")
    assert code == 2 and f"already has M1 on {TASK} (var1), {TASK} (rotations); pass --replace" in err
    # replacing the standard result (same weights) keeps the robustness results
    code, err = publish_cli("--from", str(tmp_path / "results"), "--store", str(leaderboard), "--replace")
    assert code == 0 and store.read_model_record(leaderboard, "M1")["robustness"] == record["robustness"]
    assert main(["tables", "--store", str(leaderboard), "--out", str(tmp_path / "tables")]) == 0
    table5 = json.loads((tmp_path / "tables/table5_variants.json").read_text())
    assert [row[:3] for row in table5["rows"]] == [["M1", "OpenBookQA", "7"]]
    rotations = json.loads((tmp_path / "tables/rotations.json").read_text())
    assert [row[:3] for row in rotations["rows"]] == [["M1", "OpenBookQA", "7"]]


def test_robustness_from_other_requests_or_weights_is_refused(tmp_path) -> None:
    leaderboard = tmp_path / "store"
    assert (
        publish_cli("--from", str(make_results(tmp_path / "results", "M1")), "--store", str(leaderboard))[0]
        == 0
    )

    def one_more_space(row):
        return {**row, "context": row["context"].replace("Correct answer:", "Correct answer: ", 1)}

    tampered = make_robustness(tmp_path / "a", "M1", tamper=one_more_space)
    code, err = publish_cli("--from", str(tampered), "--store", str(leaderboard), "--robustness-only")
    assert code == 2 and f"M1 {TASK} (var1) cf: made with other requests" in err, err
    other_weights = make_robustness(tmp_path / "b", "M1", fingerprint="e" * 32)
    code, err = publish_cli("--from", str(other_weights), "--store", str(leaderboard), "--robustness-only")
    assert code == 2 and "robustness results join the weights of its standard results" in err
    assert not (leaderboard / "models/M1/robustness").exists()
    misplaced = make_robustness(tmp_path / "c", "M1")  # a variant's summary where the standard's go
    for name in (f"{TASK}.scores.json", f"{TASK}.predictions.parquet"):
        (misplaced / "scores/M1" / name).write_bytes(
            (misplaced / "variants/var1/scores/M1" / name).read_bytes()
        )
    code, err = publish_cli("--from", str(misplaced), "--store", str(leaderboard), "--partial")
    assert code == 2 and "a prompt variant's scores (var1), not the standard's" in err
