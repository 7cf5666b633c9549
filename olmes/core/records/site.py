"""The site's manifest: what each of its per-model data files was made from."""

from typing import TypedDict

from olmes.core.records.formats import Format


class SiteDataSource(TypedDict):
    """What one model x task data file of the site's instance browser is made from: if all of it is
    unchanged, a rebuild copies the file from the previous site (``olmes.site.build``)."""

    model: str
    task: str
    predictions_sha256: str  # as the model's score summary records it
    instances_sha256: str | None  # the task's instance file (its gold answers are checked)
    olmes_version: str
    data_format: int  # olmes.site.build.BROWSER_DATA_FORMAT


class SiteDataFile(TypedDict):
    """One data file of the site: its SHA-256 and its sources."""

    sha256: str
    source: SiteDataSource


class SiteManifest(TypedDict):
    """``olmes-manifest.json`` of a site (``olmes site``): its per-model data files by path."""

    format: str
    olmes_version: str
    data_files: dict[str, SiteDataFile]


SITE_MANIFEST_FORMAT = Format("olmes.site-manifest", SiteManifest, made_by="rebuilt")
