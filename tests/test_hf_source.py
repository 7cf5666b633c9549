"""The ``hf`` source, exercised offline on local copies laid out like the hub's dataset repos.

Each copy is ``<root>/<owner>/<name>/`` with parquet files and a README whose YAML ``configs``
maps config names and splits to files, as on the hub; ``datasets.load_dataset`` reads it through
the same call that reads the hub (``OLMES_HF_DATASETS_DIR`` only swaps the hub id for the path).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from olmes.core.errors import OlmesError
from olmes.requests.build import build_requests
from olmes.requests.data import load_instances, raw_rows
from olmes.requests.tasks import TEMPLATES, get_template

MIRRORED_TASKS = ["arc_challenge", "arc_easy", "boolq", "csqa", "hellaswag", "openbookqa", "piqa",
                  "socialiqa", "winogrande"]  # fmt: skip
MMLU_SUBJECTS = ("abstract_algebra", "anatomy")


def _write_split(repo: Path, config: str | None, split: str, rows: list[dict]) -> dict:
    folder = config or "data"
    (repo / folder).mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), repo / folder / f"{split}-00000-of-00001.parquet")
    return {"split": split, "path": f"{folder}/{split}-*"}


def _write_readme(repo: Path, configs: dict[str, list[dict]]) -> None:
    lines = ["---", "configs:"]
    for name, files in configs.items():
        lines += [f"- config_name: {name}", "  data_files:"]
        lines += [f"  - split: {f['split']}\n    path: {f['path']}" for f in files]
    (repo / "README.md").write_text("\n".join(lines + ["---", ""]), encoding="utf-8")


def _mirror_configs(root: Path, task_key: str) -> dict[str, list[dict]]:
    """Write the task's splits under its repo; return its configs for the repo's README."""
    task = get_template(task_key)
    repo = root / task.hf_path
    configs = {}
    for subject in task.subjects[: len(MMLU_SUBJECTS)] or [None]:
        config = subject or task.hf_name
        splits = [task.split] + ([task.fewshot_split] if task.fewshot_split else [])
        configs[config or "default"] = [
            _write_split(repo, config, split, raw_rows(task, "bundle", split, subject)) for split in splits
        ]
    return configs


@pytest.fixture(scope="module")
def hub_mirror(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hub")
    repos: dict[str, dict[str, list[dict]]] = {}
    for task_key in MIRRORED_TASKS + ["mmlu"]:  # ARC-Challenge and ARC-Easy share one repo
        repos.setdefault(get_template(task_key).hf_path, {}).update(_mirror_configs(root, task_key))
    for hf_path, configs in repos.items():
        _write_readme(root / hf_path, configs)
    return root


@pytest.fixture
def hf_offline(monkeypatch, hub_mirror, tmp_path) -> Path:
    monkeypatch.setenv("OLMES_HF_DATASETS_DIR", str(hub_mirror))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "datasets-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return hub_mirror


@pytest.mark.parametrize("task_key", MIRRORED_TASKS)
def test_hf_source_gives_the_bundle_instances(hf_offline, task_key: str) -> None:
    task = TEMPLATES[task_key]
    assert load_instances(task, "hf") == load_instances(task, "bundle")


def test_hf_source_mmlu_subjects_and_dev_shots(hf_offline) -> None:
    limit = 100 + 135  # the two mirrored subjects
    for formulation in ("cf", "mcf"):
        assert build_requests("mmlu", formulation, limit, "hf") == build_requests(
            "mmlu", formulation, limit, "bundle"
        )


def test_hf_requests_equal_bundle_requests(hf_offline) -> None:
    assert build_requests("winogrande", "cf", 50, "hf") == build_requests("winogrande", "cf", 50, "bundle")


def test_missing_hf_dataset_names_it_and_the_source(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("OLMES_HF_DATASETS_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OlmesError) as error:
        load_instances(get_template("piqa"), "hf")
    message = str(error.value)
    assert "ybisk/piqa" in message and "'hf'" in message and "\n" not in message


def test_unknown_source_is_an_error() -> None:
    with pytest.raises(OlmesError, match="unknown data source 'hub'"):
        load_instances(get_template("piqa"), "hub")
