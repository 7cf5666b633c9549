"""Versioned formats: every document olmes writes says what it is in one key, ``format``
(``"olmes.scores/3"``: a name and a version), and is read through its upgrades.

A store lives for years and travels between forks, so a reader meets files of every earlier version.
Each format keeps beside its record the chain of small upgrade steps from each version to the next;
its reader applies them in memory, then checks the result against the record, so the code after the
reader sees only the current version and never sniffs for fields. ``olmes upgrade`` writes the
upgraded documents back. A file of a newer version than this olmes knows is refused, naming both.

Documents written before a format had the key are its version 1 (``unversioned``); a format whose
earlier files named it otherwise (score summaries' ``schema``, model records' ``olmes.store/1``) says
so in ``legacy_key`` and ``older_tags``. Parquet files carry their format in their schema metadata
(:class:`ParquetFormat`); a Parquet file without it is version 1.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from olmes.core.atomic import write_json_atomic
from olmes.core.errors import OlmesError
from olmes.core.records.typecheck import checked, parsed

FORMAT_KEY = "format"
PARQUET_KEY = b"olmes.format"
R = TypeVar("R")
Upgrade = Callable[[dict[str, Any]], dict[str, Any]]
"""One step: a document of version N (as a dict, its ``format`` key already dropped) to N + 1."""


def split_tag(tag: Any) -> tuple[str, int] | None:
    """(name, version) of a format tag ``"olmes.name/3"``; None when it is not one."""
    if not isinstance(tag, str) or "/" not in tag:
        return None
    name, _, number = tag.rpartition("/")
    return (name, int(number)) if number.isdigit() and not number.startswith("0") else None


def tagged_version(tag: Any, name: str, current: int, where: str, foreign: str) -> int:
    """The version a tag names of format ``name``; ``foreign`` (the message) when it names another
    format or none, and a refusal naming both versions when it is newer than ``current``."""
    named = split_tag(tag)
    if named is None or named[0] != name:
        raise OlmesError(f"{where}: {foreign}")
    if named[1] > current:
        raise OlmesError(
            f"{where}: {name}/{named[1]} is newer than this olmes reads ({name}/{current}); "
            "upgrade olmes (pip install -U olmes) to read it"
        )
    return named[1]


@dataclass(frozen=True)
class Format(Generic[R]):
    """A JSON document format: its name, record, and the upgrades from each earlier version."""

    name: str  # "olmes.scores"
    kind: type[R]  # the record the current version is
    made_by: str  # what to do for a fresh one: "run olmes score"
    upgrades: tuple[Upgrade, ...] = ()  # upgrades[i] takes version i + 1 to i + 2
    unversioned: bool = False  # a document without the key is version 1 (written before the key)
    legacy_key: str | None = None  # the key an earlier version kept its tag in
    older_tags: Mapping[str, int] = field(default_factory=dict)  # earlier tags under another name
    nested: Callable[[dict[str, Any], str], None] | None = None  # upgrades documents held inside

    @property
    def version(self) -> int:
        return len(self.upgrades) + 1

    @property
    def tag(self) -> str:
        return f"{self.name}/{self.version}"

    def version_of(self, document: Any, where: str) -> int:
        """The version a parsed document is of this format; an error when it is not this format or
        is newer than this olmes."""
        if not isinstance(document, dict):
            raise OlmesError(f"{where}: not an olmes {self.kind.__name__} (a JSON object is expected)")
        tag = document.get(FORMAT_KEY, document.get(self.legacy_key) if self.legacy_key else None)
        if tag is None and self.unversioned:
            return 1
        if tag in self.older_tags:
            return self.older_tags[tag]
        foreign = f"not a {self.kind.__name__} ({self.tag}); {self.made_by}"
        return tagged_version(tag, self.name, self.version, where, foreign)

    def upgraded(self, document: Any, where: str) -> R:
        """A parsed document of any version of this format as the current record, checked."""
        version = self.version_of(document, where)
        body = {key: value for key, value in document.items() if key not in (FORMAT_KEY, self.legacy_key)}
        for number, step in enumerate(self.upgrades[version - 1 :], start=version):
            try:
                body = step(body)
            except OlmesError as error:
                raise OlmesError(f"{where} ({self.name}/{number}): {error}") from None
        if self.nested is not None:
            self.nested(body, where)
        try:
            return checked({FORMAT_KEY: self.tag, **body}, self.kind, where)
        except OlmesError as error:
            if version == self.version:
                raise
            # an older file olmes once wrote in another shape
            raise OlmesError(f"{error} (a {self.name}/{version} file); {self.made_by}") from None

    def read(self, path: str | os.PathLike) -> R:
        return self.upgraded(parse_file(Path(path)), str(path))

    def stamped(self, record: Mapping[str, Any]) -> R:
        """The record with this format's tag first, checked: what :meth:`write` writes."""
        body = {key: value for key, value in record.items() if key != FORMAT_KEY}
        return checked({FORMAT_KEY: self.tag, **body}, self.kind, f"{self.kind.__name__} to write")

    def write(self, path: str | os.PathLike, record: Mapping[str, Any]) -> None:
        """The one writer of this format: tagged, checked, atomic."""
        write_json_atomic(path, self.stamped(record))


def parse_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise OlmesError(f"{path}: cannot read ({error})") from error
    return parsed(text, str(path))


@dataclass(frozen=True)
class ParquetFormat:
    """A Parquet format: its tag lives in the file's schema metadata (``olmes.format``); files written
    before it have none and are version 1. Its columns are declared beside it (``Column``)."""

    name: str
    version: int
    made_by: str

    @property
    def tag(self) -> str:
        return f"{self.name}/{self.version}"

    def metadata(self) -> dict[bytes, bytes]:
        """The schema metadata a writer adds to the table it writes."""
        return {PARQUET_KEY: self.tag.encode("ascii")}

    def check(self, metadata: Mapping[bytes, bytes] | None, where: str) -> int:
        """The version a file's schema metadata says; an error for another format or a newer one."""
        raw = (metadata or {}).get(PARQUET_KEY)
        if raw is None:
            return 1
        found = raw.decode("utf-8", "replace")
        foreign = f"a Parquet file of {found!r}, not {self.tag}; {self.made_by}"
        return tagged_version(found, self.name, self.version, where, foreign)

    def check_file(self, path: str | os.PathLike) -> int:
        """:meth:`check` of a file's footer (the data is not read)."""
        import pyarrow.parquet as pq

        try:
            metadata = pq.read_schema(path).metadata
        except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
            raise OlmesError(f"{path}: cannot read as Parquet ({error}); {self.made_by}") from error
        return self.check(metadata, str(path))
