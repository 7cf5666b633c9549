"""Persistent cache of request scores: chunked, checksummed, atomic; the basis of resume.

Layout: ``<cache dir>/logprobs/<model fingerprint>/<sha256>.parquet``. Each chunk file holds the
results of some requests, keyed by a hash of the request's (context, continuation); its name is the
SHA-256 of its bytes, so a truncated or altered chunk is detected before it is parsed, reported and
deleted, and its requests are simply computed again. Files are written to a temporary name and
renamed, so a killed run leaves either a whole chunk or none. Requests are keyed by content, not by
position: the same request in another file (or another task) is found too.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from olmes.core.atomic import atomic_path
from olmes.logprobs.tally import Scores

_SCHEMA = pa.schema(
    [
        ("key", pa.binary(16)),
        ("sum_logprob", pa.float64()),
        ("num_tokens", pa.int64()),
        ("is_greedy", pa.bool_()),
    ]
)


def request_key(context: str, continuation: str) -> bytes:
    """16-byte content key of a request (unambiguous: JSON of the two strings)."""
    return hashlib.blake2b(json.dumps([context, continuation]).encode(), digest_size=16).digest()


@dataclass
class Cached:
    """Known results: key -> (sum_logprob, num_tokens, is_greedy)."""

    rows: dict[bytes, tuple[float, int, bool]]
    corrupt_files: int


class LogprobCache:
    """The chunk files of one model fingerprint."""

    def __init__(self, root: Path, fingerprint: str):
        self.folder = Path(root) / "logprobs" / fingerprint

    def load(self) -> Cached:
        """Read every valid chunk; delete (and count) the ones whose checksum does not match."""
        rows: dict[bytes, tuple[float, int, bool]] = {}
        corrupt = 0
        for path in sorted(self.folder.glob("*.parquet")):
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest() != path.stem:
                print(f"olmes: cache chunk {path} is corrupt; recomputing its requests", file=sys.stderr)
                path.unlink(missing_ok=True)
                corrupt += 1
                continue
            table = pq.read_table(io.BytesIO(data)).to_pydict()
            for key, value, count, greedy in zip(
                table["key"], table["sum_logprob"], table["num_tokens"], table["is_greedy"], strict=True
            ):
                rows[key] = (value, count, greedy)
        return Cached(rows, corrupt)

    def write(self, keys: list[bytes], sum_logprob, num_tokens, is_greedy) -> Path | None:
        """Write one chunk atomically; its file name is the SHA-256 of its content."""
        if not keys:
            return None
        table = pa.table(
            [
                pa.array(keys, pa.binary(16)),
                pa.array(sum_logprob, pa.float64()),
                pa.array(num_tokens, pa.int64()),
                pa.array(is_greedy, pa.bool_()),
            ],
            schema=_SCHEMA,
        )
        sink = io.BytesIO()
        pq.write_table(table, sink)
        data = sink.getvalue()
        target = self.folder / f"{hashlib.sha256(data).hexdigest()}.parquet"
        with atomic_path(target) as temp:
            temp.write_bytes(data)
        return target


class ChunkWriter:
    """Collects finished requests during a run and flushes them as chunks (by count or by time)."""

    def __init__(
        self, cache: LogprobCache, keys: list[bytes], every_requests: int = 2048, every_seconds: float = 60.0
    ):
        self.cache, self.keys = cache, keys
        self.every_requests, self.every_seconds = every_requests, every_seconds
        self.pending: list[np.ndarray] = []
        self.pending_count = 0
        self.scores: Scores | None = None
        self.last_flush = time.monotonic()
        self.bytes_written = 0

    def __call__(self, indices: np.ndarray, scores: Scores) -> None:
        """``on_done`` callback of :func:`olmes.logprobs.engine.score`."""
        self.scores = scores
        self.pending.append(indices)
        self.pending_count += len(indices)
        overdue = time.monotonic() - self.last_flush >= self.every_seconds
        if self.pending_count >= self.every_requests or overdue:
            self.flush()

    def flush(self) -> None:
        if not self.pending_count:
            return
        done = np.concatenate(self.pending)
        scores = self.scores
        written = self.cache.write(
            [self.keys[i] for i in done],
            scores.sum_logprob[done],
            scores.num_tokens[done],
            scores.is_greedy[done],
        )
        self.bytes_written += written.stat().st_size
        self.pending, self.pending_count, self.last_flush = [], 0, time.monotonic()
