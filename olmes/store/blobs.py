"""Where a store's log-prob Parquet files live: in their model folder ("in-tree") or outside git,
as ``<store>/blobs/<sha256>.parquet`` ("external").

Why: the log-probs are needed to rescore and to reproduce, not to show, and they are most of a
model's bytes (about 5 MB a model). In git, every published model would grow the history by that
much for good. An external file is named by the SHA-256 its score summary or rotations report
already records, so the store's git files name it and check it, while the file itself can live on
any file host (``olmes fetch-logprobs`` gets it back, checked). Run records always stay in-tree.
"""

from __future__ import annotations

from pathlib import Path

from olmes.core.atomic import write_text_atomic
from olmes.core.errors import OlmesError
from olmes.core.records import read_score_summary
from olmes.store.layout import BLOBS, GITIGNORE, LOGPROBS, SCORES, logprob_name, model_folder, summary_name

LAYOUTS = ("external", "in-store")  # where publish puts log-prob files (olmes publish --logprobs)
HOST_SCHEMES = ("http", "https", "file")
IGNORED_LINE = f"/{BLOBS}/"  # the line of a store's .gitignore: its external files stay out of git


def blob_path(store: str | Path, sha256: str) -> Path:
    return Path(store) / BLOBS / f"{sha256}.parquet"


def logprob_file(store: str | Path, folder: str | Path, name: str, sha256: str) -> Path:
    """The log-prob file ``name`` of a store's model folder ``folder``: the in-tree file if there is
    one, else the store's blob of that SHA-256; one clear error saying how to fetch it otherwise."""
    in_tree = Path(folder) / name
    if in_tree.is_file():
        return in_tree
    blob = blob_path(store, sha256)
    if blob.is_file():
        return blob
    raise OlmesError(
        f"{in_tree} (SHA-256 {sha256}) is not in the store, neither there nor in {BLOBS}/; "
        f"fetch it with olmes fetch-logprobs --store {store}"
    )


def model_logprob_file(store: str | Path, model: str, task: str, request_set: str) -> Path:
    """A store model's standard log-prob file, found by the SHA-256 its score summary records."""
    folder = model_folder(store, model)
    summary = read_score_summary(folder / SCORES / summary_name(task))
    sha256 = summary["inputs"][request_set]["sha256"]
    return logprob_file(store, folder / LOGPROBS, logprob_name(task, request_set), sha256)


def ignore_blobs(store: str | Path) -> None:
    """``<store>/.gitignore`` lists ``/blobs/`` (its other lines are kept): external files stay out of git."""
    path = Path(store) / GITIGNORE
    line = IGNORED_LINE
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if line not in text.splitlines():
        write_text_atomic(path, text + ("" if not text or text.endswith("\n") else "\n") + line + "\n")


def check_host(host: object, where: str) -> str:
    """``host`` when it is a place log-prob files can be fetched from: an http(s):// or file:// URL
    prefix, or a folder path."""
    scheme = host.split("://", 1)[0].lower() if isinstance(host, str) and "://" in host else None
    if not isinstance(host, str) or not host.strip() or (scheme is not None and scheme not in HOST_SCHEMES):
        raise OlmesError(
            f"{where}: log-prob host {host!r} is neither an http://, https:// or file:// URL prefix "
            "nor a folder path"
        )
    return host


def host_url(host: str, base: Path) -> str:
    """The URL prefix (ending in /) of a host; a folder path is taken relative to ``base``."""
    url = host if "://" in host else (base / host).resolve().as_uri()
    return url if url.endswith("/") else url + "/"
