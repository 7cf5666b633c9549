"""The OLMES paper's 40 reported models on the leaderboard: ``olmes tables --reported`` on the committed
store, the site built from those tables, and the site in a real headless Chromium.

Every expected number is read from the paper data files (``olmes/tables/paper_data/``), never written
here. Screenshots go to ``artifacts/screenshots/`` (or ``$OLMES_SCREENSHOT_DIR``), as in test_site.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import typing
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape

from olmes.cli.main import main
from olmes.core.records import LeaderboardRow, LeaderboardTask
from olmes.core.resources import file_sha256
from olmes.core.tasks import TASKS
from olmes.tables.reported import (
    DAGGER,
    PAPER_DATA,
    PAPER_MODELS,
    PAPER_SOURCE,
    REPORTED_TABLE,
    reported_models,
)
from tests.helpers import watched

REPO = Path(__file__).resolve().parents[1]
STORE = REPO / "leaderboard"
SCREENSHOTS = Path(os.environ.get("OLMES_SCREENSHOT_DIR", REPO / "artifacts/screenshots"))
LEADERBOARD_FILES = {"leaderboard.csv", "leaderboard.json", "leaderboard.tex", "index.json"}
WITH_PAPER_MODELS = (
    "table3_normalizations", "table6_cf_mcf", "table7_cf_mcf", "table9_olmes_normalization",
    "table10_normalizations", "table11_normalizations", "table12_normalizations",
)  # fmt: skip
"""The tables that add the paper's models with --reported (tests/test_paper_figures.py checks them)."""


def _csv_rows(name: str) -> list[dict[str, str]]:
    with (PAPER_DATA / f"{name}.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The store's tables without and with ``--reported``, and the site built from the latter."""
    root = tmp_path_factory.mktemp("reported")
    plain, reported, site = root / "plain", root / "reported", root / "site"
    assert main(["tables", "--store", str(STORE), "--out", str(plain)]) == 0
    assert main(["tables", "--store", str(STORE), "--reported", "--out", str(reported)]) == 0
    assert main(["site", "--store", str(STORE), "--tables", str(reported), "--out", str(site)]) == 0
    return {"plain": plain, "reported": reported, "site": site}


def _records(folder: Path) -> list[dict]:
    return json.loads((folder / "leaderboard.json").read_text(encoding="utf-8"))["records"]


# -- the data as typed records -----------------------------------------------------------------------


def test_reported_models_are_table13_as_printed():
    rows = _csv_rows(REPORTED_TABLE)
    models = reported_models()
    assert [model.name for model in models] == [row["model"] for row in rows] and len(models) == 40
    assert set(PAPER_MODELS) == {model.name for model in models}
    for model, row in zip(models, rows, strict=True):
        for task in TASKS:
            printed = model.scores[task]
            assert f"{printed.value:.1f}{DAGGER if printed.dagger else ''}" == row[task]
        cells = [model.scores[task].value for task in TASKS]
        assert abs(sum(cells) / len(cells) - model.average.value) <= 0.1, model.name  # the paper's own check
    assert sum(model.in_table4 for model in models) == 15


# -- olmes tables --reported ---------------------------------------------------------------------------


def test_reported_rows_join_the_leaderboard_labeled(built):
    records = _records(built["reported"])
    kinds = [record["kind"] for record in records]
    assert len(records) == 42 and kinds.count("evaluated") == 2 and kinds.count("reported") == 40
    reported = [record for record in records if record["kind"] == "reported"]
    assert {record["source"] for record in reported} == {PAPER_SOURCE}
    for record in records:  # every field of the record types, in their order
        assert list(record) == list(typing.get_type_hints(LeaderboardRow))
        assert all(
            list(cell) == list(typing.get_type_hints(LeaderboardTask)) for cell in record["tasks"].values()
        )
    assert {record["model"] for record in reported} == set(PAPER_MODELS)
    for record in reported:
        assert record["average_stderr"] is None and not record["partial"]
        for cell in record["tasks"].values():
            assert cell["stderr"] is None and cell["statistically_tied_with"] == [] and cell["n"] is None
            assert cell["formulation"] == ("mcf" if cell["dagger"] else "cf")
    # ties come from the paired bootstrap of evaluated models only: none names a reported row
    names = {record["model"] for record in reported}
    for record in records:
        for cell in record["tasks"].values():
            assert not names & set(cell["statistically_tied_with"] if cell else [])
    # one ranking over both kinds, by average
    assert [record["rank"] for record in records] == list(range(1, 43))
    averages = [record["average"] for record in records]
    assert averages == sorted(averages, reverse=True)


def test_reported_cells_of_the_csv_are_the_papers(built):
    with (built["reported"] / "leaderboard.csv").open(encoding="utf-8", newline="") as handle:
        shown = {row["Model"]: row for row in csv.DictReader(handle)}
    assert len(shown) == 42
    for row in _csv_rows(REPORTED_TABLE):
        line = shown[row["model"]]
        assert line["Kind"] == "reported" and line["Source"] == PAPER_SOURCE and line["s.e."] == "—"
        assert line["Average"] == row["average"]
        assert [line[spec.display_name] for spec in TASKS.values()] == [row[task] for task in TASKS]
    assert {shown[name]["Kind"] for name in shown if name not in PAPER_MODELS} == {"evaluated"}
    latex = (built["reported"] / "leaderboard.tex").read_text(encoding="utf-8")
    assert latex.count(r"\\") == 43 and "reported" in latex


def test_index_records_the_paper_data_read(built):
    index = json.loads((built["reported"] / "index.json").read_text(encoding="utf-8"))
    path = PAPER_DATA / f"{REPORTED_TABLE}.csv"
    assert index["reported"]["sha256"] == file_sha256(path) and index["reported"]["source"] == PAPER_SOURCE


def test_without_the_flag_nothing_changes(built):
    plain, reported = built["plain"], built["reported"]
    names = {path.name for path in plain.iterdir()}
    assert names == {path.name for path in reported.iterdir()}
    with_paper = {f"{key}.{ext}" for key in WITH_PAPER_MODELS for ext in ("csv", "json", "tex")}
    with_paper |= {"figure2_cf_vs_mcf.csv", "figure2_cf_vs_mcf.json"}
    for name in sorted(names - LEADERBOARD_FILES - with_paper):
        assert (plain / name).read_bytes() == (reported / name).read_bytes(), name
    for key in WITH_PAPER_MODELS:  # the evaluated part unchanged: its groups and records
        before, after = (
            json.loads((folder / f"{key}.json").read_text(encoding="utf-8"))
            for folder in built.values()
            if folder.name != "site"
        )
        assert [g["rows"] for g in after["groups"] if not g["reported"]] == [
            g["rows"] for g in before["groups"]
        ]
        assert [
            r
            for r in after["records"]
            if r.get("kind") != "reported" and r.get("over", "evaluated") == "evaluated"
        ] == before["records"], key
    before, after = (
        json.loads((folder / "figure2_cf_vs_mcf.json").read_text(encoding="utf-8"))["rows"]
        for folder in (plain, reported)
    )
    assert [row for row in after if row["kind"] == "evaluated"] == before
    index = json.loads((reported / "index.json").read_text(encoding="utf-8"))
    del index["reported"]
    assert json.loads((plain / "index.json").read_text(encoding="utf-8")) == index
    # the plain leaderboard is the evaluated rows alone, with no kind, source or paper text
    evaluated = [record for record in _records(reported) if record["kind"] == "evaluated"]
    for record in evaluated:
        del record["kind"], record["source"]
    plain_records = _records(plain)
    assert [record["rank"] for record in plain_records] == [1, 2]
    for record in evaluated:  # ranks are of the whole table; the averages' intervals are the same draws
        plain_record = plain_records[[r["model"] for r in plain_records].index(record["model"])]
        record.update({key: plain_record[key] for key in ("rank", "rank_low", "rank_high", "tie_group")})
    assert plain_records == evaluated
    for name in ("leaderboard.csv", "leaderboard.tex", "leaderboard.json"):
        text = (plain / name).read_text(encoding="utf-8").replace('"reported": false', "")  # a group's flag
        assert "Kind" not in text and "reported" not in text and "arXiv" not in text, name


# -- the site -----------------------------------------------------------------------------------------


class _LeaderboardRows(HTMLParser):
    """The rows of the site's leaderboard table: kind, model link, badge and each task cell's text."""

    def __init__(self):
        super().__init__()
        self.rows: list[dict] = []
        self._in_table = False
        self._field: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and attrs.get("id") == "leaderboard":
            self._in_table = True
        if not self._in_table:
            return
        if tag == "tr" and "data-kind" in attrs:
            self.rows.append(
                {"kind": attrs["data-kind"], "name": "", "cells": {}, "badges": [], "href": None}
            )
        elif self.rows and tag == "a" and self.rows[-1]["href"] is None:
            self.rows[-1]["href"], self._field = attrs["href"], "name"
        elif self.rows and tag == "td" and "data-task" in attrs:
            self._field = attrs["data-task"]
            self.rows[-1]["cells"][self._field] = ""
        elif self.rows and tag == "span" and "badge" in attrs.get("class", ""):
            self.rows[-1]["badges"].append(attrs.get("title", ""))

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_table = False
        if tag in ("a", "td"):
            self._field = None

    def handle_data(self, data):
        if self._field == "name":
            self.rows[-1]["name"] += data.strip()
        elif self._field is not None:
            self.rows[-1]["cells"][self._field] += data.strip()


def _site_rows(site: Path) -> list[dict]:
    parser = _LeaderboardRows()
    parser.feed((site / "index.html").read_text(encoding="utf-8"))
    return parser.rows


def test_every_reported_cell_on_the_site_is_the_papers(built):
    rows = _site_rows(built["site"])
    assert len(rows) == 42 and [row["kind"] for row in rows].count("reported") == 40
    by_name = {row["name"]: row for row in rows if row["kind"] == "reported"}
    for paper in _csv_rows(REPORTED_TABLE):
        row = by_name[paper["model"]]
        assert row["cells"] == {task: paper[task] for task in TASKS}, paper["model"]
        assert len(row["badges"]) == 1 and "arXiv:2406.08446v2" in row["badges"][0]
        assert re.fullmatch(r"reported/[A-Za-z0-9._-]+\.html", row["href"]), row["href"]
        assert (built["site"] / row["href"]).is_file()
    download = json.loads((built["site"] / "downloads/leaderboard.json").read_text(encoding="utf-8"))
    assert [model["kind"] for model in download["models"]] == [row["kind"] for row in rows]
    with (built["site"] / "downloads/leaderboard.csv").open(encoding="utf-8", newline="") as handle:
        assert [line["kind"] for line in csv.DictReader(handle)] == [row["kind"] for row in rows]
    for row in rows:
        if row["kind"] == "evaluated":
            # an evaluated row's one badge is its provenance level (issue 37), never "reported"
            assert [badge.split(":")[0] for badge in row["badges"]] in ([], ["reproduced"], ["submitted"])
            assert row["href"].startswith("models/")
            assert all("±" in text for text in row["cells"].values())  # evaluated cells keep their s.e.


def _page_table(page: str, key: str) -> list[list[str]] | None:
    """The rows of the table in ``<figure id=key>`` of a reported model's page (cells as text)."""
    match = re.search(rf'<figure class="table-figure" id="{key}">(.*?)</figure>', page, re.S)
    if match is None:
        return None
    body = match.group(1).split("<tbody>", 1)[1]
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def test_reported_page_shows_tables_6_7_as_printed(built):
    site = built["site"]
    cf_mcf = _csv_rows("table6_7_cf_mcf")
    listed = {row["model"] for row in cf_mcf}
    assert len(listed) == 15
    for model in sorted(listed):
        page = (site / "reported" / f"{model}.html").read_text(encoding="utf-8")
        expected = [
            [TASKS[row["task"]].display_name, row["cf"], row["mcf"]]
            for row in cf_mcf
            if row["model"] == model
        ]
        assert _page_table(page, "table6_7_cf_mcf") == expected, model
        table13 = next(row for row in _csv_rows(REPORTED_TABLE) if row["model"] == model)
        assert _page_table(page, REPORTED_TABLE) == [[table13[task] for task in TASKS] + [table13["average"]]]
    # a model the paper leaves out of Tables 5-12 gets its Table 13 row and nothing else
    other = next(name for name in PAPER_MODELS if name not in listed)
    page = (site / "reported" / f"{other}.html").read_text(encoding="utf-8")
    assert _page_table(page, REPORTED_TABLE) is not None
    for key in ("table6_7_cf_mcf", "table7_averages", "table9_12_normalizations", "table5_variants"):
        assert _page_table(page, key) is None, key


def test_reported_model_names_are_escaped_and_slugged(built, tmp_path):
    """A reported row's name is text for the HTML: a hostile one (in a doctored tables folder) is
    escaped on the leaderboard and its page, and its page's file name is a safe slug."""
    hostile = '<img src=x onerror="window.__pwned = 1">/../../x'
    tables = tmp_path / "tables"
    shutil.copytree(built["reported"], tables)
    document = json.loads((tables / "leaderboard.json").read_text(encoding="utf-8"))
    row = next(record for record in document["records"] if record["model"] == "Pythia-1B")
    row["model"] = row["display_name"] = hostile
    (tables / "leaderboard.json").write_text(json.dumps(document), encoding="utf-8")
    site = tmp_path / "site"
    assert main(["site", "--store", str(STORE), "--tables", str(tables), "--out", str(site)]) == 0
    pages = sorted((site / "reported").iterdir())
    assert len(pages) == 40 and all(re.fullmatch(r"[A-Za-z0-9._-]+\.html", page.name) for page in pages)
    assert not (tmp_path / "x.html").exists()
    for page in (site / "index.html", *pages):
        text = page.read_text(encoding="utf-8")
        assert "<img src=x" not in text, page
    assert any(escape(hostile) in page.read_text(encoding="utf-8") for page in pages)


# -- in a real browser --------------------------------------------------------------------------------


def _visible_rows(page) -> int:
    return page.locator("#leaderboard tbody tr:visible").count()


def test_leaderboard_in_chromium_mixes_shows_and_hides_reported_rows(built, browser):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with watched(browser) as w:
        page = w.goto((built["site"] / "index.html").as_uri())
        assert _visible_rows(page) == 42
        reported = page.locator("#leaderboard tr.is-reported")
        assert (
            reported.count() == 40
            and page.locator("#leaderboard tr.is-reported .badge-reported").count() == 40
        )
        assert page.locator("#leaderboard tr:not(.is-reported) .badge-reported").count() == 0
        assert "arXiv:2406.08446v2" in reported.first.locator(".badge-reported").get_attribute("title")
        # reported rows look different from evaluated ones
        colors = page.eval_on_selector_all(
            "#leaderboard tbody tr", "rows => rows.map(r => getComputedStyle(r.children[2]).backgroundColor)"
        )
        kinds = page.eval_on_selector_all("#leaderboard tbody tr", "rows => rows.map(r => r.dataset.kind)")
        assert {c for c, k in zip(colors, kinds, strict=True) if k == "reported"}.isdisjoint(
            {c for c, k in zip(colors, kinds, strict=True) if k == "evaluated"}
        )
        assert "reported" in page.locator(".legend .badge-reported").inner_text().lower()
        page.screenshot(path=str(SCREENSHOTS / "leaderboard-reported-shown.png"), full_page=True)

        # sorting by a task puts both kinds in one order
        headers = page.locator("#leaderboard thead th")
        names = [headers.nth(k).inner_text() for k in range(headers.count())]
        column = next(k for k, name in enumerate(names) if "BoolQ" in name)
        headers.nth(column).locator("button").click()
        order = page.eval_on_selector_all(
            "#leaderboard tbody tr",
            f"rows => rows.map(r => [r.dataset.kind, parseFloat(r.children[{column}].dataset.sort)])",
        )
        values = [value for _, value in order]
        assert values == sorted(values, reverse=True) and len(values) == 42
        kinds_in_order = [kind for kind, _ in order]
        assert kinds_in_order.index("evaluated") > 0 and kinds_in_order[-1] == "reported"  # interleaved

        page.uncheck("#show-reported")
        assert _visible_rows(page) == 2
        assert page.locator("#leaderboard tbody tr:visible.is-reported").count() == 0
        page.screenshot(path=str(SCREENSHOTS / "leaderboard-reported-hidden.png"), full_page=True)
        page.fill("#model-filter", "smol")
        assert _visible_rows(page) == 1
        page.fill("#model-filter", "")
        page.check("#show-reported")
        assert _visible_rows(page) == 42

        page.locator("#leaderboard tr.is-reported a", has_text="Pythia-1B").first.click()
        page.wait_for_load_state("load")
        assert page.url.endswith("/reported/Pythia-1B.html")
        assert page.locator("#table6_7_cf_mcf tbody tr").count() == 10
        page.screenshot(path=str(SCREENSHOTS / "reported-model-Pythia-1B.png"), full_page=True)
        assert w.errors == [] and w.blocked == []
    for name in ("leaderboard-reported-shown", "leaderboard-reported-hidden", "reported-model-Pythia-1B"):
        assert (SCREENSHOTS / f"{name}.png").stat().st_size > 10_000
