"""Faults and bad input at the command line (issue 29, cases 2, 7, 10, 11 and 13): each ends in one
``olmes: error:`` line (exit status 2) with nothing lost, never in a traceback or a silently destroyed
input. OS faults are injected (the tests run as root, for whom chmod does not make a folder read-only).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from olmes.cli.main import main
from olmes.core.outputs import CommandFiles, check_own_folder, os_error_line
from olmes.core.records import STORE_FORMAT
from tests.helpers import instance_rows, mcf_rows, rotation_frames, write


def _error(capsys) -> str:
    """The command's error, checked to be one ``olmes: error:`` line at the end of its stderr (after
    what the command said before, such as verify's verdict), with no traceback."""
    err = capsys.readouterr().err.strip()
    lines = err.splitlines()
    assert lines and lines[-1].startswith("olmes: error: "), err
    assert "Traceback" not in err and sum(line.startswith("olmes: error:") for line in lines) == 1, err
    return lines[-1]


@pytest.fixture
def scored(tmp_path, capsys):
    """An MCF log-prob file of ARC-Easy, its predictions and score summary (olmes score)."""
    labels = [k % 4 for k in range(12)]
    mcf = write(tmp_path, "mcf.parquet", mcf_rows("arc_easy", labels, labels))
    out = tmp_path / "scores"
    argv = ["score", "--model-name", "m", "--mcf", str(mcf)]
    argv += ["--predictions", str(out / "p.parquet"), "--summary", str(out / "arc_easy.scores.json")]
    assert main(argv) == 0
    capsys.readouterr()
    return {"mcf": mcf, "scores": out, "summary": out / "arc_easy.scores.json"}


@pytest.fixture(scope="module")
def request_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("requests") / "arc_easy.cf.jsonl"
    assert main(["requests", "arc_easy", "--request-set", "cf", "--limit", "2", "--output", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    from tests.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def _logprobs(model, requests, output, cache, *extra) -> list[str]:
    argv = ["logprobs", "--model", str(model), "--requests", str(requests), "--output", str(output)]
    return [*argv, "--cache-dir", str(cache), "--quiet", *extra]


# -- case 2: an output equal to an input, or to another output ----------------------------------------


SAME_FILE_CASES = [
    "logprobs-output-is-requests",
    "logprobs-output-links-to-requests",
    "logprobs-two-outputs-one-path",
    "score-predictions-is-mcf",
    "score-predictions-is-summary",
    "predict-output-is-mcf",
    "rotations-output-is-rotations",
    "requests-output-is-instances",
    "check-model-output-in-model",
]


def _same_file_case(case, tmp_path, scored, request_file, tiny):
    """(argv, the input that must survive, what the line says) of one command that writes files."""
    requests = tmp_path / "r.jsonl"
    shutil.copy(request_file, requests)
    mcf, summary = scored["mcf"], scored["summary"]
    link = tmp_path / "link.jsonl"
    link.symlink_to(requests)
    model = tmp_path / "model"
    shutil.copytree(tiny, model)
    logprobs = ["logprobs", "--model", str(model), "--cache-dir", str(tmp_path / "cache"), "--quiet"]
    mcf_rows_, rot_rows = rotation_frames([0, 1, 2], [4, 4, 4], lambda gold, k: gold)
    write(tmp_path, "mcf0.parquet", mcf_rows_)
    rotations = write(tmp_path, "rot.parquet", rot_rows)
    return {
        "logprobs-output-is-requests": (
            [*logprobs, "--requests", str(requests), "--output", str(requests)],
            requests, "is the same file as --requests"),
        "logprobs-output-links-to-requests": (  # a link to the input is the same file
            [*logprobs, "--requests", str(requests), "--output", str(link)],
            requests, "is the same file as --requests"),
        "logprobs-two-outputs-one-path": (
            [*logprobs, "--requests", str(requests), "--output", str(tmp_path / "o"),
             "--requests", str(request_file), "--output", str(tmp_path / "o")],
            tmp_path / "o", "are the same file"),
        "score-predictions-is-mcf": (
            ["score", "--model-name", "m", "--mcf", str(mcf), "--predictions", str(mcf),
             "--summary", str(tmp_path / "s.json")],
            mcf, "is the same file as --mcf"),
        "score-predictions-is-summary": (
            ["score", "--model-name", "m", "--mcf", str(mcf), "--predictions", str(summary),
             "--summary", str(summary)],
            summary, "are the same file"),
        "predict-output-is-mcf": (
            ["predict", "--model-name", "m", "--method", "mcf", "--mcf", str(mcf), "--output", str(mcf)],
            mcf, "is the same file as --mcf"),
        "rotations-output-is-rotations": (
            ["rotations", "--model-name", "m", "--mcf", str(tmp_path / "mcf0.parquet"), "--rotations",
             str(rotations), "--output", str(rotations)],
            rotations, "is the same file as --rotations"),
        "requests-output-is-instances": (
            ["requests", "arc_easy", "--limit", "2", "--request-set", "cf", "--output", str(requests),
             "--instances", str(requests)],
            requests, "are the same file"),
        "check-model-output-in-model": (
            ["check-model", str(model), "--output", str(model / "config.json")],
            model / "config.json", "which this command only reads"),
    }[case]  # fmt: skip


@pytest.mark.parametrize("case", SAME_FILE_CASES)
def test_an_output_never_destroys_an_input_or_another_output(
    case, tmp_path, scored, request_file, tiny, capsys
):
    argv, kept, said = _same_file_case(case, tmp_path, scored, request_file, tiny)
    before = kept.read_bytes() if kept.exists() else None
    assert main(argv) == 2
    assert said in _error(capsys)
    assert (kept.read_bytes() if kept.exists() else None) == before


def test_the_site_keeps_its_inputs_out_of_the_folder_it_replaces(tmp_path, scored, capsys):
    site = tmp_path / "site"
    site.mkdir()
    (site / ".olmes-site").write_text("built by olmes\n")
    inside = site / "scores"
    shutil.copytree(scored["scores"], inside)
    assert main(["site", "--scores", str(inside), "--out", str(site)]) == 2
    assert "which this command rewrites" in _error(capsys)
    assert (inside / "arc_easy.scores.json").is_file()


def _store(tmp_path) -> Path:
    store = tmp_path / "store"
    store.mkdir()
    (store / "store.json").write_text(json.dumps({"format": STORE_FORMAT.tag}))
    return store


def test_verify_writes_no_report_into_the_store_it_checks(tmp_path, capsys):
    store = _store(tmp_path)
    assert main(["verify", str(store), "--summary", str(store / "report.md")]) == 2
    assert "which this command only reads" in _error(capsys)
    assert not (store / "report.md").exists()


def test_publish_refuses_a_store_into_itself(tmp_path, capsys):
    store = _store(tmp_path)
    assert main(["publish", "--from", str(store), "--store", str(store)]) == 2
    assert "are the same folder" in _error(capsys)


def test_an_output_that_is_a_folder_is_one_line(tmp_path, capsys):
    assert main(["requests", "arc_easy", "--limit", "2", "--instances", str(tmp_path)]) == 2
    assert "is a folder; give the path of a file to write" in _error(capsys)


# -- case 7: log-probs that are not log-probabilities ------------------------------------------------


def _cf_file(tmp_path, sums_of):
    rows = []
    for index in range(5):
        rows += instance_rows("boolq", "cf", index, [" yes", " no"], sums_of(index), index % 2)
    return write(tmp_path, "cf.parquet", rows)


@pytest.mark.parametrize(
    ("value", "said"),
    [(5.0, "sum_logprob 5.0"), (float("nan"), "sum_logprob nan"), (float("-inf"), "sum_logprob -inf")],
)
def test_score_refuses_log_probs_that_are_not_log_probabilities(tmp_path, capsys, value, said):
    cf = _cf_file(tmp_path, lambda index: [-1.0, value if index == 2 else -2.0])
    summary = tmp_path / "s.scores.json"
    argv = ["score", "--model-name", "m", "--cf", str(cf), "--predictions", str(tmp_path / "p.parquet")]
    assert main([*argv, "--summary", str(summary)]) == 2
    line = _error(capsys)
    assert f"{cf}: instance 2 (native_id id-2), choice 1 has {said}" in line
    assert "re-run olmes logprobs" in line
    assert not summary.exists()
    predict = ["predict", "--model-name", "m", "--method", "cf_none", "--cf", str(cf)]
    assert main([*predict, "--output", str(tmp_path / "p.parquet")]) == 2
    assert said in _error(capsys)


def test_every_cf_log_prob_nan_is_no_score(tmp_path, capsys):
    """Before: 50% on every CF method (choice 0 always wins)."""
    cf = _cf_file(tmp_path, lambda index: [float("nan")] * 2)
    argv = ["score", "--model-name", "m", "--cf", str(cf), "--predictions", str(tmp_path / "p.parquet")]
    assert main([*argv, "--summary", str(tmp_path / "s.scores.json")]) == 2
    assert "(10 of 10 rows bad), not a finite number" in _error(capsys)


def test_a_rounding_above_zero_is_accepted(tmp_path, capsys):
    cf = _cf_file(tmp_path, lambda index: [5e-7, -2.0])
    argv = ["score", "--model-name", "m", "--cf", str(cf), "--predictions", str(tmp_path / "p.parquet")]
    assert main([*argv, "--summary", str(tmp_path / "s.scores.json")]) == 0


# -- case 10: a full disk, a read-only or forbidden folder ---------------------------------------------


def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")  # as a write() says it: no file name


WRITING = ["requests", "score", "predict", "rotations", "tables", "site", "verify"]


def _writing(command, tmp_path, scored):
    """A command run that writes under ``tmp_path / "out"``."""
    out = tmp_path / "out"
    mcf = str(scored["mcf"])
    mcf0, rotations = rotation_frames([0, 1, 2], [4, 4, 4], lambda gold, k: gold)
    if command == "site":  # the tables it shows, made first (outside what it writes)
        tables = ["tables", "--scores", str(scored["scores"]), "--out", str(tmp_path / "tables")]
        assert main([*tables, "--resamples", "10"]) == 0
    return {
        "requests": ["requests", "arc_easy", "--limit", "2", "--instances", str(out / "i.jsonl")],
        "score": ["score", "--model-name", "m", "--mcf", mcf, "--predictions", str(out / "p.parquet"),
                  "--summary", str(out / "s.scores.json")],
        "predict": ["predict", "--model-name", "m", "--method", "mcf", "--mcf", mcf,
                    "--output", str(out / "p.parquet")],
        "rotations": ["rotations", "--model-name", "m", "--mcf", str(write(tmp_path, "m0.parquet", mcf0)),
                      "--rotations", str(write(tmp_path, "rot.parquet", rotations)),
                      "--output", str(out / "r.rotations.json")],
        "tables": ["tables", "--scores", str(scored["scores"]), "--out", str(out / "tables"),
                   "--resamples", "10"],
        "site": ["site", "--scores", str(scored["scores"]), "--tables", str(tmp_path / "tables"),
                 "--out", str(out / "site")],
        "verify": ["verify", str(_store(tmp_path)), "--summary", str(out / "report.md")],
    }[command]  # fmt: skip


@pytest.mark.parametrize("command", WRITING)
def test_a_full_disk_is_one_line_naming_the_outputs(command, tmp_path, scored, capsys, monkeypatch):
    argv = _writing(command, tmp_path, scored)
    monkeypatch.setattr(os, "replace", _no_space)  # every atomic write ends in os.replace
    assert main(argv) == 2
    line = _error(capsys)
    assert "no space left on the device: free some space or write to another disk" in line
    assert f"while writing {tmp_path / 'out'}" in line


@pytest.mark.parametrize("command", WRITING)
@pytest.mark.parametrize(
    ("number", "said"),
    [(errno.EROFS, "read-only file system"), (errno.EACCES, "permission denied")],
)
def test_a_read_only_or_forbidden_folder_is_one_line(
    command, number, said, tmp_path, scored, capsys, monkeypatch
):
    argv = _writing(command, tmp_path, scored)
    original = tempfile.mkstemp

    def refused(*args, dir=None, **kwargs):  # noqa: A002 (tempfile's own name)
        if dir is not None and str(tmp_path / "out") in str(dir):
            raise OSError(number, os.strerror(number), str(dir))
        return original(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    monkeypatch.setattr(tempfile, "mkdtemp", refused)  # the site's staging folder
    assert main(argv) == 2
    line = _error(capsys)
    assert f"{tmp_path / 'out'}" in line and said in line


def test_logprobs_finds_an_unwritable_output_before_loading_the_model(
    tmp_path, request_file, capsys, monkeypatch
):
    from olmes.logprobs import models

    def no_load(*args, **kwargs):
        raise AssertionError("the model must not be prepared")

    monkeypatch.setattr(models, "prepare", no_load)
    original = tempfile.NamedTemporaryFile
    read_only = tmp_path / "ro"

    def probe(*args, dir=None, **kwargs):  # noqa: A002
        if dir is not None and Path(dir) == read_only:
            raise OSError(errno.EROFS, "Read-only file system", str(Path(dir) / ".olmes-probe-x"))
        return original(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", probe)
    argv = _logprobs("some/model", request_file, read_only / "o.parquet", tmp_path / "cache")
    assert main(argv) == 2
    assert "read-only file system: write to a folder on a writable disk" in _error(capsys)


def test_os_error_lines():
    arrow = OSError("Error writing bytes to file. Detail: [errno 28] No space left on device")
    assert os_error_line(arrow, [Path("x.parquet")]) == (
        "while writing x.parquet: no space left on the device: free some space or write to another disk"
    )
    assert os_error_line(OSError(errno.EIO, "I/O error")) is None  # not ours: the traceback
    assert os_error_line(OSError(errno.EDQUOT, "Disk quota exceeded", "a", None, "b")).startswith(
        "a -> b: disk quota"
    )


def test_an_unknown_os_error_keeps_its_traceback(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="Input/output error"):
        main(["requests", "arc_easy", "--limit", "1", "--instances", str(tmp_path / "i.jsonl")])


def test_the_checks_write_nothing_unless_probing(tmp_path):
    CommandFiles(writes=[("--output", tmp_path / "new" / "x.json")]).check()
    assert not (tmp_path / "new").exists()
    CommandFiles(writes=[("--output", tmp_path / "new" / "x.json")], probe=True).check()
    assert list((tmp_path / "new").iterdir()) == []  # the folder made, the probe file gone


# -- case 11: damaged models, a missing device, a binary request file ----------------------------------


def test_a_truncated_safetensors_file_is_one_line(tmp_path, tiny, request_file, capsys):
    damaged = tmp_path / "truncated"
    shutil.copytree(tiny, damaged)
    weights = damaged / "model.safetensors"
    size = weights.stat().st_size
    os.truncate(weights, size // 2)
    argv = _logprobs(damaged, request_file, tmp_path / "o.parquet", tmp_path / "cache")
    assert main(argv) == 2
    line = _error(capsys)
    assert f"model file {weights} is truncated: {size // 2} bytes, its header says {size}" in line
    assert "download or copy it again" in line
    weights.write_bytes(b"\xff" * 64)  # a header length past the end of the file
    assert main(argv) == 2
    assert "its safetensors header cannot be read" in _error(capsys)
    assert not (tmp_path / "o.parquet").exists()


def test_a_damaged_gguf_file_is_one_line_with_what_to_do(tmp_path, request_file, capsys):
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + bytes(range(256)) * 8)  # the magic number, then garbage
    argv = _logprobs(gguf, request_file, tmp_path / "o.parquet", tmp_path / "cache")
    assert main(argv) == 2
    line = _error(capsys)
    assert f"cannot load GGUF file {gguf} (2052 bytes)" in line
    assert "if the file is truncated or damaged (an interrupted download), download it again" in line


def test_a_device_that_is_not_here_is_one_line(tmp_path, tiny, request_file, capsys, monkeypatch):
    import torch

    argv = _logprobs(tiny, request_file, tmp_path / "o.parquet", tmp_path / "cache")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    assert main([*argv, "--device", "cuda"]) == 2
    line = _error(capsys)
    assert "--device cuda: " in line and "use --device cpu, or run on a machine with a GPU" in line
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert main([*argv, "--device", "cuda:3"]) == 2
    assert "this machine has 1 CUDA GPU(s), cuda:0 to cuda:0" in _error(capsys)
    assert main([*argv, "--device", "gpu"]) == 2
    assert "bad --device 'gpu'" in _error(capsys)
    assert not (tmp_path / "o.parquet").exists()


def test_a_binary_request_file_is_one_line(tmp_path, tiny, capsys):
    binary = tmp_path / "requests.jsonl"
    binary.write_bytes(bytes(range(256)) * 16)
    argv = _logprobs(tiny, binary, tmp_path / "o.parquet", tmp_path / "cache")
    assert main(argv) == 2
    line = _error(capsys)
    assert f"{binary}: not UTF-8 text" in line and "give a file written by olmes requests" in line


# -- case 13: tables into a folder of other files; an empty store ---------------------------------------


def test_tables_never_write_into_a_folder_of_other_files(tmp_path, scored, capsys):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "leaderboard.csv").write_text("my own numbers\n")
    argv = ["tables", "--scores", str(scored["scores"]), "--resamples", "10", "--out"]
    assert main([*argv, str(foreign)]) == 2
    assert _error(capsys) == (
        f"olmes: error: {foreign} exists and is not an olmes tables folder (no .olmes-tables); "
        "choose an empty or new folder"
    )
    assert (foreign / "leaderboard.csv").read_text() == "my own numbers\n"
    tables = tmp_path / "tables"
    assert main([*argv, str(tables)]) == 0
    assert (tables / ".olmes-tables").is_file()
    (tables / "index.json").unlink()  # as the workflow does before it runs the rule again
    assert main([*argv, str(tables)]) == 0


def test_tables_and_site_share_the_folder_rule(tmp_path):
    """The same function, with each command's marker (the site's: olmes/site/build.py)."""
    folder = tmp_path / "f"
    folder.mkdir()
    check_own_folder(folder, (".x",), "a thing")  # empty: fine
    (folder / "a").write_text("a")
    with pytest.raises(Exception, match="exists and is not a thing"):
        check_own_folder(folder, (".x",), "a thing")
    (folder / ".x").write_text("")
    check_own_folder(folder, (".x",), "a thing")


@pytest.mark.parametrize("command", ["tables", "site"])
def test_an_empty_store_says_publish_first(tmp_path, capsys, command):
    store = tmp_path / "store"
    store.mkdir()
    (store / "store.json").write_text(json.dumps({"format": STORE_FORMAT.tag}))
    assert main([command, "--store", str(store), "--out", str(tmp_path / "out")]) == 2
    line = _error(capsys)
    assert f"results store {store} has no published results yet" in line
    assert "olmes publish" in line and "--scores" not in line and ".scores.json" not in line
