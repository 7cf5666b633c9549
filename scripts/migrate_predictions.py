"""Re-encode a store's predictions Parquet files with ``olmes.scoring.score.write_predictions`` (zstd,
dictionary ids, byte-stream-split floats), in place, and record each file's new SHA-256 in its score
summary. Git carries these files for every published model; the encoding makes them about 35% smaller.

No value can change: each file is read, written again, and read back; the two frames must be equal
(dtypes included) or the file is left alone and the script stops. Files already in the new encoding come
out byte-identical and their summaries are not touched.

    .venv/bin/python scripts/migrate_predictions.py leaderboard
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd

from olmes.core.errors import OlmesError
from olmes.core.records import read_score_summary, write_score_summary
from olmes.core.resources import file_sha256
from olmes.scoring.predictions import write_predictions


def migrate(summary_path: Path) -> bool:
    """Re-encode the predictions of one summary; True when its file changed."""
    summary = read_score_summary(summary_path)
    path = summary_path.parent / summary["predictions"]["path"]
    if file_sha256(path) != summary["predictions"]["sha256"]:
        raise OlmesError(f"{path} does not have the SHA-256 its summary records; not migrated")
    before = pd.read_parquet(path)
    with tempfile.TemporaryDirectory() as work:
        candidate = Path(work) / path.name
        write_predictions(before, candidate)
        if not pd.read_parquet(candidate).equals(before):
            raise OlmesError(f"{path}: re-encoded predictions read back differently; not migrated")
        new_sha256 = file_sha256(candidate)
        if new_sha256 == summary["predictions"]["sha256"]:
            return False
        write_predictions(before, path)
    summary["predictions"]["sha256"] = new_sha256
    write_score_summary(summary_path, summary)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    args = parser.parse_args(argv)
    summaries = sorted(args.store.glob("models/*/**/*.scores.json"))
    try:
        changed = sum(migrate(path) for path in summaries)
    except OlmesError as error:
        print(f"migrate_predictions: error: {error}", file=sys.stderr)
        return 2
    print(f"{changed} of {len(summaries)} predictions files re-encoded under {args.store}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
