"""Persistent cache of generations: chunked, checksummed, atomic; the basis of resume (as
:mod:`olmes.logprobs.cache` is for log-probs).

Layout: ``<cache dir>/generations/<model fingerprint>/<sha256>.parquet``. Each chunk file holds some
requests' generations, keyed by a hash of the request's content (context, stop sequences, token budget)
and the generation engine's version; its name is the SHA-256 of its bytes, so a truncated or altered
chunk is detected before it is parsed, reported and deleted, and its requests are generated again.
Files are written to a temporary name and renamed: a killed run leaves a whole chunk or none.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from olmes.core.atomic import atomic_path
from olmes.logprobs.generation import GENERATION_ENGINE_VERSION, Generation

_SCHEMA = pa.schema(
    [
        ("key", pa.binary(16)),
        ("text", pa.string()),
        ("token_ids", pa.list_(pa.int64())),
        ("stop_reason", pa.string()),
    ]
)


def generation_key(context: str, stop_sequences: Sequence[str], max_gen_toks: int) -> bytes:
    """16-byte content key of a generation request (JSON of its three fields) and the engine version."""
    content = json.dumps([context, list(stop_sequences), int(max_gen_toks)]) + GENERATION_ENGINE_VERSION
    return hashlib.blake2b(content.encode(), digest_size=16).digest()


@dataclass
class CachedGenerations:
    """Known generations: key -> Generation."""

    rows: dict[bytes, Generation]
    corrupt_files: int


class GenerationCache:
    """The chunk files of one model fingerprint."""

    def __init__(self, root: Path, fingerprint: str):
        self.folder = Path(root) / "generations" / fingerprint

    def load(self) -> CachedGenerations:
        """Read every valid chunk; delete (and count) the ones whose checksum does not match."""
        rows: dict[bytes, Generation] = {}
        corrupt = 0
        for path in sorted(self.folder.glob("*.parquet")):
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest() != path.stem:
                print(f"olmes: cache chunk {path} is corrupt; generating its requests again", file=sys.stderr)
                path.unlink(missing_ok=True)
                corrupt += 1
                continue
            table = pq.read_table(io.BytesIO(data)).to_pydict()
            for key, text, ids, reason in zip(
                table["key"], table["text"], table["token_ids"], table["stop_reason"], strict=True
            ):
                rows[key] = Generation(text, list(ids), len(ids), reason)
        return CachedGenerations(rows, corrupt)

    def write(self, keys: list[bytes], generations: list[Generation]) -> Path | None:
        """Write one chunk atomically; its file name is the SHA-256 of its content."""
        if not keys:
            return None
        table = pa.table(
            [
                pa.array(keys, pa.binary(16)),
                pa.array([g.text for g in generations], pa.string()),
                pa.array([g.token_ids for g in generations], pa.list_(pa.int64())),
                pa.array([g.stop_reason for g in generations], pa.string()),
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


class GenerationChunkWriter:
    """Collects finished generations during a run and flushes them as chunks (by count or by time)."""

    def __init__(
        self,
        cache: GenerationCache,
        keys: list[bytes],
        every_requests: int = 256,
        every_seconds: float = 60.0,
    ):
        self.cache, self.keys = cache, keys
        self.every_requests, self.every_seconds = every_requests, every_seconds
        self.pending: list[np.ndarray] = []
        self.pending_count = 0
        self.generations: list[Generation | None] = []
        self.last_flush = time.monotonic()
        self.bytes_written = 0

    def __call__(self, indices: np.ndarray, generations: list[Generation | None]) -> None:
        """``on_done`` callback of :func:`olmes.logprobs.generation.generate`."""
        self.generations = generations
        self.pending.append(indices)
        self.pending_count += len(indices)
        overdue = time.monotonic() - self.last_flush >= self.every_seconds
        if self.pending_count >= self.every_requests or overdue:
            self.flush()

    def flush(self) -> None:
        if not self.pending_count:
            return
        done = np.concatenate(self.pending).tolist()
        written = self.cache.write([self.keys[i] for i in done], [self.generations[i] for i in done])
        self.bytes_written += written.stat().st_size
        self.pending, self.pending_count, self.last_flush = [], 0, time.monotonic()
