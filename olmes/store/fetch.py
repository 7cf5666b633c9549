"""Bring a store's external log-prob files (:mod:`olmes.store.blobs`) back from file hosts, each
checked against the SHA-256 that the store's score summaries and rotations reports record.

A host is a URL prefix (http://, https://, file://) or a folder, holding the file of SHA-256 ``S``
as ``<host>/S.parquet``: any copy of a store's ``blobs/`` folder (the assets of a GitHub release,
a web folder, a shared disk). A download goes to a temp file beside its target and is renamed in
only when its SHA-256 is right, so a bad or interrupted download never takes the place of a file.
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from olmes.core.atomic import atomic_path
from olmes.core.errors import OlmesError
from olmes.core.records import read_score_summary
from olmes.core.resources import file_sha256
from olmes.scoring.rotations import ROTATIONS_KIND, read_rotation_report
from olmes.store.blobs import blob_path, check_host, host_url
from olmes.store.layout import BLOBS, logprob_name
from olmes.store.reading import store_record
from olmes.store.sources import sources

TIMEOUT_S = 60  # per request: a host that does not answer is given up for the next


@dataclass(frozen=True)
class NamedFile:
    """A log-prob file the store names: where its model folder names it, and its SHA-256."""

    path: Path
    sha256: str


@dataclass
class Fetched:
    """What ``fetch_logprobs`` found: external files present (intact), fetched, still missing."""

    present: int = 0
    fetched: int = 0
    missing: int = 0

    def line(self, store: Path) -> str:
        return (
            f"{store}: {self.present + self.fetched + self.missing} external log-prob file(s): "
            f"{self.present} present, {self.fetched} fetched, {self.missing} missing"
        )


class _WrongHash(Exception):
    """A download whose SHA-256 is not the one the store records (discarded)."""


def external_files(store: Path, models: list[str] | None = None) -> list[NamedFile]:
    """Every log-prob file the store's summaries and reports name (standard and robustness) that is
    not in its model folder: the files its ``blobs/`` must hold. One per SHA-256."""
    found: dict[str, NamedFile] = {}
    for source in sources(store, models):
        places = [
            (source.logprobs, task, read_score_summary(source.summary_path(task))["inputs"])
            for task in source.tasks()
        ]
        for result in source.robustness(store):
            read = read_rotation_report if result.kind == ROTATIONS_KIND else read_score_summary
            places.append((result.logprobs, result.task, read(result.path)["inputs"]))
        for folder, task, inputs in places:
            for request_set, entry in inputs.items():
                path = folder / logprob_name(task, request_set)
                if not path.is_file():
                    found.setdefault(entry["sha256"], NamedFile(path, entry["sha256"]))
    return list(found.values())


def host_urls(store: Path, hosts: list[str]) -> list[str]:
    """The URL prefixes to try, in order: ``hosts`` (folders relative to the working folder), then
    the store's ``logprob_hosts`` (folders relative to the store)."""
    given = [host_url(check_host(host, "--host"), Path.cwd()) for host in hosts]
    listed = [host_url(host, store) for host in store_record(store).get("logprob_hosts", [])]
    return list(dict.fromkeys(given + listed))


def fetch_logprobs(
    store: Path, hosts: list[str], models: list[str] | None = None, say: Callable[[str], None] = print
) -> Fetched:
    """Make every external log-prob file of ``store`` (of ``models``, default all) present and
    intact in its blobs/, fetching what is missing or corrupt from ``hosts`` and the store's own."""
    _check_blobs_folder(store)
    urls = host_urls(store, hosts)
    counts = Fetched()
    for file in external_files(store, models):
        blob = blob_path(store, file.sha256)
        if blob.is_file():
            if file_sha256(blob) == file.sha256:
                counts.present += 1
                continue
            say(f"{blob} is corrupt (not SHA-256 {file.sha256}); fetching it again")
        if _fetch_one(file, blob, urls, say):
            counts.fetched += 1
        else:
            counts.missing += 1
    if counts.missing and not urls:
        say("no log-prob host to fetch from: pass --host URL or list logprob_hosts in store.json")
    return counts


def _check_blobs_folder(store: Path) -> None:
    """Fetching writes only inside the store: a ``blobs`` that is a link (or lies outside the store
    through a linked parent) is refused before anything is downloaded."""
    folder = store / BLOBS
    if folder.is_symlink() or (folder.exists() and folder.resolve().parent != store.resolve()):
        target = os.readlink(folder) if folder.is_symlink() else folder.resolve()
        raise OlmesError(
            f"{folder} leads out of the store (a link to {target}); a store's {BLOBS}/ is a folder of its "
            "own: remove the link, then fetch again"
        )


def _fetch_one(file: NamedFile, blob: Path, urls: list[str], say: Callable[[str], None]) -> bool:
    """Try each host in turn; True once ``blob`` holds the file, checked."""
    failures = []
    for url in urls:
        try:
            _download(url + blob.name, blob, file.sha256)
            return True
        except _WrongHash as error:
            say(f"{file.path}: {url}{blob.name} is not the file the store names ({error}); discarded")
            failures.append(f"{url} (wrong SHA-256)")
        except (OSError, ValueError) as error:  # urllib's URLError and HTTPError are OSErrors
            failures.append(f"{url} ({getattr(error, 'reason', None) or error})")
    if urls:
        say(f"{file.path} (SHA-256 {file.sha256}) could not be fetched: {'; '.join(failures)}")
    return False


def _download(url: str, target: Path, sha256: str) -> None:
    """``url`` into ``target`` when its SHA-256 is ``sha256``; :class:`_WrongHash` otherwise."""
    digest = hashlib.sha256()
    with atomic_path(target) as temp:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response, open(temp, "wb") as handle:
            for block in iter(lambda: response.read(1 << 20), b""):
                digest.update(block)
                handle.write(block)
        if digest.hexdigest() != sha256:
            raise _WrongHash(f"SHA-256 {digest.hexdigest()}, the store records {sha256}")
