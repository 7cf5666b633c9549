"""Fixtures shared by several test modules (plain helpers are in tests/helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A store holding model M1 on tests.test_store.TASK, log-prob files in the model folder, as
    publish leaves it (copy it before changing it)."""
    from olmes.store import publish as store
    from tests.test_store import make_results

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
