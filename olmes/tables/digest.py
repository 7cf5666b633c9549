"""What the tables need of one model x task's predictions file, small, and cached by content.

``olmes tables`` reads each predictions file for three facts: the chance accuracy, the flags
(olmes/scoring/flags.py) and the per-instance correctness of the method that decided the score (the
paired bootstrap). At 500 models that is 5,000 Parquet files; holding them all in memory takes
gigabytes and reading them is most of a build. A digest keeps just those facts: it is computed once per
predictions file and kept under ``$OLMES_CACHE_DIR/tables/`` as ``<key>.npz``, where the key is the
SHA-256 of the predictions file, of its summary and this module's ``DIGEST_VERSION``. A rebuild after
one model is added reads only that model's predictions.

A cache entry is checked by its content, not trusted by its name: it holds the SHA-256 of its key and
of every other member (name, dtype, shape and bytes), and one whose content does not give that hash
(a damaged file, one edited by hand: another ``chance``, flags dropped; an entry copied under another
key's name) or that does not read back is computed again from the predictions and written over, so a
restored cache can cost time but never change a table. (A cache rewritten on purpose with a new hash
to match is beyond this check: the cache folder is to be trusted as much as the code that reads it.)
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from olmes.core.atomic import atomic_path
from olmes.core.records import ScoreSummary, TaskFlag
from olmes.core.resources import cache_dir, file_sha256
from olmes.scoring.flags import chance_accuracy, task_flags
from olmes.scoring.predictions import read_predictions_file

DIGEST_VERSION = 2  # 2: each entry holds the SHA-256 of its own content (its "check" member)
CHECK = "check"
# the predictions columns a digest is made of (the file's others, e.g. top_gap, are not read)
COLUMNS = ["method", "instance_index", "native_id", "subject", "label", "num_choices", "prediction",
           "correct", "near_tie", "nonfinite"]  # fmt: skip


@dataclass(frozen=True)
class PredictionDigest:
    """One model x task's facts for the tables; the arrays are the deciding method's rows, in file order.

    Instance ids and subjects are kept compact (a digest is read for every model x task of a build):
    the ids as one JSON text, compared as bytes and parsed only where two runs scored different
    instances; the subjects as codes into their sorted names."""

    chance: float
    flags: list[TaskFlag]
    instance_index: np.ndarray  # int64
    native_ids: bytes  # the rows' native ids, a JSON list in UTF-8
    subject_codes: np.ndarray | None  # int32 positions in subject_names; None: the task has no subjects
    subject_names: list[str]  # sorted, so the codes sort as the names do
    correct: np.ndarray  # bool

    def native_id(self) -> np.ndarray:
        return np.array(json.loads(self.native_ids), dtype=object)

    def subject(self) -> np.ndarray | None:
        """Each row's subject, or None."""
        return (
            None
            if self.subject_codes is None
            else np.array(self.subject_names, dtype=object)[self.subject_codes]
        )


def digest_of(
    summary: ScoreSummary, summary_path: Path, read: Callable[[], pd.DataFrame]
) -> PredictionDigest:
    """The digest of a summary's predictions: from the cache, else computed with ``read()`` and cached."""
    key = _key(summary, summary_path)
    path = cache_dir() / "tables" / f"{key}.npz"
    if path.is_file():
        try:
            return _load(path, key)
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
            pass  # damaged or altered: computed again below and written over
    digest = compute(summary, read())
    _save(digest, path, key)
    return digest


def compute(summary: ScoreSummary, predictions: pd.DataFrame) -> PredictionDigest:
    """The digest of ``predictions`` (the file ``summary`` points to; :data:`COLUMNS` suffice)."""
    best = summary.get("best_of_two")
    methods = predictions["method"].to_numpy(dtype=object)
    rows = methods == (best["method"] if best else methods[0])
    subject = predictions["subject"].to_numpy(dtype=object)[rows]
    names, codes = [], None
    if not pd.isna(subject).all():
        names, inverse = np.unique(subject.astype(str), return_inverse=True)
        names, codes = [str(name) for name in names], inverse.astype(np.int32)
    native_ids = predictions["native_id"].astype(str).to_numpy(dtype=object)[rows].tolist()
    return PredictionDigest(
        chance=chance_accuracy(predictions),
        flags=task_flags(summary, predictions),
        instance_index=predictions["instance_index"].to_numpy(dtype=np.int64)[rows],
        native_ids=json.dumps(native_ids, ensure_ascii=False, separators=(",", ":")).encode(),
        subject_codes=codes,
        subject_names=names,
        correct=predictions["correct"].to_numpy(dtype=bool)[rows],
    )


def read_columns(path: Path) -> pd.DataFrame:
    """The :data:`COLUMNS` a predictions file has (files made before ``nonfinite`` existed lack it)."""
    return read_predictions_file(path, columns=COLUMNS)


def _key(summary: ScoreSummary, summary_path: Path) -> str:
    text = f"{DIGEST_VERSION}\n{summary['predictions']['sha256']}\n{file_sha256(summary_path)}"
    return hashlib.sha256(text.encode()).hexdigest()


def _content_sha256(key: str, arrays: dict[str, np.ndarray]) -> str:
    """The SHA-256 of a cache entry's key and members (each by name, dtype, shape and bytes)."""
    sha = hashlib.sha256(f"olmes digest {DIGEST_VERSION} {key}\n".encode())
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        sha.update(f"{name} {array.dtype.str} {array.shape}\n".encode())
        sha.update(array.tobytes())
    return sha.hexdigest()


def _save(digest: PredictionDigest, path: Path, key: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    facts = {"chance": digest.chance, "flags": digest.flags, "subject_names": digest.subject_names}
    arrays = {
        "facts": np.frombuffer(json.dumps(facts).encode(), dtype=np.uint8),
        "native_ids": np.frombuffer(digest.native_ids, dtype=np.uint8),
        "instance_index": digest.instance_index,
        "correct": digest.correct,
    }
    if digest.subject_codes is not None:
        arrays["subject_codes"] = digest.subject_codes
    arrays[CHECK] = np.frombuffer(_content_sha256(key, arrays).encode(), dtype=np.uint8)
    with atomic_path(path) as temp, open(temp, "wb") as sink:
        np.savez(sink, **arrays)


def _load(path: Path, key: str) -> PredictionDigest:
    """A cache entry, if its content is the one its check records (ValueError otherwise)."""
    with np.load(path, allow_pickle=False) as found:
        arrays = {name: found[name] for name in found.files}
    recorded = arrays.pop(CHECK, np.zeros(0, dtype=np.uint8)).tobytes().decode("ascii", "replace")
    if recorded != _content_sha256(key, arrays):
        raise ValueError(f"{path}: its content is not the one its check records")
    facts = json.loads(arrays["facts"].tobytes())
    return PredictionDigest(
        chance=facts["chance"],
        flags=facts["flags"],
        instance_index=arrays["instance_index"],
        native_ids=arrays["native_ids"].tobytes(),
        subject_codes=arrays.get("subject_codes"),
        subject_names=facts["subject_names"],
        correct=arrays["correct"],
    )
