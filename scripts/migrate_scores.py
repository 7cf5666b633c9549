"""Rewrite score summaries of format olmes.scores/1 as olmes.scores/2, in place, atomically.

/2 drops the ``olmes`` field, which repeated ``best_of_two`` (null where the result is partial);
readers derive it with ``olmes.core.records.olmes_score``. Every other field is kept as it is, byte for
byte, so no number can change; a /1 file whose ``olmes`` is not exactly what /2 derives is refused
rather than rewritten. Summaries already in /2 are left alone.

    .venv/bin/python scripts/migrate_scores.py leaderboard [results ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from olmes.core.atomic import write_json_atomic
from olmes.core.errors import OlmesError
from olmes.core.records import SCORES_FORMAT, SCORES_FORMAT_1, olmes_score, read_score_summary


def migrate(path: Path) -> bool:
    """Rewrite one summary; True when it was a /1 file."""
    document = json.loads(path.read_text(encoding="utf-8"))
    if document.get("schema") != SCORES_FORMAT_1:
        return False
    kept = {key: value for key, value in document.items() if key != "olmes"}
    kept["schema"] = SCORES_FORMAT
    if document.get("olmes") != olmes_score(kept):
        raise OlmesError(
            f"{path}: its 'olmes' field is not its best_of_two (or null where partial); not migrated"
        )
    write_json_atomic(path, kept)
    read_score_summary(path)  # the new file must read as a /2 summary
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="+", type=Path, help="folders searched for *.scores.json")
    args = parser.parse_args(argv)
    migrated = kept = 0
    try:
        for folder in args.folders:
            for path in sorted(folder.rglob("*.scores.json")):
                if migrate(path):
                    migrated += 1
                else:
                    kept += 1
    except OlmesError as error:
        print(f"migrate_scores: error: {error}", file=sys.stderr)
        return 1
    print(f"{migrated} summaries migrated to {SCORES_FORMAT}, {kept} left as they were")
    return 0


if __name__ == "__main__":
    sys.exit(main())
