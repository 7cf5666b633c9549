"""The light install (``pip install olmes``, no extra): tables and the site without torch or transformers.

Each command runs in a subprocess in which every package of the ``models`` and ``workflow`` extras
(read from the installed metadata, so from ``pyproject.toml``) is unimportable: ``None`` in
``sys.modules`` makes any import of it fail, so a command that passes here imports none of them.
"""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from olmes import store
from olmes.cli.extras import extra_modules, extra_providing

pytestmark = pytest.mark.slow  # a fresh venv

REPO = Path(__file__).resolve().parent.parent
LEFT_OUT_EXTRAS = ("models", "workflow")


def _extra_modules(extras: tuple[str, ...]) -> list[str]:
    return [name for name, extra in extra_modules() if extra in extras]


LIGHT = f"""
import sys
for name in {_extra_modules(LEFT_OUT_EXTRAS)!r}:
    sys.modules[name] = None
from olmes.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _olmes(*args: str, light: bool, cwd: Path) -> subprocess.CompletedProcess:
    """``olmes ARGS`` in a subprocess; ``light``: with the extras' packages unimportable."""
    python = [sys.executable, "-c", LIGHT] if light else [sys.executable, "-m", "olmes.cli.main"]
    return subprocess.run([*python, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_the_extras_hold_the_model_packages_and_snakemake() -> None:
    modules = _extra_modules(LEFT_OUT_EXTRAS)
    assert {"torch", "transformers", "accelerate", "gguf", "snakemake"} <= set(modules)
    assert extra_providing("torch") == extra_providing("transformers.models") == "models"
    assert extra_providing("snakemake") == "workflow"
    assert extra_providing("pandas") is None  # a core dependency: in the light install


@pytest.fixture(scope="module")
def light_and_full_sites(tmp_path_factory) -> dict[str, Path]:
    """The committed store's tables and site, built once as the light install and once as the full."""
    root = tmp_path_factory.mktemp("light")
    shutil.copytree(REPO / "leaderboard", root / "leaderboard")
    sites = {}
    for kind, light in (("light", True), ("full", False)):
        tables, site = f"{kind}/tables", f"{kind}/site"
        for args in (
            ("tables", "--store", "leaderboard", "--out", tables),
            ("site", "--store", "leaderboard", "--tables", tables, "--out", site),
        ):
            done = _olmes(*args, light=light, cwd=root)
            assert done.returncode == 0, f"{kind} olmes {args[0]}: {done.stderr[-2000:]}"
        sites[kind] = root / site
    sites["store"] = root / "leaderboard"
    return sites


def test_tables_and_site_build_without_the_model_packages(light_and_full_sites) -> None:
    site = light_and_full_sites["light"]
    listed = (site / "downloads" / "leaderboard.json").read_text()
    models = store.model_names(light_and_full_sites["store"])
    assert models and all(name in listed for name in models)


def test_the_light_site_equals_the_full_installs_byte_for_byte(light_and_full_sites) -> None:
    light, full = light_and_full_sites["light"], light_and_full_sites["full"]
    files = sorted(path.relative_to(full) for path in full.rglob("*") if path.is_file())
    assert files == sorted(path.relative_to(light) for path in light.rglob("*") if path.is_file())
    _, mismatch, errors = filecmp.cmpfiles(full, light, [str(path) for path in files], shallow=False)
    assert mismatch == errors == []


@pytest.mark.parametrize(
    "args",
    [
        ("logprobs", "--model", "smollm2-135m", "--requests", "r.jsonl", "--output", "r.parquet"),
        ("reproduce", "SmolLM2-135M", "--workdir", "work", "--output", "report.json"),
    ],
    ids=["logprobs", "reproduce"],
)
def test_a_model_command_says_in_one_line_what_to_install(tmp_path, args) -> None:
    done = _olmes(*args, light=True, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"olmes: error: olmes {args[0]} needs torch, which this install leaves out: pip install "
        f'"olmes[models]" (in a clone: pip install -e ".[models]")'
    ]


def test_the_help_of_every_command_shows_without_the_model_packages(tmp_path) -> None:
    done = _olmes("--help", light=True, cwd=tmp_path)
    assert done.returncode == 0 and "logprobs" in done.stdout, done.stderr
    done = _olmes("logprobs", "--help", light=True, cwd=tmp_path)
    assert done.returncode == 0 and "bfloat16" in done.stdout, done.stderr
