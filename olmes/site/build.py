"""Build the static leaderboard site: one call, ``build_site(...)``, writes every page under ``out``.

The site is plain files with relative links: it works opened from disk (``file://``) and served by
GitHub Pages, and loads nothing from another host (the vega files are shipped in ``static/``, the
instance data is a ``<script>`` file per task, since browsers refuse ``fetch`` on ``file://``).
All templates autoescape; dataset text reaches the page only through escaped HTML or, in the
instance browser, through ``textContent``. Every page is one of :data:`olmes.site.registry.PAGES`
(the navigation's, and a page per model, reported model and task), written by one loop: its template
rendered with its view and the frame every page shares; how values are written into a page, by
:mod:`olmes.site.filters`. The site formats the tables it is given (``olmes tables --out``) and
computes none.

The site is built in a temporary folder beside ``out`` and swapped in at the end, so a failed
build leaves the previous site untouched and a finished one has no stale pages.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from olmes import __version__
from olmes.core.atomic import atomic_dir
from olmes.core.outputs import check_own_folder
from olmes.core.records import ReproductionReport
from olmes.site import nav_views
from olmes.site.browser_files import MANIFEST, DataFiles, previous_data_files
from olmes.site.downloads import leaderboard_csv, leaderboard_json
from olmes.site.filters import FILTERS
from olmes.site.generative import GenerativeSite
from olmes.site.inputs import (
    load_generation_instances,
    load_generation_requests,
    load_requests,
    load_site_scores,
    read_reproduction,
)
from olmes.site.nav_views import SiteInputs
from olmes.site.pages import SiteData, task_facts
from olmes.site.predictions import BrowserData
from olmes.site.registry import navigation, site_pages
from olmes.site.writer import SiteWriter
from olmes.tables.render import DAGGER, MISSING, PARTIAL_MARK

MARKER = ".olmes-site"
STATIC_FILES = (
    "style.css",
    "site.js",
    "browser.js",
    "generative.js",
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
    env.globals.update(  # how values are written, the same on every page: no registry, no data
        version=__version__,
        DAGGER=DAGGER,
        PARTIAL_MARK=PARTIAL_MARK,
        MISSING=MISSING,
        TABLE_OPEN_ROWS=nav_views.TABLE_OPEN_ROWS,
    )
    return env


def build_site(
    scores_paths: Iterable[str | Path],
    out: str | Path,
    tables_dir: str | Path,
    request_paths: Iterable[str | Path] = (),
    models_file: str | Path | list | None = None,
    title: str = "OLMES leaderboard",
    reproduction: Iterable[str | Path] = (),
    generative: Iterable[str | Path] | None = None,
) -> SiteBuild:
    """Build the whole site into ``out`` (replaced as a whole) from the summaries and the tables
    ``olmes tables`` built from them in ``tables_dir``; return the files written. The instance browser's
    per-model data files of an olmes site already in ``out`` are reused where their sources are
    unchanged (its manifest, ``olmes-manifest.json``, records them). The OLMES v0.2 generative tasks'
    pages come with the tables' ``generative_scores``: their summaries are read where the tables'
    index records them, or from ``generative`` (files or folders, ``olmes site --generative``)."""
    out = Path(out)
    check_own_folder(out, (MARKER,), "an olmes site")  # the rule of olmes tables --out too
    data_files = DataFiles(out, previous_data_files(out) if (out / MARKER).is_file() else {})
    with atomic_dir(out, "building") as staging:
        written = _build_into(
            staging,
            data_files,
            list(scores_paths),
            Path(tables_dir),
            list(request_paths),
            models_file,
            title,
            [read_reproduction(path) for path in reproduction],
            None if generative is None else list(generative),
        )
    return SiteBuild([out / path.relative_to(staging) for path in written], data_files.reused)


@dataclass
class SiteBuild:
    """What ``build_site`` wrote: every file, and which data files it copied from the previous site."""

    files: list[Path]
    reused: list[str]  # relative to the site


def _build_into(
    root: Path,
    data_files: DataFiles,
    scores_paths,
    tables_dir: Path,
    request_paths,
    models_file,
    title,
    reproduction: list[ReproductionReport],
    generative_paths: list | None = None,
) -> list[Path]:
    tables_out = root / "downloads" / "tables"
    scores, tables = load_site_scores(scores_paths, models_file, tables_dir)
    _copy_tables(tables_dir, tables_out)
    requests, instances = load_requests(request_paths)
    data = SiteData(scores, tables, requests, instances)
    pages = {model.name: model.page for model in data.models}
    generative = GenerativeSite(
        tables,
        load_generation_requests(request_paths),
        pages,
        generative_paths,
        load_generation_instances(request_paths),
    )
    inputs = SiteInputs(data, reproduction, data_files, BrowserData(data), generative)
    pages = site_pages(inputs)
    frame = {
        "site_title": title,
        "nav": navigation(pages),
        "tasks": data.tasks,
        "task_facts": {task: task_facts(task) for task in data.tasks},
    }
    out = SiteWriter(root, environment(), frame)
    for page in pages:
        out.page(page.path, page.template, **page.view(inputs, out))
    out.file(MANIFEST, data_files.manifest())
    out.file("downloads/leaderboard.csv", leaderboard_csv(data))
    out.file("downloads/leaderboard.json", leaderboard_json(data))
    out.written += _copy_static(root)
    out.file(".nojekyll", "")
    out.file(MARKER, f"built by olmes {__version__}\n")
    return out.written + sorted(p for p in tables_out.rglob("*") if p.is_file())


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
