"""JSON-lines files (requests, instances): one checked record a line.

Their version is 1 and is not written in them: a request file's bytes are the identity of the
measurement (their SHA-256 is in every run record, and ``olmes verify`` compares it with the requests
this olmes makes), so a key on every line, or a header line, would make every stored result "made
with other requests". A later version will start with a header line ``{"format": "olmes.requests/2"}``;
the reader already takes one, and refuses a version newer than it knows, naming both.
"""

import gzip
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from olmes.core.atomic import atomic_path
from olmes.core.errors import OlmesError
from olmes.core.records.formats import FORMAT_KEY, tagged_version
from olmes.core.records.typecheck import checked, parsed

R = TypeVar("R")


@dataclass(frozen=True)
class JsonLinesFormat(Generic[R]):
    """A JSON-lines format: its name and the record each line is (version 1, see above)."""

    name: str
    kind: type[R]
    version: int = 1

    @property
    def tag(self) -> str:
        return f"{self.name}/{self.version}"

    def is_header(self, row: Any, where: str) -> bool:
        """A first line that names the file's format (refused when newer than this olmes)."""
        if not (isinstance(row, dict) and set(row) == {FORMAT_KEY}):
            return False
        tagged_version(
            row[FORMAT_KEY], self.name, self.version, where, f"a file of {row[FORMAT_KEY]!r}, not {self.tag}"
        )
        return True


def iter_records(path: str | os.PathLike, form: JsonLinesFormat[R]) -> Iterator[tuple[int, R]]:
    """(line number, record) of a JSON-lines file (gzip-compressed if it ends in .gz), each checked."""
    path, kind = Path(path), form.kind
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = f"{path}:{number}"
                row = parsed(line, where)
                if number > 1 or not form.is_header(row, where):
                    yield number, checked(row, kind, where)
    except OSError as error:
        raise OlmesError(f"{path}: cannot read ({error})") from error
    except UnicodeDecodeError as error:  # a binary file (a Parquet file given as requests, say)
        raise OlmesError(
            f"{path}: not UTF-8 text ({error.reason}), so not an olmes JSON-lines file ({kind.__name__}); "
            "give a file written by olmes requests"
        ) from error


def read_records(path: str | os.PathLike, form: JsonLinesFormat[R]) -> list[R]:
    return [record for _, record in iter_records(path, form)]


def write_records(
    records: Iterable[Mapping[str, Any]],
    path: str | os.PathLike,
    *,
    append: bool = False,
    ascii_only: bool = False,
) -> None:
    """JSON lines, UTF-8, written atomically (the one JSON-lines writer of olmes, see
    :func:`_json_lines`). ``append`` keeps the file's present bytes before the new lines (the file is
    still replaced whole, so an interrupted append adds nothing); ``ascii_only`` escapes non-ASCII
    characters as ``\\uXXXX``."""
    kept = Path(path).read_bytes() if append and os.path.exists(path) else b""
    with atomic_path(path) as temp, open(temp, "wb") as handle:
        handle.write(kept)
        for line in _json_lines(records, ascii_only):
            handle.write(line.encode("utf-8"))


def records_bytes(records: Iterable[Mapping[str, Any]], *, compress: bool = False) -> bytes:
    """The bytes :func:`write_records` writes for ``records`` (the bytes whose SHA-256 a run record
    holds); ``compress``: gzip with no time or name in the header, so the same rows give the same
    bytes (and git diff) every time."""
    data = "".join(_json_lines(records, False)).encode("utf-8")
    return gzip.compress(data, compresslevel=9, mtime=0) if compress else data


def _json_lines(records: Iterable[Mapping[str, Any]], ascii_only: bool) -> Iterator[str]:
    """The JSON-lines format: one compact JSON object a line, each line ending in ``\\n``."""
    for record in records:
        yield json.dumps(record, ensure_ascii=ascii_only) + "\n"
