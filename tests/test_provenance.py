"""Issue 37, the reproduced badge: a maintainer's reproduction record in the store (olmes reproduce
--record), checked by olmes verify by making its comparison again from the log-probs it keeps and the
store's; stale once the model is replaced; refused in a pull request (tests/test_faults_submission.py).
The recomputation here is the store's own log-probs moved within float error (no model runs); the
committed store's records, made from the embedded models' weights, are checked in tests/test_store.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from olmes.core.records import REPRODUCTION_FORMAT
from olmes.store import provenance
from olmes.store.layout import LOGPROBS, logprob_name, reproduction_folder, reproduction_record_path
from olmes.store.publish import publish
from olmes.store.reading import model_infos
from olmes.store.reproduce import fit_problem, record_reproduction
from olmes.store.verify import verify_store
from tests.helpers import SETS, TASK, make_results

MODEL = "M1"
LIMIT = 5


def reproduce_within_error(root: Path, workdir: Path, nudge: float = 1e-6) -> dict:
    """A reproduction report of ``MODEL`` as ``olmes reproduce`` writes it, its recomputed log-probs
    (the store's first LIMIT instances, each sum moved by ``nudge`` nats) in ``workdir``."""
    mine, theirs = {}, {}
    for request_set in SETS:
        theirs[request_set] = provenance.store_subset(root, MODEL, TASK, request_set, LIMIT, workdir)
        frame = pd.read_parquet(theirs[request_set])
        frame["sum_logprob"] = frame["sum_logprob"] - nudge
        mine[request_set] = workdir / LOGPROBS / logprob_name(TASK, request_set)
        mine[request_set].parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(mine[request_set], index=False)
    task = provenance.compare_task(TASK, LIMIT, mine, theirs)
    return {
        "format": REPRODUCTION_FORMAT.tag,
        "model": MODEL,
        "spec": "M1",
        "limit": LIMIT,
        "hardware": "a maintainer's machine",
        "store_hardware": ["AMD EPYC (2 CPUs)"],
        "same_fingerprint": True,
        "wall_time_s": 1.0,
        **provenance.totals([task]),
        "tasks": [task],
        "date": "2026-12-03T10:00:00Z",
        "olmes_commit": "0" * 40,
        "identity": {
            "original": "unknown",
            "tuning": "unknown",
            "weight_format": "safetensors",
            "quantization": "none",
            "compute_dtype": "float32",
            "evidence": "config.json",
        },  # fmt: skip
        "store_files": {TASK: provenance.store_sha256(root, MODEL, TASK)},
    }


@pytest.fixture
def recorded(built, tmp_path) -> Path:
    """A copy of the test store with a reproduction record of M1."""
    root = tmp_path / "leaderboard"
    shutil.copytree(built, root)
    report = reproduce_within_error(root, tmp_path / "work")
    record_reproduction(root, report, tmp_path / "work")
    return root


def lines(root: Path) -> tuple[list[str], list[str]]:
    found = verify_store(root)
    return [f"{p.path.name}: {p.what}" for p in found.problems], found.notes


def test_a_record_is_verified_and_earns_the_badge(recorded) -> None:
    assert lines(recorded) == ([], [])
    assert sorted(p.name for p in reproduction_folder(recorded, MODEL).iterdir()) == sorted(
        ["reproduction.json", *(logprob_name(TASK, s) for s in SETS)]
    )
    (info,) = model_infos(recorded)
    assert info.provenance == "reproduced"


def test_without_a_record_a_model_is_submitted(built) -> None:
    (info,) = model_infos(built)
    assert info.provenance == "submitted"


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def test_an_edited_record_is_caught(recorded) -> None:
    _edit(reproduction_record_path(recorded, MODEL), lambda r: r["tasks"][0].update(max_abs_delta=0.0))
    problems, _ = lines(recorded)
    assert len(problems) == 1 and problems[0].startswith(
        f"reproduction.json: {TASK}: max_abs_delta is 0.0, its files give 1.0000"
    ), problems


def test_an_edited_verdict_is_caught(recorded) -> None:
    _edit(
        reproduction_record_path(recorded, MODEL),
        lambda r: r.update(verdict="reproduced", unexplained_flips=0),
    )
    path = reproduction_folder(recorded, MODEL) / logprob_name(TASK, "mcf")
    frame = pd.read_parquet(path)
    frame.loc[frame["instance_index"] == 0, "sum_logprob"] = np.linspace(
        -1, -9, (frame["instance_index"] == 0).sum()
    )
    frame.to_parquet(path, index=False)
    problems, _ = lines(recorded)
    assert problems and all(line.startswith(f"reproduction.json: {TASK}: ") for line in problems), problems


def test_a_replaced_model_makes_its_record_stale(recorded, tmp_path) -> None:
    other = make_results(tmp_path / "other", MODEL, seed=5)
    publish(other, recorded, replace=True, logprobs="in-store")
    problems, notes = lines(recorded)
    assert problems == [] and any("stale, the model's log-prob files changed" in note for note in notes)
    (info,) = model_infos(recorded)
    assert info.provenance == "submitted"


def test_files_of_no_record_are_caught(recorded) -> None:
    (reproduction_folder(recorded, MODEL) / "notes.html").write_text("<script>x</script>")
    (reproduction_folder(recorded, "M9")).mkdir()
    problems, _ = lines(recorded)
    assert sorted(problems) == [
        "M9: not a folder of a results store (its format has no place for it); remove it",
        "notes.html: not a file of a results store (its format has no place for it); remove it",
    ], problems


def test_the_identity_a_reproduction_read_confirms_the_model_records(recorded) -> None:
    """Results whose run records carry no identity: model.json's is confirmed only by a reproduction
    (and may be left out: results of an olmes that recorded none)."""
    record = json.loads(reproduction_record_path(recorded, MODEL).read_text())
    model_json = recorded / "models" / MODEL / "model.json"
    _edit(model_json, lambda r: r.update(identity=record["identity"]))
    assert lines(recorded)[0] == []
    _edit(model_json, lambda r: r["identity"].update(weight_format="gguf", quantization="Q4_1"))
    problems, _ = lines(recorded)
    assert any("identity is {" in line and "its reproduction read" in line for line in problems), problems
    # left out, the identity read still decides what the display name must say
    _edit(model_json, lambda r: r.pop("identity"))
    _edit(
        reproduction_record_path(recorded, MODEL),
        lambda r: r["identity"].update(weight_format="gguf", quantization="Q4_1"),
    )
    problems, _ = lines(recorded)
    assert problems == [
        "model.json: display name 'M1' does not say Q4_1 GGUF; set its display_name to "
        "'M1 Q4_1 GGUF' in the config (or the models file)"
    ], problems


def test_a_model_that_does_not_fit_is_said_not_reproduced(monkeypatch) -> None:
    """The submission check's runner holds 3 GB of weights: a hub model is sized from the hub's
    listing (at the store's commit) before any download; a local one's weights are not public."""
    assert "not public" in fit_problem("step-1000", "sha256:abc", 3 * 10**9)
    assert fit_problem("smollm2-135m", "gguf-sha256:abc", 3 * 10**9) is None
    asked = []

    class Sibling:
        def __init__(self, name: str, size: int) -> None:
            self.rfilename, self.size = name, size

    class Api:
        def model_info(self, repo_id, revision, files_metadata):
            asked.append((repo_id, revision, files_metadata))
            return type(
                "Info", (), {"siblings": [Sibling("model.safetensors", 4 * 10**9), Sibling("a.json", 9)]}
            )

    monkeypatch.setattr("huggingface_hub.HfApi", Api)
    problem = fit_problem("org/big", "hub:org/big@0123abc", 3 * 10**9)
    assert problem == "its weights are 4.0 GB, more than the 3.0 GB this machine holds"
    assert asked == [("org/big", "0123abc", True)]
    assert fit_problem("org/big", "hub:org/big@0123abc", 5 * 10**9) is None


def test_the_site_shows_each_models_level(recorded, built, tmp_path) -> None:
    """The leaderboard row and the model page say reproduced for a recorded model, submitted otherwise."""
    from tests.helpers import olmes

    for root, level in ((recorded, "reproduced"), (built, "submitted")):
        site, tables = tmp_path / f"site-{level}", tmp_path / f"tables-{level}"
        code, err = olmes("tables", "--store", str(root), "--out", str(tables), "--resamples", "20")
        assert code == 0, err
        code, err = olmes("site", "--store", str(root), "--tables", str(tables), "--out", str(site))
        assert code == 0, err
        index = (site / "index.html").read_text()
        assert index.count(f'class="badge badge-{level}"') == 1, level
        page = (site / "models" / f"{MODEL}.html").read_text()
        assert f'class="badge badge-{level}"' in page and f"{level.capitalize()}:" in page
