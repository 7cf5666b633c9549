"""Portable provenance: the store names no folder of the machine that published into it, so the same
results published from two folders (and two cache folders) give the same store, byte for byte."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from olmes import store
from olmes.cli.main import main
from olmes.core.errors import OlmesError
from olmes.store.publish import publish
from tests.helpers import TASK, make_results, make_robustness, snapshot

REPO = Path(__file__).resolve().parent.parent
ABSOLUTE = re.compile(r'"/(tmp|root|home|work)')  # a JSON string that starts with a machine's folder
EPOCH = "1767225600"  # 2026-01-01T00:00:00Z


def publish_from(place: Path, layout: str, monkeypatch) -> Path:
    """Results made in ``place`` (standard and robustness), published into ``place``/store."""
    monkeypatch.setenv("OLMES_CACHE_DIR", str(place / "cache"))
    target = place / "store"
    publish(make_results(place / "results", "M1"), target, logprobs=layout)
    publish(make_robustness(place / "robustness", "M1"), target, logprobs=layout, robustness_only=True)
    return target


@pytest.mark.parametrize("layout", ["external", "in-store"])
def test_two_folders_publish_the_same_store_bytes(tmp_path, monkeypatch, layout) -> None:
    # SOURCE_DATE_EPOCH pins the one field that is the time of publishing (model.json's "published");
    # every other byte of the two stores is compared as it is
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    first = publish_from(tmp_path / "one", layout, monkeypatch)
    second = publish_from(tmp_path / "elsewhere" / "two", layout, monkeypatch)
    # the results themselves name their folders: the test would fail if publish copied them as they are
    summary = f"results/scores/M1/{TASK}.scores.json"
    assert (tmp_path / "one" / summary).read_bytes() != (tmp_path / "elsewhere/two" / summary).read_bytes()
    one, two = snapshot(first), snapshot(second)
    assert sorted(one) == sorted(two) and len(one) > 10
    assert [name for name in one if one[name] != two[name]] == []
    text = "\n".join(data.decode("utf-8") for name, data in one.items() if name.endswith(".json"))
    assert str(tmp_path) not in text and not ABSOLUTE.search(text) and "model_path" not in text


def test_a_local_model_is_named_without_its_folder(tmp_path, monkeypatch) -> None:
    """A model run from a local folder: its absolute path (the spec in every run record) is not in the
    store; the folder's name is, and two machines' folders give the same bytes."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    stores = []
    for place in (tmp_path / "one", tmp_path / "elsewhere" / "two"):
        monkeypatch.setenv("OLMES_CACHE_DIR", str(place / "cache"))
        results = make_results(place / "results", "M1")
        for path in results.glob("logprobs/M1/*.run.json"):
            record = json.loads(path.read_text())
            path.write_text(json.dumps({**record, "model": str(place / "weights" / "my-ckpt")}))
        for path in results.glob("scores/M1/*.scores.json"):  # the summaries embed the run records
            summary = json.loads(path.read_text())
            for entry in summary["inputs"].values():
                entry["run"]["model"] = str(place / "weights" / "my-ckpt")
            path.write_text(json.dumps(summary))
        stores.append(place / "store")
        publish(results, stores[-1], logprobs="in-store")
    one, two = snapshot(stores[0]), snapshot(stores[1])
    assert one == two
    text = "\n".join(data.decode("utf-8") for name, data in one.items() if name.endswith(".json"))
    assert str(tmp_path) not in text and '"spec": "my-ckpt"' in text and '"model": "my-ckpt"' in text


def test_the_store_names_its_logprobs_where_it_keeps_them(tmp_path, monkeypatch) -> None:
    target = publish_from(tmp_path, "in-store", monkeypatch)
    folder = target / "models" / "M1"
    summary = json.loads((folder / "scores" / f"{TASK}.scores.json").read_text())
    assert {s: e["path"] for s, e in summary["inputs"].items()} == {
        s: f"logprobs/{TASK}.{s}.parquet" for s in ("cf", "pmi", "mcf")
    }
    for request_set, entry in summary["inputs"].items():
        assert (folder / entry["path"]).is_file()
        assert entry["run"]["requests_file"] == f"{TASK}.{request_set}.jsonl"
        beside = json.loads((folder / f"{entry['path']}.run.json").read_text())
        assert beside == entry["run"]  # the run record beside the file and the one in the summary agree
    report = json.loads((folder / "robustness/rotations" / f"{TASK}.rotations.json").read_text())
    assert report["inputs"]["mcf_rot"]["path"] == f"robustness/rotations/{TASK}.mcf_rot.parquet"
    variant = json.loads((folder / "robustness/var1" / f"{TASK}.scores.json").read_text())
    assert variant["inputs"]["cf"]["path"] == f"robustness/var1/{TASK}.cf.parquet"


def test_published_is_source_date_epoch_when_set(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    target = tmp_path / "store"
    publish(make_results(tmp_path / "results", "M1"), target)
    assert store.read_model_record(target, "M1")["tasks"][TASK]["published"] == "2026-01-01T00:00:00Z"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(OlmesError, match="SOURCE_DATE_EPOCH='yesterday' is not a whole number"):
        publish(make_results(tmp_path / "again", "M2"), target)


def test_upgrade_makes_an_old_store_portable_and_changes_nothing_else(tmp_path, monkeypatch) -> None:
    """A store as publish wrote it before (the results' files copied as they are) comes out as publish
    writes it now; a second run changes nothing."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    target = publish_from(tmp_path / "new", "external", monkeypatch)
    results, robustness = tmp_path / "new/results", tmp_path / "new/robustness"
    old = tmp_path / "old"
    _copy_tree(target, old)
    model = old / "models/M1"
    for name in (f"{TASK}.scores.json", *(f"{TASK}.{s}.parquet.run.json" for s in ("cf", "pmi", "mcf"))):
        kind = "scores" if name.endswith("scores.json") else "logprobs"
        (model / kind / name).write_bytes((results / kind / "M1" / name).read_bytes())
    rotations = f"{TASK}.rotations.json"
    (model / "robustness/rotations" / rotations).write_bytes(
        (robustness / "scores/M1" / rotations).read_bytes()
    )
    assert ABSOLUTE.search((model / "scores" / f"{TASK}.scores.json").read_text())
    assert _migrate(old) == 0
    assert snapshot(old) == snapshot(target)
    assert _migrate(old) == 0 and snapshot(old) == snapshot(target)


def _copy_tree(source: Path, target: Path) -> None:
    for name, data in snapshot(source).items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(data)


def _migrate(root: Path) -> int:
    return main(["upgrade", str(root)])
