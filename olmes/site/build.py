"""Build the static leaderboard site: one call, ``build_site(...)``, writes every page under ``out``.

The site is plain files with relative links: it works opened from disk (``file://``) and served by
GitHub Pages, and loads nothing from another host (the vega files are shipped in ``static/``, the
instance data is a ``<script>`` file per task, since browsers refuse ``fetch`` on ``file://``).
All templates autoescape; dataset text reaches the page only through escaped HTML or, in the
instance browser, through ``textContent``. The pages of the navigation are those of
:data:`olmes.site.registry.PAGES`; what each page shows is gathered by its view (the registry's,
:mod:`olmes.site.model_view`, :mod:`olmes.site.task_view`); how values are written into a page, by
:mod:`olmes.site.filters`.

The site is built in a temporary folder beside ``out`` and swapped in at the end, so a failed
build leaves the previous site untouched and a finished one has no stale pages.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from olmes import __version__
from olmes.core import numerics
from olmes.core.atomic import atomic_dir
from olmes.core.errors import OlmesError
from olmes.core.identities import identity_line
from olmes.core.methods import METHODS
from olmes.core.outputs import check_own_folder
from olmes.core.records import (
    SITE_MANIFEST_FORMAT,
    ReproductionReport,
    SiteDataFile,
    SiteDataSource,
    SiteManifest,
    read_format,
)
from olmes.core.tasks import TASKS
from olmes.scoring.predictions import NEAR_TIE_NATS
from olmes.site import charts, registry
from olmes.site.downloads import leaderboard_csv, leaderboard_json
from olmes.site.filters import FILTERS
from olmes.site.inputs import load_requests, load_site_scores, read_reproduction
from olmes.site.model_view import model_view
from olmes.site.pages import SiteData, task_facts
from olmes.site.predictions import BrowserData
from olmes.site.registry import SiteInputs, site_pages
from olmes.site.reported import reported_view
from olmes.site.task_view import browser_models, browser_setup, task_methods, task_view
from olmes.site.writer import SiteWriter
from olmes.tables.render import DAGGER, MISSING, PARTIAL_MARK
from olmes.tables.reported import PAPER_SOURCE

MARKER = ".olmes-site"
MANIFEST = "olmes-manifest.json"  # what the per-model data files are made from (SiteManifest)
STATIC_FILES = (
    "style.css",
    "site.js",
    "browser.js",
    "vega.min.js",
    "vega-lite.min.js",
    "vega-embed.min.js",
    "VEGA-LICENSES.txt",
)


def environment():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("olmes.site", "templates"),
        autoescape=True,  # every template: dataset text is untrusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    env.globals.update(
        version=__version__,
        DAGGER=DAGGER,
        PARTIAL_MARK=PARTIAL_MARK,
        MISSING=MISSING,
        METHODS=METHODS,
        NORMALIZATIONS=[method for method in METHODS.values() if method.normalization],
        NEAR_TIE_NATS=NEAR_TIE_NATS,
        ERROR_MODEL={"token_nats": numerics.TOKEN_NATS, "relative": numerics.RELATIVE},
        TASKS=TASKS,
        tasks_by_norm=_tasks_by_norm(),
        PAPER_SOURCE=PAPER_SOURCE,
        TOP_MODELS=charts.TOP_MODELS,
        TABLE_OPEN_ROWS=registry.TABLE_OPEN_ROWS,
    )
    return env


def _tasks_by_norm() -> dict[str, list[str]]:
    """Display names of the registry's tasks per recommended normalization (the methods page)."""
    groups: dict[str, list[str]] = {}
    for task in TASKS.values():
        groups.setdefault(task.recommended_norm, []).append(task.display_name)
    return groups


def build_site(
    scores_paths: Iterable[str | Path],
    out: str | Path,
    tables_dir: str | Path | None = None,
    request_paths: Iterable[str | Path] = (),
    models_file: str | Path | list | None = None,
    title: str = "OLMES leaderboard",
    reproduction: Iterable[str | Path] = (),
) -> SiteBuild:
    """Build the whole site into ``out`` (replaced as a whole); return the files written. The
    instance browser's per-model data files of an olmes site already in ``out`` are reused where
    their sources are unchanged (its manifest, ``olmes-manifest.json``, records them)."""
    out = Path(out)
    check_own_folder(out, (MARKER,), "an olmes site")  # the rule of olmes tables --out too
    data_files = _DataFiles(out, _previous_data_files(out))
    with atomic_dir(out, "building") as staging:
        written = _build_into(
            staging,
            data_files,
            list(scores_paths),
            tables_dir,
            list(request_paths),
            models_file,
            title,
            [read_reproduction(path) for path in reproduction],
        )
    return SiteBuild([out / path.relative_to(staging) for path in written], data_files.reused)


@dataclass
class SiteBuild:
    """What ``build_site`` wrote: every file, and which data files it copied from the previous site."""

    files: list[Path]
    reused: list[str]  # relative to the site


def _build_into(
    root: Path,
    data_files: _DataFiles,
    scores_paths,
    tables_dir,
    request_paths,
    models_file,
    title,
    reproduction: list[ReproductionReport],
) -> list[Path]:
    tables_out = root / "downloads" / "tables"
    scores, tables = load_site_scores(
        scores_paths, models_file, Path(tables_dir) if tables_dir else None, tables_out
    )
    if tables_dir is not None:
        _copy_tables(Path(tables_dir), tables_out)
    requests, instances = load_requests(request_paths)
    data = SiteData(scores, tables, requests, instances)
    inputs = SiteInputs(data, reproduction)
    pages = site_pages(inputs)
    common = {
        "site_title": title,
        "nav": [(page.path, page.title) for page in pages],  # the navigation
        "reproduction": reproduction,
        "tasks": data.tasks,
        "models": data.models,
        "task_facts": {task: task_facts(task) for task in data.tasks},
        "tables": tables,
    }
    env = environment()
    env.filters["display_name"] = lambda name: data.by_name[name].display_name  # a model's, by its name
    identities = {info.name: info.identity for info in data.scores.models}  # None where not recorded
    env.filters["identity"] = lambda name: identity_line(identities.get(name))  # what it is, one line
    levels = {info.name: info.provenance for info in data.scores.models}  # None: not from a store
    env.filters["provenance"] = lambda name: levels.get(name)
    out = SiteWriter(root, env, common)
    for page in pages:
        out.page(page.path, page.template, **page.view(inputs, out))
    for model in data.models:
        out.page(
            f"models/{model.slug}.html", "model.html", **model_view(data, model, identities.get(model.name))
        )
    for model in data.reported_models:
        out.page(model.page, "reported.html", **reported_view(model))
    _write_task_pages(out, data, data_files)
    out.file(MANIFEST, data_files.manifest())
    out.file("downloads/leaderboard.csv", leaderboard_csv(data))
    out.file("downloads/leaderboard.json", leaderboard_json(data))
    out.written += _copy_static(root)
    out.file(".nojekyll", "")
    out.file(MARKER, f"built by olmes {__version__}\n")
    return out.written + sorted(p for p in tables_out.rglob("*") if p.is_file())


BROWSER_PIECE_BYTES = 500_000
"""About the size of each instances script after the first."""
BROWSER_FIRST_PIECE_BYTES = 100_000
"""About the size of the first instances script, all of the instances a task page loads before its first
screen (MMLU: about 150 instances, 15 screens); the others load after it."""
BROWSER_DATA_FORMAT = 1
"""The layout of the browser's data files: a change that alters them for the same inputs bumps it."""


class _DataFiles:
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
        document: SiteManifest = {
            "format": SITE_MANIFEST_FORMAT,
            "olmes_version": __version__,
            "data_files": self.entries,
        }
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _previous_data_files(out: Path) -> dict[str, SiteDataFile]:
    """The data files the olmes site already in ``out`` lists in its manifest; none when ``out`` holds
    no olmes site or its manifest is missing, of another format or unreadable (all are made anew)."""
    path = out / MANIFEST
    if not (out / MARKER).is_file() or not path.is_file():
        return {}
    try:
        return read_format(path, SiteManifest, SITE_MANIFEST_FORMAT, "rebuilt")["data_files"]
    except OlmesError:
        return {}


def _write_task_pages(out: SiteWriter, data: SiteData, data_files: _DataFiles) -> None:
    """Each task's page and its instance browser's data: the instances in pieces, one file per model
    (script files, since browsers refuse fetch on file://), loaded only when a reader picks the model."""
    browser_data = BrowserData(data)
    for task in data.tasks:
        instances = browser_data.instances(task)
        instance_files = []
        for number, text in enumerate(instance_scripts(instances)):
            instance_files.append(f"{task}/instances-{number}.js")
            out.file(f"tasks/{instance_files[-1]}", text)
        models = _write_model_data(out, browser_data, data_files, task)
        methods = task_methods(data, task)
        browser = browser_setup(task, methods, instances, instance_files, models)
        out.page(f"tasks/{task}.html", "task.html", **task_view(data, task, methods, browser, len(instances)))


def _write_model_data(
    out: SiteWriter, browser_data: BrowserData, data_files: _DataFiles, task: str
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


def _copy_static(root: Path) -> list[Path]:
    """The shipped CSS, scripts and chart libraries, into ``root/static``."""
    static = resources.files("olmes.site").joinpath("static")
    copied = []
    for name in STATIC_FILES:
        target = root / "static" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(static.joinpath(name).read_bytes())
        copied.append(target)
    return copied


def _copy_tables(source: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if path.is_file() and path.suffix in (".csv", ".json", ".tex"):
            shutil.copyfile(path, target / path.name)
