"""The instance browser's files: each task's instances in script pieces, and one data file per model
scored on it, copied from the previous site where its manifest (``olmes-manifest.json``) shows it was
made from the same sources. Browsers refuse ``fetch`` on ``file://``, so every data file is a script
that a task page loads only when a reader picks its model."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from olmes import __version__
from olmes.core.errors import OlmesError
from olmes.core.methods import METHODS
from olmes.core.records import (
    SITE_MANIFEST_FORMAT,
    SiteDataFile,
    SiteDataSource,
)
from olmes.site.predictions import BrowserData
from olmes.site.task_view import browser_models
from olmes.site.writer import SiteWriter

MANIFEST = "olmes-manifest.json"  # what the per-model data files are made from (SiteManifest)
BROWSER_PIECE_BYTES = 500_000
"""About the size of each instances script after the first."""
BROWSER_FIRST_PIECE_BYTES = 100_000
"""About the size of the first instances script, all of the instances a task page loads before its first
screen (MMLU: about 150 instances, 15 screens); the others load after it."""
BROWSER_DATA_FORMAT = 1
"""The layout of the browser's data files: a change that alters them for the same inputs bumps it."""


class DataFiles:
    """The per-model data files of the instance browser: each made anew, or copied from the previous
    site when the manifest there shows it was made from the same sources (and it is intact)."""

    def __init__(self, previous_root: Path, previous: dict[str, SiteDataFile]):
        self.previous_root, self.previous = previous_root, previous
        self.entries: dict[str, SiteDataFile] = {}
        self.reused: list[str] = []

    def write(self, out: SiteWriter, relative: str, source: SiteDataSource, make) -> None:
        """``relative`` in ``out``: the previous site's copy when its sources are ``source``, else
        ``make()``; recorded for the manifest."""
        content = self._previous_copy(relative, source)
        if content is not None:
            target = out.root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            out.written.append(target)
            self.reused.append(relative)
        else:
            text = make()
            out.file(relative, text)
            content = text.encode()
        self.entries[relative] = {"sha256": hashlib.sha256(content).hexdigest(), "source": source}

    def _previous_copy(self, relative: str, source: SiteDataSource) -> bytes | None:
        """The previous site's file at ``relative`` when its manifest entry's sources are ``source``,
        its bytes have the SHA-256 the entry records and it is a data file of the model (no script:
        :func:`is_model_script`).

        What this trusts: the previous site's manifest. Whoever can write the previous site folder can
        edit a data file's numbers (which choice each method picked on each instance, the scored
        ranges, the near ties) and its manifest entry's SHA-256, and the next build keeps them for as
        long as that model's predictions, the task's instance file, the olmes version and the data
        format are unchanged; checking them against the predictions would cost what making the file
        costs. Nothing else is carried over: every page, table, chart and download is made anew, and
        a build into an empty folder trusts nothing."""
        old, path = self.previous.get(relative), self.previous_root / relative
        if old is None or old["source"] != source or not path.is_file():
            return None
        content = path.read_bytes()
        intact = hashlib.sha256(content).hexdigest() == old["sha256"]
        return content if intact and is_model_script(content, source["model"]) else None

    def manifest(self) -> str:
        document = SITE_MANIFEST_FORMAT.stamped({"olmes_version": __version__, "data_files": self.entries})
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def previous_data_files(site: Path) -> dict[str, SiteDataFile]:
    """The data files the manifest of the olmes site ``site`` lists; none when its manifest is missing,
    of another format or unreadable (all are made anew)."""
    path = site / MANIFEST
    if not path.is_file():
        return {}
    try:
        return SITE_MANIFEST_FORMAT.read(path)["data_files"]
    except OlmesError:
        return {}


def write_instance_files(out: SiteWriter, task: str, instances: list[dict]) -> list[str]:
    """The task's instances as scripts under ``tasks/<task>/``; their paths relative to the task page."""
    files = []
    for number, text in enumerate(instance_scripts(instances)):
        files.append(f"{task}/instances-{number}.js")
        out.file(f"tasks/{files[-1]}", text)
    return files


def write_model_files(
    out: SiteWriter, browser_data: BrowserData, data_files: DataFiles, task: str
) -> list[dict]:
    """The data file of each model scored on the task; the models as the picker lists them, each with
    its ``file`` (relative to the task page)."""
    models = browser_models(browser_data.data, task)
    for model in models:
        model["file"] = f"{task}/models/{model.pop('slug')}.js"
        source: SiteDataSource = {
            **browser_data.model_source(model["name"], task),
            "olmes_version": __version__,
            "data_format": BROWSER_DATA_FORMAT,
        }
        data_files.write(
            out,
            f"tasks/{model['file']}",
            source,
            lambda name=model["name"]: model_script(name, browser_data.model_data(name, task)),
        )
    return models


def instance_scripts(
    instances: list[dict],
    piece_bytes: int = BROWSER_PIECE_BYTES,
    first_piece_bytes: int = BROWSER_FIRST_PIECE_BYTES,
) -> list[str]:
    """A task's instances as scripts of about ``first_piece_bytes`` (the first) and ``piece_bytes`` (the
    others) each, in order; script ``n`` runs ``OLMES_BROWSER.addInstances(n, [...])``. MMLU's 14,042
    instances are several MB: a page draws its first screen from the first piece and loads the others
    after."""
    pieces, piece, size = [], [], 0
    for item in instances:
        text = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
        if piece and size + len(text.encode()) > (piece_bytes if pieces else first_piece_bytes):
            pieces.append(piece)
            piece, size = [], 0
        piece.append(text)
        size += len(text.encode()) + 1
    pieces.append(piece)
    return [f"OLMES_BROWSER.addInstances({n},[{','.join(piece)}]);\n" for n, piece in enumerate(pieces)]


def model_script(name: str, picks: dict) -> str:
    """One model's data file: ``OLMES_BROWSER.addModel(name, picks)`` (``BrowserData.model_data``)."""
    return f"{_model_call(name)}{json.dumps(picks, separators=(',', ':'))});\n"


def _model_call(name: str) -> str:
    """What a model's data file starts with: the call and its first argument, the model's name."""
    return f"OLMES_BROWSER.addModel({json.dumps(name, ensure_ascii=False)},"


_INTS = rb"\[[-\d,]*\]"  # digits, minus signs and commas only
_RANGE = rb"\[\d+,\d+\]"
_METHOD_KEY = b"(?:" + b"|".join(re.escape(json.dumps(key).encode()) for key in METHODS) + b")"
_BY_METHOD = rb"\{(?:%s:%s(?:,%s:%s)*)?\}" % (_METHOD_KEY, _INTS, _METHOD_KEY, _INTS)
_PICKS = re.compile(
    rb'\{"ranges":\[(?:%s(?:,%s)*)?\],"predictions":%s,"near_ties":%s\}\);\n'
    % (_RANGE, _RANGE, _BY_METHOD, _BY_METHOD)
)
"""The picks of a model's data file, the call's end included: numbers under the keys model_script
writes, nothing a browser could run."""


def is_model_script(content: bytes, name: str) -> bool:
    """Whether ``content`` has the form of ``model_script(name, picks)``: the model's own name, then
    picks made of numbers only (checked before a data file is copied from the previous site, which
    its pages load as a script)."""
    head = _model_call(name).encode()
    return content.startswith(head) and _PICKS.fullmatch(content, len(head)) is not None
