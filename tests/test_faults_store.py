"""Faults and bad input at the results store (issue 29, cases 3, 4, 5, 6 and 9): two publishes at
once, a publish killed midway, a lock left behind, a hand-edited summary published, the Pages build
not verifying, an altered tables cache entry, an edited bits-per-byte, symbolic links, unknown files
and a stray summary in the store. Each ends in the right result or one line that says what is wrong,
with nothing lost. Stores are small: one model on OpenBookQA with made-up log-probs
(tests/helpers.py's results helpers), built once and copied for each fault."""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml

from olmes import store
from olmes.cli.main import main
from olmes.core.resources import file_sha256
from olmes.store import publish as publishing
from olmes.store.verify import verify_store
from olmes.tables import digest as digests
from tests import helpers
from tests.helpers import TASK, make_results, publish_cli

REPO = Path(__file__).resolve().parent.parent
MODEL = "M1"


@pytest.fixture
def leaderboard(built, tmp_path) -> Path:
    copy = tmp_path / "leaderboard"
    shutil.copytree(built, copy)
    return copy


def verify(root: Path) -> tuple[int, list[str]]:
    """``olmes verify ROOT``: its exit status and its lines (no traceback: main would raise it)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["verify", str(root)])
    return code, err.getvalue().splitlines()


def problems(root: Path) -> list[str]:
    code, lines = verify(root)
    found = [line for line in lines[:-1] if not line.startswith("olmes: verify: note: ")]
    assert code == (1 if found else 0), lines
    return found


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def results_of(root: Path, model: str, task: str, *, limit: int | None = None) -> Path:
    """tests/helpers.py's make_results for another task."""
    saved = helpers.TASK
    helpers.TASK = task
    try:
        return make_results(root, model, limit=limit)
    finally:
        helpers.TASK = saved


def snapshot(root: Path) -> dict[str, bytes]:
    """The store's files, without what a publish leaves only while running or when killed."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not any(part.startswith(".") and part != ".gitignore" for part in p.parts)
    }


# -- case 3: the publish lock, an interrupted publish -------------------------------------------------


def test_two_publishes_of_one_model_forced_to_overlap_end_as_one_after_the_other(tmp_path, monkeypatch):
    """Publish A (M1 on OpenBookQA) pauses between reading the store and writing it; publish B (M1
    on ARC-Easy) starts meanwhile. Without a lock both read "no M1", both write, and A's task is lost
    while both exit 0. With it B waits for A and then adds its task to A's: the store is exactly A
    then B, complete, and olmes verify agrees."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    first = make_results(tmp_path / "a", MODEL)
    second = results_of(tmp_path / "b", MODEL, "arc_easy", limit=5)
    root = tmp_path / "store"
    arrivals: queue.Queue = queue.Queue()
    release = threading.Event()
    model_record, lock_waiting = publishing._model_record, getattr(publishing, "_lock_waiting", None)

    def pausing(*args):  # after the store was read, before the model folder is written
        arrivals.put(("paused", threading.current_thread().name))
        assert release.wait(120)
        return model_record(*args)

    def waiting(*args):
        arrivals.put(("waiting", threading.current_thread().name))
        if lock_waiting is not None:
            lock_waiting(*args)

    monkeypatch.setattr(publishing, "_model_record", pausing)
    monkeypatch.setattr(publishing, "_lock_waiting", waiting, raising=False)
    errors = {}

    def run(origin: Path, **options) -> None:
        try:
            publishing.publish(origin, root, **options)
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors[threading.current_thread().name] = error

    a = threading.Thread(target=run, args=(first,), name="A")
    b = threading.Thread(target=run, args=(second,), kwargs={"allow_partial": True}, name="B")
    a.start()
    assert arrivals.get(timeout=120) == ("paused", "A")
    b.start()
    assert arrivals.get(timeout=120)[1] == "B"  # B paused too (no lock) or waits for A's lock
    release.set()
    a.join(300)
    b.join(300)
    assert not errors, errors
    serial = tmp_path / "serial"
    publishing.publish(first, serial)
    publishing.publish(second, serial, allow_partial=True)
    assert snapshot(root) == snapshot(serial)
    assert sorted(store.read_model_record(root, MODEL)["tasks"]) == ["arc_easy", TASK]
    found = verify_store(root)
    assert [p.line() for p in found.problems] == [] and found.notes == [] and found.results == 2
    assert sorted(p.name for p in root.iterdir()) == [".gitignore", "blobs", "models", "store.json", "tasks"]
    assert [p.name for p in (root / "models").iterdir()] == [MODEL]


_KILLED = """
import os, signal, sys
from olmes.store import publish as store
store._model_record = lambda *args: os.kill(os.getpid(), signal.SIGKILL)  # killed midway
store.publish(sys.argv[1], sys.argv[2], replace=True, logprobs="in-store")
"""


def test_a_killed_publish_leaves_the_store_as_it_was_and_the_next_one_cleans_up(tmp_path, capsys):
    first = make_results(tmp_path / "first", MODEL, seed=0)
    second = make_results(tmp_path / "second", MODEL, seed=1)
    root = tmp_path / "store"
    publishing.publish(first, root, logprobs="in-store")
    before = snapshot(root)
    done = subprocess.run([sys.executable, "-c", _KILLED, str(second), str(root)], cwd=REPO, timeout=300)
    assert done.returncode == -signal.SIGKILL
    (left,) = [p.name for p in (root / "models").iterdir() if p.name != MODEL]
    assert left.startswith(f".{MODEL}.publishing-") and (root / ".publish.lock").is_file()
    assert snapshot(root) == before  # the store as it was
    found = verify_store(root)  # the leftover is no model, but a problem (issue 37: never committed)
    lines = [p.line() for p in found.problems]
    assert found.models == [MODEL] and len(lines) == 2, lines
    assert any(left in line and "left by an interrupted publish" in line for line in lines)
    assert any(".publish.lock" in line and "no longer runs" in line for line in lines)
    assert store.model_names(root) == [MODEL]  # nor a model for the tables and the site
    capsys.readouterr()
    publishing.publish(second, root, replace=True, logprobs="in-store")
    err = capsys.readouterr().err.splitlines()
    assert any("which no longer runs; taking the lock over" in line for line in err), err
    assert any(f"removed {root / 'models' / left}, left by an interrupted publish" in line for line in err)
    assert [p.name for p in (root / "models").iterdir()] == [MODEL] and not (root / ".publish.lock").exists()
    published = root / "models" / MODEL / "scores" / f"{TASK}.predictions.parquet"
    assert published.read_bytes() == (second / "scores" / MODEL / f"{TASK}.predictions.parquet").read_bytes()
    found = verify_store(root)
    assert [p.line() for p in found.problems] == [] and found.notes == []


def test_a_lock_held_by_a_running_publish_or_another_host_is_waited_for_then_refused(tmp_path, monkeypatch):
    from olmes.store import lock

    monkeypatch.setattr(lock, "WAIT_S", 0.5)
    root = tmp_path / "store"
    publishing.publish(make_results(tmp_path / "results", MODEL), root)
    before = snapshot(root)
    again = str(tmp_path / "results")
    holders = [
        ({"pid": os.getpid(), "host": socket.gethostname()}, "is being published to by pid"),
        ({"pid": 4242, "host": "elsewhere.example"}, "which cannot be checked from this host"),
    ]
    for holder, said in holders:
        (root / ".publish.lock").write_text(json.dumps({**holder, "started": "2026-01-01T00:00:00Z"}))
        code, err = publish_cli("--from", again, "--store", str(root), "--replace")
        lines = err.splitlines()
        assert code == 2 and lines[-1].startswith("olmes: error: ") and said in lines[-1], err
        assert "waiting for the store's lock" in lines[0] and len(lines) == 2
        assert snapshot(root) == before and (root / ".publish.lock").is_file()
    (root / ".publish.lock").unlink()
    assert publish_cli("--from", again, "--store", str(root), "--replace")[0] == 0


def test_a_model_left_swapped_out_is_named_by_verify_and_put_back_by_the_next_publish(leaderboard, capsys):
    """Where no atomic exchange of two folders exists, the old model folder is renamed aside before
    the new one is renamed in; a publish killed between the two leaves no model folder."""
    models = leaderboard / "models"
    before = snapshot(leaderboard)
    (models / MODEL).rename(models / f".{MODEL}.old-abc123xy")
    found = problems(leaderboard)
    assert len(found) == 1 and f"{models / MODEL}: missing: an interrupted publish left it" in found[0]
    other = make_results(leaderboard.parent / "other", "M2", seed=2)
    publishing.publish(other, leaderboard, logprobs="in-store")
    assert f"put {models / MODEL} back" in capsys.readouterr().err
    assert {k: v for k, v in snapshot(leaderboard).items() if "M2" not in k} == before
    assert problems(leaderboard) == []


def test_without_an_atomic_exchange_an_interrupted_swap_puts_the_old_folder_back(leaderboard, monkeypatch):
    before = snapshot(leaderboard)
    second = make_results(leaderboard.parent / "second", MODEL, seed=1)
    monkeypatch.setattr(publishing, "_exchange", lambda first, second: False)
    rename = os.rename

    def interrupted(source, target):
        if Path(source).name.startswith(f".{MODEL}.publishing-"):
            raise KeyboardInterrupt  # between renaming the old folder aside and the new one in
        rename(source, target)

    monkeypatch.setattr(publishing.os, "rename", interrupted)
    with pytest.raises(KeyboardInterrupt):
        publishing.publish(second, leaderboard, replace=True, logprobs="in-store")
    monkeypatch.undo()
    assert snapshot(leaderboard) == before
    assert [p.name for p in (leaderboard / "models").iterdir()] == [MODEL]


# -- case 4: publish accepts exactly what verify passes; Pages verifies before it builds ------------------


def test_publish_refuses_a_hand_edited_summary_in_one_line(tmp_path):
    results = make_results(tmp_path / "results", MODEL)
    summary = results / "scores" / MODEL / f"{TASK}.scores.json"
    edit_json(
        summary, lambda s: (s["methods"]["mcf"].update(accuracy=0.95), s["best_of_two"].update(score=0.95))
    )
    root = tmp_path / "store"
    code, err = publish_cli("--from", str(results), "--store", str(root))
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"olmes: error: {MODEL} not published, olmes verify would refuse it: {summary}: ")
    assert "0.95, its log-probs give" in err and "more problem(s)" in err
    assert not (root / "models").exists() or not any((root / "models").iterdir())
    assert not any((root / "blobs").glob("*")) if (root / "blobs").exists() else True


def test_the_pages_build_verifies_the_store_before_building_the_site() -> None:
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "pages.yml").read_text())
    runs = [step.get("run", "") for step in workflow["jobs"]["build"]["steps"]]
    verify_step = next(i for i, run in enumerate(runs) if run.strip() == "olmes verify leaderboard")
    build_step = next(i for i, run in enumerate(runs) if "scripts/build_pages.sh" in run)
    assert verify_step < build_step
    fetch = workflow["jobs"]["build"]["steps"][verify_step - 1]
    assert "olmes fetch-logprobs --store leaderboard" in fetch["run"]


# -- case 5: the tables' digest cache is checked by content ------------------------------------------------


def _rewrite_entry(path: Path, change) -> None:
    """Rewrite a cache entry as a valid .npz whose facts ``change`` alters (its other members kept)."""
    with np.load(path, allow_pickle=False) as found:
        arrays = {name: found[name] for name in found.files}
    facts = json.loads(arrays["facts"].tobytes())
    change(facts)
    arrays["facts"] = np.frombuffer(json.dumps(facts).encode(), dtype=np.uint8)
    with open(path, "wb") as sink:
        np.savez(sink, **arrays)


def test_an_altered_digest_cache_entry_is_computed_again_never_trusted(leaderboard, tmp_path, monkeypatch):
    monkeypatch.setenv("OLMES_CACHE_DIR", str(tmp_path / "cache"))
    summary_path = leaderboard / "models" / MODEL / "scores" / f"{TASK}.scores.json"
    summary = json.loads(summary_path.read_text())
    calls = []

    def read():
        calls.append(1)
        return digests.read_columns(summary_path.parent / summary["predictions"]["path"])

    first = digests.digest_of(summary, summary_path, read)
    (entry,) = (tmp_path / "cache" / "tables").glob("*.npz")
    _rewrite_entry(entry, lambda facts: facts.update(chance=0.9, flags=[]))
    again = digests.digest_of(summary, summary_path, read)
    assert len(calls) == 2 and again.chance == first.chance and again.flags == first.flags
    assert digests.digest_of(summary, summary_path, read).chance == first.chance and len(calls) == 2
    other = tmp_path / "other.scores.json"  # another key's entry copied under this one's name
    other.write_text(summary_path.read_text() + "\n")
    digests.digest_of(summary, other, read)
    entries = sorted((tmp_path / "cache" / "tables").glob("*.npz"), key=lambda p: p.stat().st_mtime)
    shutil.copyfile(entries[-1], entries[0])
    assert digests.digest_of(summary, summary_path, read).chance == first.chance and len(calls) == 4


def test_an_altered_cache_changes_no_table(leaderboard, tmp_path, monkeypatch):
    monkeypatch.setenv("OLMES_CACHE_DIR", str(tmp_path / "cache"))
    outputs = []
    for attempt in range(2):
        out = tmp_path / f"tables{attempt}"
        assert main(["tables", "--store", str(leaderboard), "--out", str(out), "--resamples", "20"]) == 0
        outputs.append({name: (out / name).read_bytes() for name in ("flags.json", "leaderboard.json")})
        for entry in (tmp_path / "cache" / "tables").glob("*.npz"):
            _rewrite_entry(entry, lambda facts: facts.update(chance=0.9, flags=[]))
    assert outputs[0] == outputs[1]


# -- case 6: verify recomputes bits per byte --------------------------------------------------------------


def test_an_edited_bpb_is_caught(leaderboard):
    path = leaderboard / "models" / MODEL / "scores" / f"{TASK}.scores.json"
    bpb = json.loads(path.read_text())["bpb"]
    edit_json(path, lambda s: s["bpb"].update(bpb=0.5))
    assert problems(leaderboard) == [
        f"olmes: verify: {path}: bpb bpb is 0.5, its log-probs give {bpb['bpb']!r}"
    ]


# -- case 9: links, unknown files and stray summaries in the store ----------------------------------------


def test_a_symbolic_link_anywhere_in_the_store_is_a_problem(leaderboard, tmp_path):
    predictions = leaderboard / "models" / MODEL / "scores" / f"{TASK}.predictions.parquet"
    outside = tmp_path / "elsewhere.parquet"
    shutil.move(predictions, outside)
    predictions.symlink_to(outside)  # the same bytes, through a link to a file outside the store
    assert problems(leaderboard) == [
        f"olmes: verify: {predictions}: a symbolic link (to {outside}); a store holds plain files and "
        "folders only: put the file itself there, or remove the link"
    ]
    predictions.unlink()
    predictions.symlink_to("/etc/passwd")
    found = problems(leaderboard)
    assert found[0].startswith(f"olmes: verify: {predictions}: a symbolic link (to /etc/passwd)"), found


def test_a_blob_linked_elsewhere_is_a_problem(tmp_path):
    root = tmp_path / "store"
    publishing.publish(make_results(tmp_path / "results", MODEL), root)  # log-probs to blobs/
    blob = sorted((root / "blobs").glob("*.parquet"))[0]
    outside = tmp_path / blob.name
    shutil.move(blob, outside)
    blob.symlink_to(outside)
    assert problems(root) == [
        f"olmes: verify: {blob}: a symbolic link (to {outside}); a store holds plain files and folders "
        "only: put the file itself there, or remove the link"
    ]


def test_unknown_files_are_named(leaderboard):
    strays = [
        leaderboard / "notes.txt",
        leaderboard / "blobs" / "copy.parquet",
        leaderboard / "models" / MODEL / "scores" / "notes.txt",
        leaderboard / "models" / MODEL / "logprobs" / "piqa.cf.parquet",  # no summary names it
    ]
    for path in strays:
        path.parent.mkdir(exist_ok=True)
        path.write_text("x")
    assert sorted(problems(leaderboard)) == [
        f"olmes: verify: {path}: not a file of a results store (its format has no place for it); remove it"
        for path in sorted(strays)
    ]


def test_a_stray_summary_is_one_line_not_a_traceback(leaderboard):
    summary = leaderboard / "models" / MODEL / "scores" / f"{TASK}.scores.json"
    stray = summary.with_name("extra.scores.json")
    shutil.copyfile(summary, stray)
    variant = leaderboard / "models" / MODEL / "robustness" / "var1" / "extra.scores.json"
    variant.parent.mkdir(parents=True)
    shutil.copyfile(summary, variant)
    assert sorted(problems(leaderboard)) == [
        f"olmes: verify: {path}: a stray summary: 'extra' is not a task of this olmes version; remove it"
        for path in sorted([variant, stray])
    ]


def test_a_predictions_path_out_of_its_folder_is_a_problem(leaderboard):
    summary = leaderboard / "models" / MODEL / "scores" / f"{TASK}.scores.json"
    other = leaderboard / "tasks" / f"{TASK}.predictions.parquet"
    shutil.copyfile(summary.with_name(f"{TASK}.predictions.parquet"), other)
    edit_json(
        summary,
        lambda s: s["predictions"].update(path=f"../../../tasks/{other.name}", sha256=file_sha256(other)),
    )
    found = problems(leaderboard)
    assert any(
        f"{summary}: predictions.path '../../../tasks/{other.name}' is not the name of a file" in line
        for line in found
    ), found
