"""Log-prob files kept outside git: published into the store's blobs/ by SHA-256, read through one
resolver, and fetched back (hash-checked) by ``olmes fetch-logprobs`` from a file host.

Results are made as tests/test_store.py makes them (canonical requests of a small task, made-up
log-probs), on the first instances only, published with --partial: these tests check where files go
and how they come back, not scores.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import json
import shutil
import threading
from pathlib import Path

import pytest

from olmes import store
from olmes.core.errors import OlmesError
from olmes.store import blobs
from olmes.store import publish as publishing
from tests.helpers import SETS, TASK, make_results, make_robustness, olmes

LIMIT = 7


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> tuple[Path, Path]:
    """Results folders of model M1 on the first LIMIT instances: the standard's, and robustness."""
    root = tmp_path_factory.mktemp("results")
    return make_results(root / "standard", "M1", limit=LIMIT), make_robustness(root / "robustness", "M1")


def publish(results: tuple[Path, Path], target: Path, *args: str) -> tuple[int, str]:
    """Both results folders published into ``target`` (an exit status other than 0 stops)."""
    standard, robustness = results
    code, err = publish_from(standard, target, *args)
    return publish_from(robustness, target, "--robustness-only", *args) if code == 0 else (code, err)


def publish_from(origin: Path, target: Path, *args: str) -> tuple[int, str]:
    return olmes("publish", "--from", str(origin), "--store", str(target), "--partial", *args)


def recorded(leaderboard: Path) -> dict[str, str]:
    """The standard log-prob files' SHA-256 as the published score summary records them."""
    summary = json.loads((leaderboard / "models/M1/scores" / f"{TASK}.scores.json").read_text())
    return {request_set: entry["sha256"] for request_set, entry in summary["inputs"].items()}


@contextlib.contextmanager
def http_host(folder: Path):
    """``folder`` served over HTTP on 127.0.0.1 (a free port) while the block runs; yields its URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def move_blobs_to_host(leaderboard: Path, host: Path) -> dict[str, bytes]:
    """The store's blobs moved to a host folder (as an upload of blobs/ would); returns their bytes."""
    shutil.copytree(leaderboard / blobs.BLOBS, host)
    shutil.rmtree(leaderboard / blobs.BLOBS)
    return {p.name: p.read_bytes() for p in host.iterdir()}


def test_publish_puts_logprobs_in_blobs_named_by_their_sha256(results, tmp_path) -> None:
    leaderboard = tmp_path / "store"
    code, err = publish(results, leaderboard)
    assert code == 0, err
    folder = leaderboard / "models/M1/logprobs"
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{TASK}.{s}.parquet.run.json" for s in SETS)
    parquet = (leaderboard / "models").rglob("*.parquet")
    assert not [p for p in parquet if not p.name.endswith(".predictions.parquet")]  # robustness ones too
    for path in (leaderboard / blobs.BLOBS).iterdir():
        assert path.name == hashlib.sha256(path.read_bytes()).hexdigest() + ".parquet"
    for request_set, sha256 in recorded(leaderboard).items():
        source = results[0] / "logprobs/M1" / f"{TASK}.{request_set}.parquet"
        located = blobs.model_logprob_file(leaderboard, "M1", TASK, request_set)
        assert located == blobs.blob_path(leaderboard, sha256) and located.read_bytes() == source.read_bytes()
    assert len(list((leaderboard / blobs.BLOBS).iterdir())) == 8  # standard 3, var1 3, rotations 2
    assert (leaderboard / ".gitignore").read_text() == "/blobs/\n"


def test_in_store_keeps_the_logprobs_in_the_model_folder(results, tmp_path) -> None:
    leaderboard = tmp_path / "store"
    assert publish(results, leaderboard, "--logprobs", "in-store")[0] == 0
    folder = leaderboard / "models/M1/logprobs"
    for request_set, sha256 in recorded(leaderboard).items():
        path = folder / f"{TASK}.{request_set}.parquet"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256
        assert blobs.model_logprob_file(leaderboard, "M1", TASK, request_set) == path
    assert (leaderboard / "models/M1/robustness/rotations" / f"{TASK}.mcf_rot.parquet").is_file()
    assert not (leaderboard / blobs.BLOBS).exists() and not (leaderboard / ".gitignore").exists()
    code, err = olmes("fetch-logprobs", "--store", str(leaderboard))
    assert code == 0 and "0 external log-prob file(s)" in err


def test_a_missing_blob_is_one_line_naming_it_and_the_fetch(results, tmp_path) -> None:
    leaderboard = tmp_path / "store"
    assert publish(results, leaderboard)[0] == 0
    sha256 = recorded(leaderboard)["pmi"]
    blobs.blob_path(leaderboard, sha256).unlink()
    with pytest.raises(OlmesError) as raised:
        blobs.model_logprob_file(leaderboard, "M1", TASK, "pmi")
    message = str(raised.value)
    assert "\n" not in message and f"{TASK}.pmi.parquet" in message and sha256 in message
    assert f"olmes fetch-logprobs --store {leaderboard}" in message
    # merging that store into another reads through the same resolver: the same error, nothing written
    code, err = publish_from(leaderboard, tmp_path / "other")
    assert code == 2 and f"olmes fetch-logprobs --store {leaderboard}" in err
    assert not (tmp_path / "other/models").exists()


def test_fetch_restores_the_blobs_from_an_http_host_byte_for_byte(results, tmp_path) -> None:
    leaderboard = tmp_path / "store"
    assert publish(results, leaderboard)[0] == 0
    uploaded = move_blobs_to_host(leaderboard, tmp_path / "host")
    with http_host(tmp_path / "host") as url:
        code, err = olmes("fetch-logprobs", "--store", str(leaderboard), "--host", url)
        assert code == 0, err
        assert err.strip().endswith("8 external log-prob file(s): 0 present, 8 fetched, 0 missing")
        assert {p.name: p.read_bytes() for p in (leaderboard / blobs.BLOBS).iterdir()} == uploaded
        code, err = olmes("fetch-logprobs", "--store", str(leaderboard), "--host", url)
        assert code == 0 and "8 present, 0 fetched, 0 missing" in err


def test_a_tampered_or_missing_file_on_the_host_fails_naming_it(results, tmp_path) -> None:
    leaderboard = tmp_path / "store"
    assert publish(results, leaderboard)[0] == 0
    move_blobs_to_host(leaderboard, tmp_path / "host")
    sha256 = recorded(leaderboard)
    tampered = tmp_path / "host" / f"{sha256['cf']}.parquet"
    tampered.write_bytes(tampered.read_bytes() + b"x")
    (tmp_path / "host" / f"{sha256['mcf']}.parquet").unlink()
    with http_host(tmp_path / "host") as url:
        code, err = olmes("fetch-logprobs", "--store", str(leaderboard), "--host", url, "--model", "M1")
    assert code == 1
    lines = err.splitlines()
    wrong = [line for line in lines if "is not the file the store names" in line]
    assert len(wrong) == 1 and f"models/M1/logprobs/{TASK}.cf.parquet" in wrong[0] and url in wrong[0]
    lost = [line for line in lines if "could not be fetched" in line]
    assert sorted(f"{TASK}.{s}.parquet" in line for s in ("cf", "mcf") for line in lost).count(True) == 2
    assert lines[-1].endswith("0 present, 6 fetched, 2 missing")
    assert not blobs.blob_path(leaderboard, sha256["cf"]).exists()  # the bad download was discarded
    assert not [p for p in (leaderboard / blobs.BLOBS).iterdir() if p.name.startswith(".")]


def test_fetch_never_writes_through_a_linked_blobs_folder(results, tmp_path) -> None:
    """Issue 37, case 4: ``blobs`` committed as a link to a folder outside the store, with a host that
    has the files: refused in one line before any download, nothing written outside the store."""
    leaderboard = tmp_path / "store"
    assert publish(results, leaderboard)[0] == 0
    move_blobs_to_host(leaderboard, tmp_path / "host")
    outside = tmp_path / "outside"
    outside.mkdir()
    (leaderboard / blobs.BLOBS).symlink_to(outside)
    code, err = olmes("fetch-logprobs", "--store", str(leaderboard), "--host", str(tmp_path / "host"))
    assert code == 2 and err.count("\n") == 1, err
    assert "leads out of the store (a link to" in err and "remove the link" in err
    assert list(outside.iterdir()) == []


def test_the_stores_logprob_hosts_are_used_and_checked(results, tmp_path) -> None:
    leaderboard = tmp_path / "store"
    assert publish(results, leaderboard)[0] == 0
    move_blobs_to_host(leaderboard, tmp_path / "host")
    blobs.blob_path(leaderboard, recorded(leaderboard)["cf"]).parent.mkdir()
    blobs.blob_path(leaderboard, recorded(leaderboard)["cf"]).write_bytes(b"corrupt")
    marker = leaderboard / "store.json"
    hosts = [(tmp_path / "nothing").as_uri(), "../host"]  # a folder: relative to the store
    marker.write_text(json.dumps({"format": "olmes.store/1", "logprob_hosts": hosts}))
    code, err = olmes("fetch-logprobs", "--store", str(leaderboard))
    assert code == 0 and "is corrupt" in err and "0 present, 8 fetched, 0 missing" in err, err
    for bad in (["ftp://example.org/"], "https://example.org/", [""]):
        marker.write_text(json.dumps({"format": "olmes.store/1", "logprob_hosts": bad}))
        code, err = olmes("fetch-logprobs", "--store", str(leaderboard))
        assert code == 2 and err.count("\n") == 1 and ("logprob_hosts" in err or "log-prob host" in err), err


def test_a_store_with_external_blobs_merges_into_another(results, tmp_path) -> None:
    first, merged, kept = tmp_path / "first", tmp_path / "merged", tmp_path / "kept"
    assert publish(results, first)[0] == 0
    assert publish_from(first, merged)[0] == 0  # the standard results and the robustness ones
    assert publish_from(first, kept, "--logprobs", "in-store")[0] == 0
    assert sorted(p.name for p in (merged / blobs.BLOBS).iterdir()) == sorted(
        p.name for p in (first / blobs.BLOBS).iterdir()
    )
    for request_set, sha256 in recorded(first).items():
        expected = blobs.blob_path(first, sha256).read_bytes()
        assert blobs.model_logprob_file(merged, "M1", TASK, request_set).read_bytes() == expected
        assert (kept / "models/M1/logprobs" / f"{TASK}.{request_set}.parquet").read_bytes() == expected
    assert store.read_model_record(merged, "M1")["robustness"].keys() == {"var1", "rotations"}
    assert (kept / "models/M1/robustness/rotations" / f"{TASK}.mcf_rot.parquet").is_file()


def test_an_interrupted_publish_leaves_no_new_blobs(results, tmp_path, monkeypatch) -> None:
    leaderboard = tmp_path / "store"
    assert publish_from(results[0], leaderboard, "--logprobs", "in-store")[0] == 0
    before = files_of(leaderboard)
    original, written = publishing._copy, []

    def copy_then_stop(source, target):
        if target.parent.name == blobs.BLOBS:
            if len(written) == 2:
                raise KeyboardInterrupt
            written.append(target)
        original(source, target)

    monkeypatch.setattr(publishing, "_copy", copy_then_stop)
    with pytest.raises(KeyboardInterrupt):
        publishing.publish(results[0], leaderboard, allow_partial=True, replace=True)
    assert len(written) == 2 and all(not path.exists() for path in written)
    assert files_of(leaderboard) == before and not list((leaderboard / blobs.BLOBS).iterdir())


def files_of(root: Path) -> dict[str, bytes]:
    """A store's files and their bytes (but .gitignore, which lists blobs/ once they are used)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and p.name != ".gitignore"
    }
