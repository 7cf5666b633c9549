"""``olmes upgrade``: a results store's documents rewritten in this olmes's formats.

Every reader already takes a document of any earlier version (olmes.core.records.formats), so an old
store is read as it is; upgrading writes what the readers see, so that the files say it too. For each
document of the store (``store.json``, each ``model.json``, score summary, rotations report and run
record, each reproduction record) that is not already in its current version and form, the upgraded
record is written back, atomically:

- every format's upgrade steps (score summaries /1 and /2, run records before ``format``, model
  records that said ``olmes.store/1``, tables of the store's models' provenance);
- the store's portable form of summaries, reports and run records (olmes.store.portable: no folder
  of the publishing machine);
- a model record without an identity takes the one its run records, or a current reproduction,
  confirm (the only two sources ``olmes verify`` accepts), and its display name the qualifiers that
  identity requires. A model with neither keeps none.

Parquet files are never rewritten: log-prob files are addressed by their SHA-256 (summaries,
reproduction records, blob hosts), and predictions by their summary's; a Parquet file of version 1
(no format in its metadata) holds the columns its format declares and is read as it is. Nothing
else changes, so a second run finds nothing to do, and an interrupted run is finished by running it
again. The store lock keeps a publish out meanwhile.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from olmes.core.identities import qualified_name, recorded_identity
from olmes.core.records import (
    DOCUMENT_FORMATS,
    MODEL_FORMAT,
    REPRODUCTION_FORMAT,
    ROTATIONS_FORMAT,
    RUN_FORMAT,
    SCORES_FORMAT,
    STORE_FORMAT,
    Format,
    ModelRecord,
)
from olmes.core.records.formats import parse_file
from olmes.scoring.rotations import ROTATIONS_SUFFIX
from olmes.store.layout import (
    MODEL_RECORD,
    REPRODUCTION_RECORD,
    REPRODUCTIONS,
    RUN_SUFFIX,
    SUMMARY_SUFFIX,
    model_folder,
    store_record_path,
)
from olmes.store.lock import store_lock
from olmes.store.portable import write_portable
from olmes.store.provenance import reproduced_identity
from olmes.store.reading import check_store, model_names

IDENTITY_AFTER = ("name", "display_name", "series", "training_tokens", "checkpoint")  # model.json's order
CURRENT = {form.name: form.version for form in DOCUMENT_FORMATS}
PROVENANCE = ((SUMMARY_SUFFIX, SCORES_FORMAT), (ROTATIONS_SUFFIX, ROTATIONS_FORMAT), (RUN_SUFFIX, RUN_FORMAT))


@dataclass
class Upgrade:
    """What ``olmes upgrade`` did: the documents it read, and those it rewrote by (format, version)."""

    documents: int = 0
    rewritten: Counter[str] = field(default_factory=Counter)  # "olmes.scores/2" -> files rewritten

    def summary(self) -> str:
        if not self.rewritten:
            return f"{self.documents} document(s), all already in this olmes's formats; nothing written"
        done = ", ".join(f"{_change(tag)}: {count}" for tag, count in sorted(self.rewritten.items()))
        return f"{sum(self.rewritten.values())} of {self.documents} document(s) rewritten ({done})"


def upgrade_store(store: str | Path) -> Upgrade:
    """Rewrite every document of the store that is not in its current version and form."""
    root = check_store(store)
    done = Upgrade()
    with store_lock(root):
        for path, form, write in _documents(root, model_names(root)):
            _document(done, path, form, write)
    return done


def earlier_documents(root: Path, models: list[str]) -> Counter[str]:
    """The store's documents (of ``models``) in an earlier version than this olmes's, by format tag:
    every reader reads them, and ``olmes upgrade`` would rewrite them."""
    found: Counter[str] = Counter()
    for path, form, _ in _documents(root, models):
        version = form.version_of(parse_file(path), str(path))
        if version != form.version:
            found[f"{form.name}/{version}"] += 1
    return found


Writer = Callable[[Path], None]


def _documents(root: Path, models: list[str]) -> Iterator[tuple[Path, Format, Writer]]:
    """Each document of the store with its format and what writes its current form."""
    yield store_record_path(root), STORE_FORMAT, _rewrite(STORE_FORMAT)
    for model in models:
        folder = model_folder(root, model)
        for path in sorted(folder.rglob("*.json")):
            relative = PurePosixPath(path.relative_to(folder).as_posix())
            for suffix, form in PROVENANCE:
                if path.name.endswith(suffix):
                    yield path, form, lambda path, relative=relative: write_portable(path, path, relative)
        yield folder / MODEL_RECORD, MODEL_FORMAT, lambda path, model=model: _write_model(root, model, path)
    for record in sorted((root / REPRODUCTIONS).glob(f"*/{REPRODUCTION_RECORD}")):
        if record.parent.name in models:
            yield record, REPRODUCTION_FORMAT, _rewrite(REPRODUCTION_FORMAT)


def _rewrite(form: Format) -> Writer:
    return lambda path: form.write(path, form.read(path))


def _document(done: Upgrade, path: Path, form: Format, write: Writer) -> None:
    """Rewrite one document with ``write`` (which reads it through its upgrades); counted by the
    version it was when its bytes change."""
    before = path.read_bytes()
    version = form.version_of(parse_file(path), str(path))
    done.documents += 1
    write(path)
    if path.read_bytes() != before:
        done.rewritten[f"{form.name}/{version}"] += 1


def _write_model(root: Path, model: str, path: Path) -> None:
    record = MODEL_FORMAT.read(path)
    if "identity" not in record:
        record = _with_identity(root, model, record)
    MODEL_FORMAT.write(path, record)


def _with_identity(root: Path, model: str, record: ModelRecord) -> ModelRecord:
    """The record with the identity its run records or a current reproduction confirm (and the
    display name that says it); unchanged when neither does."""
    folder = model_folder(root, model)
    runs = [RUN_FORMAT.read(path) for path in sorted(folder.rglob(f"*{RUN_SUFFIX}"))]
    identity = recorded_identity(runs) or reproduced_identity(root, model)
    if identity is None:
        return record
    items = list(record.items())
    at = max(i for i, (key, _) in enumerate(items) if key in IDENTITY_AFTER) + 1
    upgraded = dict([*items[:at], ("identity", identity), *items[at:]])
    upgraded["display_name"] = qualified_name(record["display_name"], identity)
    return upgraded  # type: ignore[return-value]


def _change(tag: str) -> str:
    """``olmes.scores/2 -> /3``; a current version rewritten for what it holds (a rotations report's
    run records, the portable form) is ``olmes.rotations/1 (contents)``."""
    name, _, version = tag.rpartition("/")
    current = CURRENT[name]
    return f"{tag} -> /{current}" if int(version) != current else f"{tag} (contents)"
