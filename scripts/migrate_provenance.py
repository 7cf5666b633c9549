"""Rewrite a results store's provenance files in the portable form ``olmes publish`` now writes.

Stores published before it carry the publishing machine's folders: score summaries' and rotations
reports' ``inputs.<set>.path`` (``/tmp/.../logprobs/<model>/<task>.cf.parquet``), run records'
``model_path`` (``/root/.cache/olmes/models/...``) and ``requests_file``. Each summary, report and
run record of every model folder is rewritten by ``olmes.store.portable`` (the code publish uses):
paths relative to the model folder, ``model_path`` left out, ``requests_file`` its name. No number,
hash or other field changes, and no log-prob or predictions file is touched: the SHA-256s the
summaries record stay those files'. No file of the store records a summary's, report's or run
record's own SHA-256 (the tables' index does, and is rebuilt from the store). Each file is written
atomically and the form of a portable file is itself, so a second run (or a run after an
interruption) changes nothing more.

    .venv/bin/python scripts/migrate_provenance.py leaderboard
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path, PurePosixPath

from olmes.core.errors import OlmesError
from olmes.store.portable import is_provenance, write_portable
from olmes.store.publish import check_store, model_names


def migrate(store: Path) -> list[str]:
    """Rewrite every provenance file of the store's models; returns those whose bytes changed."""
    changed = []
    for model in model_names(check_store(store)):
        folder = store / "models" / model
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and is_provenance(p.name)):
            relative = PurePosixPath(path.relative_to(folder).as_posix())
            before = path.read_bytes()
            write_portable(path, path, relative)
            if path.read_bytes() != before:
                changed.append(f"{model}/{relative}")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("store", type=Path, help="a results store (olmes publish)")
    args = parser.parse_args(argv)
    try:
        changed = migrate(args.store)
    except OlmesError as error:
        print(f"migrate_provenance: error: {error}", file=sys.stderr)
        return 1
    print(
        f"{args.store}: {len(changed)} file(s) rewritten in the portable form"
        if changed
        else f"{args.store}: every provenance file is portable; nothing to do"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
