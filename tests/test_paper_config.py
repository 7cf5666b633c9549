"""config/paper.yaml (the paper's models on the hub) and how the Snakefile layers a --configfile."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from olmes.cli.config import validate_config
from olmes.tables.reported import PAPER_MODELS, paper_table
from tests.helpers import workflow_environment, write_workflow_config
from tests.tiny_model import build_tiny_model

pytestmark = pytest.mark.slow  # snakemake dry runs of the paper's configs

REPO = Path(__file__).resolve().parent.parent
PAPER_CONFIG = REPO / "config" / "paper.yaml"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(@[0-9a-f]{40})?$")


def _paper_config() -> dict:
    return yaml.safe_load(PAPER_CONFIG.read_text(encoding="utf-8"))


def _paper_models_of(table: str) -> set[str]:
    return {row["model"] for row in paper_table(table)}


def test_paper_config_is_a_complete_valid_config() -> None:
    config = _paper_config()
    validate_config(config, SCHEMA)  # raises on any problem
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    assert set(config) == set(default)
    assert config["limit"] is None
    assert {config["results"], config["store"], config["site"]}.isdisjoint(
        {default["results"], default["store"], default["site"]}
    )


def test_paper_config_has_table_4_and_table_5_models_once_each() -> None:
    models = _paper_config()["models"]
    paper_models = [entry["paper_model"] for entry in models.values()]
    assert len(models) == 17
    assert len(set(paper_models)) == len(paper_models)
    assert set(paper_models) <= set(PAPER_MODELS)
    assert set(paper_models) == _paper_models_of("table4_olmes") | _paper_models_of("table5_variants")


def test_paper_config_specs_are_hub_ids_with_size_and_dtype() -> None:
    for name, entry in _paper_config()["models"].items():
        assert HUB_ID.match(entry["spec"]), f"{name}: {entry['spec']} is not org/name[@40-hex commit]"
        assert not Path(entry["spec"].split("@")[0]).exists(), f"{name}: a local path"
        assert entry["parameters"] > 0 and entry["dtype"] in ("float16", "bfloat16")


def test_paper_config_variants_are_table_5s() -> None:
    robustness = _paper_config()["robustness"]
    assert set(robustness["variant_tasks"]) == {row["task"] for row in paper_table("table5_variants")}
    assert robustness["variants"] == ["var1", "var2", "var3"]


@pytest.fixture(scope="module")
def layered_workdir(tmp_path_factory) -> Path:
    """A workdir whose config/config.yaml has one tiny model, on one task, without robustness runs."""
    workdir = tmp_path_factory.mktemp("layered")
    tiny = build_tiny_model(workdir / "tiny", seed=0)
    no_robustness = {"variants": [], "variant_tasks": [], "rotation_tasks": []}
    write_workflow_config(workdir, {"Tiny": tiny}, tasks=["openbookqa"], robustness=no_robustness)
    (workdir / "layer.yaml").write_text("results: results/other\n", encoding="utf-8")
    return workdir


def _dry_run_models(workdir: Path, *args: str) -> set[str]:
    command = [
        str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile"), "--directory",
        str(workdir), "evaluate", "-n", "--cores", "1", *args,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=workflow_environment(), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(re.findall(r"model=([^,\s]+)", done.stdout + done.stderr))


@pytest.mark.parametrize(
    ("layer", "expected"),
    [
        (None, {"Tiny"}),
        ("layer.yaml", {"Tiny"}),  # a layer without models keeps config.yaml's (as full-standard.yaml)
        (PAPER_CONFIG, set(_paper_config()["models"])),  # one with models replaces them
    ],
    ids=["config.yaml", "layer-without-models", "paper.yaml"],
)
def test_a_configfile_with_models_replaces_the_default_models(layered_workdir, layer, expected) -> None:
    # The tasks and robustness runs are cut down (--config) so that the dry run stays small.
    no_robustness = "robustness={variants: [], variant_tasks: [], rotation_tasks: []}"
    small = ["--config", "tasks=[openbookqa]", no_robustness]
    options = ["--configfile", str(layered_workdir / layer), *small] if layer else []
    assert _dry_run_models(layered_workdir, *options) == expected
