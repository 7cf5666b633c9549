"""Writes the site's files: pages rendered with the context they share, and the list of what was written."""

from __future__ import annotations

from pathlib import Path

from olmes.core.atomic import write_text_atomic


class SiteWriter:
    """Writes the site's files under ``root`` (pages rendered with the ``common`` context) and keeps
    the list of what it wrote."""

    def __init__(self, root: Path, env, common: dict):
        self.root, self.env, self.common = root, env, common
        self.written: list[Path] = []

    def file(self, relative: str, text: str) -> None:
        path = self.root / relative
        write_text_atomic(path, text)
        self.written.append(path)

    def page(self, relative: str, template: str, **context) -> None:
        depth = relative.count("/")
        context = {**self.common, "root": "../" * depth, "current": relative, **context}
        self.file(relative, self.env.get_template(template).render(**context))
