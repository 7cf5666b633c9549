"""The static site, built from real-format inputs and checked in a real headless Chromium.

The inputs are made the way the pipeline makes them: request files by ``olmes.requests.build`` (the real
templates, on the curated examples, with MMLU and the data loader stubbed), log-prob Parquet files
in the engine's columns with hand-chosen numbers, then ``olmes score``, ``olmes tables`` and
``olmes site`` through the CLI. Browser tests need Debian's ``/usr/bin/chromium`` and the Python
``playwright`` package (never ``playwright install``); they skip with the reason when either is
missing. Screenshots go to ``artifacts/screenshots/`` (or ``$OLMES_SCREENSHOT_DIR``).
"""

from __future__ import annotations

import dataclasses
import functools
import http.server
import json
import os
import re
import shutil
import stat
import threading
import xml.etree.ElementTree as ET
from html import escape
from pathlib import Path

import pytest

import olmes.requests.build as requests_module
from olmes.cli.main import main
from olmes.core.atomic import current_umask
from olmes.core.errors import OlmesError
from olmes.core.records import write_records
from olmes.core.tasks import TASKS
from olmes.requests.tasks import TEMPLATES, Instance
from olmes.requests.tasks.base import curated_fewshot
from olmes.site import charts, nav_views, registry
from olmes.site.filters import sort_key
from olmes.site.svg import SVG_NS, checked_svg, static_svg
from olmes.tables.render import percent
from tests.helpers import draw_charts_live, engine_logprobs, reproduction_report, run_record, watched

SCREENSHOTS = Path(
    os.environ.get("OLMES_SCREENSHOT_DIR", Path(__file__).resolve().parents[1] / "artifacts/screenshots")
)
XSS_QUESTION = "Which tag is <script>window.__pwned = 1</script> here, & why?"
XSS_CHOICE = '<img src=x onerror="window.__pwned = 2"> a <b>bold</b> choice'
MMLU_SUBJECTS = ("astronomy", "virology")


# -- inputs made like the real ones -----------------------------------------------------------------


def _instances(task) -> list[Instance]:
    if task.key == "mmlu":
        return [
            Instance(
                native_id=k,
                choices=(f"{s} answer {k}a", f"{s} answer {k}b", f"{s} answer {k}c", "none"),
                gold=k % 4,
                fields={"question": f"Question {k} about {s.replace('_', ' ')}?"},
                subject=s,
            )
            for s in MMLU_SUBJECTS
            for k in range(4)
        ]
    rows = curated_fewshot()[task.key]
    instances = [task.standardize(row, index) for index, row in enumerate(rows)]
    if task.key == "arc_challenge":
        first = instances[0]
        choices = list(first.choices)
        choices[1] = XSS_CHOICE
        instances[0] = Instance(first.native_id, tuple(choices), first.gold, {"question": XSS_QUESTION})
    return instances


def _shots(task, source, subject, other_shots=False):
    if task.key == "mmlu":
        return [
            Instance(
                native_id=k,
                choices=("w", "x", "y", "z"),
                gold=k % 4,
                fields={"question": f"Dev question {k} on {subject}?"},
                subject=subject,
            )
            for k in range(5)
        ]
    return task.curated_shots()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Requests, log-probs, scores, tables and the site, all under one temporary folder."""
    root = tmp_path_factory.mktemp("site")
    req_dir, lp_dir, score_dir, table_dir = (
        root / name for name in ("requests", "logprobs", "scores", "tables")
    )
    counts = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(requests_module, "load_instances", lambda task, source, limit: _instances(task)[:limit])
        patch.setattr(requests_module, "fewshot_instances", _shots)
        requests = {}
        for key, task in TEMPLATES.items():
            counts[key] = len(_instances(task))
            for formulation in requests_module.request_sets(task):
                rows = requests_module.build_requests(key, formulation)
                requests[key, formulation] = rows
                write_records(rows, req_dir / f"{key}.{formulation}.jsonl")
            instance_rows = requests_module.instance_rows(task, _instances(task))
            write_records(instance_rows, req_dir / f"{key}.instances.jsonl")
        for key, count in counts.items():  # the made-up instances are each task's whole standard
            patch.setitem(TASKS, key, dataclasses.replace(TASKS[key], split_size=count))
        plan = [
            ("alpha", list(TASKS), None),
            ("beta", list(TASKS), None),
            ("gamma", ["arc_challenge", "boolq"], 3),
        ]
        for seed, (model, tasks, limit) in enumerate(plan):
            for key in tasks:
                args = ["score", "--model-name", model, "--task", key]
                for formulation in requests_module.request_sets(TASKS[key]):
                    rows = requests[key, formulation]
                    if limit is not None:
                        rows = [row for row in rows if row["instance_index"] < limit]
                    path = lp_dir / model / f"{key}.{formulation}.parquet"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    engine_logprobs(rows, model, seed * 100 + len(key)).to_parquet(path, index=False)
                    Path(str(path) + ".run.json").write_text(json.dumps(run_record(model, key, formulation)))
                    args += [f"--{formulation}", str(path)]
                if limit is not None:
                    args += ["--limit", str(limit)]
                args += [
                    "--predictions",
                    str(score_dir / model / f"{key}.predictions.parquet"),
                    "--summary",
                    str(score_dir / model / f"{key}.scores.json"),
                ]
                assert main(args) == 0
        models = root / "models.yaml"
        models.write_text(
            "models:\n"
            "  - {name: alpha, display_name: Alpha-1B, series: demo, training_tokens: 2.0e12}\n"
            "  - {name: beta, display_name: Beta-1B, series: demo, training_tokens: 1.0e12}\n"
            "  - {name: gamma, display_name: Gamma (quick test)}\n"
        )
        assert (
            main(
                [
                    "tables",
                    "--scores",
                    str(score_dir),
                    "--out",
                    str(table_dir),
                    "--models",
                    str(models),
                    "--resamples",
                    "200",
                ]
            )
            == 0
        )
        site = root / "site"
        assert (
            main(
                [
                    "site",
                    "--scores",
                    str(score_dir),
                    "--tables",
                    str(table_dir),
                    "--requests",
                    str(req_dir),
                    "--out",
                    str(site),
                ]
            )
            == 0
        )
    return {
        "root": root,
        "site": site,
        "scores": score_dir,
        "tables": table_dir,
        "requests": req_dir,
        "models": models,
        "counts": counts,
    }


# -- the build, without a browser -----------------------------------------------------------------


def test_pages_and_files(built):
    site = built["site"]
    umask = current_umask()  # a web server running as another user must be able to read the site
    assert stat.S_IMODE(site.stat().st_mode) == 0o777 & ~umask
    assert stat.S_IMODE((site / "index.html").stat().st_mode) == 0o666 & ~umask
    pages = {str(p.relative_to(site)) for p in site.rglob("*.html")}
    expected = {
        "index.html",
        "normalization.html",
        "cf-vs-mcf.html",
        "mmlu.html",
        "training.html",
        "training/demo.html",
        "methods.html",
        "robustness.html",
    }
    tasks = {f"tasks/{key}.html" for key in TASKS}
    models = {"models/alpha.html", "models/beta.html", "models/gamma.html"}
    assert pages == expected | tasks | models
    for name in ("leaderboard.csv", "leaderboard.json", "tables/table4_olmes.csv", "tables/index.json"):
        assert (site / "downloads" / name).is_file(), name
    for name in (
        "vega.min.js",
        "vega-lite.min.js",
        "vega-embed.min.js",
        "style.css",
        "site.js",
        "browser.js",
    ):
        assert (site / "static" / name).stat().st_size > 0


REMOTE = re.compile(r"(?:src|href)\s*=\s*[\"']?(?:https?:)?//[^\"' >]+")


def _remote_references(site: Path) -> tuple[int, list[str]]:
    """How many of the site's own pages, styles and scripts were read, and every reference in them
    to another host."""
    read, found = 0, []
    for path in site.rglob("*"):
        chart_library = path.parent.name == "static" and path.name.startswith("vega")
        if path.suffix not in (".html", ".css", ".js") or chart_library:
            continue
        read += 1
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(site)}: {url}" for url in REMOTE.findall(text)]
    return read, found


def test_no_remote_references(built, tmp_path):
    """Nothing in the site's own pages or scripts points at another host; the check reads every page
    and finds a planted reference."""
    read, found = _remote_references(built["site"])
    assert read >= len(list(built["site"].rglob("*.html"))) > 10 and found == []
    planted = tmp_path / "site"
    shutil.copytree(built["site"], planted)
    page = planted / "index.html"
    page.write_text(
        page.read_text().replace("</head>", '<script src="https://cdn.example/x.js"></script></head>')
    )
    assert _remote_references(planted)[1] == ['index.html: src="https://cdn.example/x.js']


def test_dataset_text_is_escaped_in_html(built):
    page = (built["site"] / "tasks/arc_challenge.html").read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page  # the prompt shows it as text
    assert XSS_CHOICE in _browser_data(built["site"], "arc_challenge")["instances"][0]["c"]


def test_leaderboard_downloads(built):
    records = json.loads((built["site"] / "downloads/leaderboard.json").read_text())["models"]
    by_name = {record["model"]: record for record in records}
    assert by_name["alpha"]["tasks"]["arc_challenge"]["dagger"] is True
    assert by_name["beta"]["tasks"]["arc_challenge"]["dagger"] is False
    assert by_name["gamma"]["partial"] is True and by_name["gamma"]["average"] is None
    assert by_name["alpha"]["average"] is not None and by_name["alpha"]["rank"] in (1, 2)
    csv_text = (built["site"] / "downloads/leaderboard.csv").read_text()
    header = csv_text.splitlines()[0].split(",")
    assert header[:6] == ["rank", "model", "display_name", "partial", "average", "average_stderr"]
    assert "arc_challenge_formulation" in header


def test_the_site_shows_the_leaderboard_rows_as_they_are(built):
    """Every number, mark and order of the leaderboard is the tables' ``leaderboard`` rows: the page
    shows them, the downloads carry them under the same names, the chart's chance line is theirs."""
    rows = json.loads((built["tables"] / "leaderboard.json").read_text())["records"]
    names = {row["model"]: row["display_name"] for row in rows}
    page = (built["site"] / "index.html").read_text(encoding="utf-8")
    shown = re.findall(r"<tr data-name=.*?</tr>", page[page.index('id="leaderboard"') :], flags=re.S)
    assert len(shown) == len(rows) and [row["partial"] for row in rows] == sorted(r["partial"] for r in rows)
    for row, html in zip(rows, shown, strict=True):
        rank_and_model, average, group, *cells = html.split("<td")[1:]
        assert f'data-sort="{row["rank"] or ""}"' in rank_and_model
        assert (f"({row['rank_low']}–{row['rank_high']})" in rank_and_model) == (row["rank"] is not None)
        assert f'data-sort="{row["tie_group"] or ""}"' in group
        assert f">{escape(row['display_name'])}</a>" in rank_and_model
        assert f'data-sort="{sort_key(row["average"])}"' in average
        assert (row["average_stderr"] is not None) == (f"±{percent(row['average_stderr'])}" in average)
        assert len(cells) == len(row["tasks"])
        for cell, td in zip(row["tasks"].values(), cells, strict=True):
            if cell is None or cell["score"] is None:
                reason = "not scored" if cell is None else "CF or MCF missing"
                assert 'data-sort=""' in td and f'title="{reason}"' in td
                continue
            assert f'data-sort="{sort_key(cell["score"])}"' in td
            assert f'<span class="score">{percent(cell["score"])}</span>' in td
            accuracies = f"CF {percent(cell['cf_accuracy'])}, MCF {percent(cell['mcf_accuracy'])}"
            assert f"{accuracies}; n = {cell['n']}" in td
            assert ('class="dagger"' in td) == cell["dagger"] and ('class="pmark"' in td) == cell["partial"]
            assert ('class="tie"' in td) == bool(cell["statistically_tied_with"])
            assert all(escape(names[name]) in td for name in cell["statistically_tied_with"])
            assert ('class="flag"' in td) == bool(cell["flags"])
            assert all(escape(flag["message"]) in td for flag in cell["flags"])
            assert (cell["stderr"] is not None) == (f"±{percent(cell['stderr'])}" in td)
    assert any(c and c["statistically_tied_with"] for row in rows for c in row["tasks"].values())
    assert any(c and c["dagger"] for row in rows for c in row["tasks"].values())
    fields = ["score", "stderr", "formulation", "dagger", "partial", "cf_accuracy", "mcf_accuracy", "n"]
    fields.append("statistically_tied_with")
    download = json.loads((built["site"] / "downloads/leaderboard.json").read_text())["models"]
    assert download == [
        {
            **{key: row[key] for key in ("rank", "model", "display_name", "partial", "average")},
            "average_stderr": row["average_stderr"],
            "tasks": {
                task: None if cell is None or cell["score"] is None else {key: cell[key] for key in fields}
                for task, cell in row["tasks"].items()
            },
        }
        for row in rows
    ]
    chance = {
        round(100 * next(row["tasks"][task] for row in rows if row["tasks"][task])["chance"], 2)
        for task in rows[0]["tasks"]
    }
    figure2 = (built["site"] / "cf-vs-mcf.html").read_text(encoding="utf-8")
    assert {float(value) for value in re.findall(r'"chance":([0-9.]+)', figure2)} == chance


def test_averages_come_from_table4(built):
    records = json.loads((built["site"] / "downloads/leaderboard.json").read_text())["models"]
    table4 = json.loads((built["tables"] / "table4_olmes.json").read_text())["records"]
    expected = {r["model"]: (r["averages"]["Average"], r["average_stderr"]) for r in table4}
    assert {r["model"]: (r["average"], r["average_stderr"]) for r in records} == expected
    assert expected["alpha"][1] is not None and expected["gamma"] == (None, None)


def test_paper_tables_sort_by_the_cells_values(built):
    table = json.loads((built["tables"] / "table6_cf_mcf.json").read_text())
    page = (built["site"] / "cf-vs-mcf.html").read_text(encoding="utf-8")
    body = page[page.index('id="table6_cf_mcf"') :].split("</table>")[0]
    for values in table["values"]:
        for value in values[1:]:
            assert f'data-sort="{sort_key(value)}"' in body
    assert sort_key(None) == "" and sort_key(40) == "40" and sort_key(0.123456789) == "0.123457"


def test_model_page_shows_the_run_record(built):
    page = (built["site"] / "models/alpha.html").read_text(encoding="utf-8")
    chip = "sha256:alpha-rev-0123abcd · float32 · cpu · 1.2 s · 12,345 tokens forwarded"  # no spec
    assert chip + " · 1.50 GiB peak memory" in page
    assert "<dt>versions.torch</dt><dd><code>2.13.0</code></dd>" in page
    assert "<dt>bos_token_id</dt><dd><code></code></dd>" in page
    assert "Model identity not recorded" in page  # its run records carry none


def test_tables_of_an_older_olmes_are_refused(built, tmp_path):
    tables = tmp_path / "tables"
    shutil.copytree(built["tables"], tables)
    path = tables / "near_ties.json"
    written = json.loads(path.read_text())
    del written["values"], written["format"]  # as olmes wrote tables before both
    path.write_text(json.dumps(written))
    from olmes.site.build import build_site

    with pytest.raises(
        OlmesError, match=r"field 'values' is missing \(a olmes\.table/1 file\); re-run olmes tables"
    ):
        build_site([built["scores"]], tmp_path / "site", tables)


def test_a_tables_file_with_a_wrong_field_type_is_refused(built, tmp_path):
    """Every tables file the site reads is checked against its record: a wrong field is one error
    naming the file and the field, nested fields included."""
    from olmes.site.build import build_site

    tables = tmp_path / "tables"
    shutil.copytree(built["tables"], tables)
    path = tables / "leaderboard.json"
    written = json.loads(path.read_text())
    written["records"][0]["tasks"]["boolq"]["score"] = "0.5"
    path.write_text(json.dumps(written))
    message = f"{path}: field 'records.0.tasks.boolq.score' of this LeaderboardTable is not float | None"
    with pytest.raises(OlmesError, match=re.escape(message)):
        build_site([built["scores"]], tmp_path / "site", tables)
    assert not (tmp_path / "site").exists()

    written["records"][0]["tasks"]["boolq"]["score"] = 0.5
    path.write_text(json.dumps(written))
    flags = tables / "flags.json"
    flags.write_text(json.dumps({"flags": [{"model": "alpha", "task": "boolq", "code": "nan"}]}))
    with pytest.raises(
        OlmesError, match=re.escape(f"{flags}: not an olmes FlagsDocument: field 'flags.0.method' is missing")
    ):
        build_site([built["scores"]], tmp_path / "site", tables)


def test_task_page_shows_the_pmi_baseline_requests(built):
    arc = (built["site"] / "tasks" / "arc_challenge.html").read_text(encoding="utf-8")
    assert "Unconditional (pmi) requests: context <code>Answer:</code>" in arc
    assert "Unconditional (pmi) requests" not in (built["site"] / "tasks" / "boolq.html").read_text()


def _script_arguments(path: Path, call: str) -> list:
    """The JSON arguments of a data file's one call ``OLMES_BROWSER.<call>(...);``."""
    text = path.read_text(encoding="utf-8").strip()
    assert text.startswith(f"OLMES_BROWSER.{call}(") and text.endswith(");"), path
    return json.loads("[" + text[len(f"OLMES_BROWSER.{call}(") : -2] + "]")


def _browser_data(site: Path, task: str) -> dict:
    """A task's instance browser data, read back from its files: the page's embedded part, the
    instances from their pieces in order and every model's picks by model name."""
    page = (site / "tasks" / f"{task}.html").read_text(encoding="utf-8")
    embedded = re.search(r'<script type="application/json" id="browser-data">(.*?)</script>', page, re.S)
    data = json.loads(embedded.group(1))
    data["instances"] = []
    for number, name in enumerate(data["instance_files"]):
        piece, items = _script_arguments(site / "tasks" / name, "addInstances")
        assert piece == number
        data["instances"] += items
    data["picks"] = dict(_script_arguments(site / "tasks" / m["file"], "addModel") for m in data["models"])
    return data


def test_instance_browser_data_matches_requests(built):
    data = _browser_data(built["site"], "winogrande")
    task = TEMPLATES["winogrande"]
    first = _instances(task)[0]
    assert data["instances"][0]["c"] == list(first.choices)  # the options, not the shared continuation
    assert data["instances"][0]["q"] == first.fields["sentence"] and "_" in first.fields["sentence"]
    assert data["instances"][0]["g"] == first.gold
    assert set(data["picks"]) == {"alpha", "beta"}
    picks = data["picks"]["alpha"]
    assert picks["ranges"] == [[0, len(data["instances"])]]  # every instance, in order
    assert set(picks["predictions"]) == set(data["methods"])
    assert all(len(values) == len(data["instances"]) for values in picks["predictions"].values())
    gamma = _browser_data(built["site"], "arc_challenge")["picks"]["gamma"]  # a partial run: its 3
    assert gamma["ranges"] == [[0, 3]] and all(len(v) == 3 for v in gamma["predictions"].values())
    mmlu = _browser_data(built["site"], "mmlu")
    assert mmlu["instances"][0]["q"] == "Question: Question 0 about astronomy?"
    assert mmlu["instances"][0]["s"] == "astronomy"


def test_rebuild_replaces_and_refuses_foreign_folder(built, tmp_path):
    out = tmp_path / "site"
    args = ["site", "--scores", str(built["scores"]), "--tables", str(built["tables"]), "--out", str(out)]
    assert main(args) == 0
    (out / "stale.html").write_text("old")
    assert main(args) == 0
    assert not (out / "stale.html").exists()
    assert "No request files were given" in (out / "tasks/boolq.html").read_text()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(OlmesError, match="not an olmes site"):
        from olmes.site.build import build_site

        build_site([built["scores"]], foreign, built["tables"])
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_tables_from_other_scores_are_refused(built, tmp_path):
    scores = tmp_path / "scores"
    shutil.copytree(built["scores"], scores)
    summary = scores / "beta/boolq.scores.json"
    summary.write_text(summary.read_text().replace('"model": "beta"', '"model": "beta" '))
    from olmes.site.build import build_site

    with pytest.raises(OlmesError, match="changed after"):
        build_site([scores], tmp_path / "out", built["tables"])


def test_the_site_computes_no_tables_and_says_to_build_them_first(built, tmp_path, capsys):
    """``olmes site`` formats the tables of ``olmes tables``: without ``--tables`` it says, on one line,
    what to run first, and writes nothing."""
    out = tmp_path / "site"
    assert main(["site", "--scores", str(built["scores"]), "--out", str(out)]) == 2
    error = capsys.readouterr().err.strip()
    assert error == (
        "olmes: error: olmes site needs the tables it shows: run `olmes tables --scores ... --out DIR` "
        "first, then pass --tables DIR"
    )
    assert not out.exists()


def test_every_page_written_is_a_page_of_the_registry(built, tmp_path, monkeypatch):
    """One loop writes every page the registry yields (the navigation's, a page per evaluated model, per
    reported model and per task), and nothing else writes a page."""
    from olmes.site import build

    yielded: list[registry.Page] = []
    pages = build.site_pages
    monkeypatch.setattr(build, "site_pages", lambda inputs: yielded.extend(pages(inputs)) or yielded)
    site = tmp_path / "site"
    build.build_site([built["scores"]], site, built["tables"], [built["requests"]], built["models"])
    written = sorted(path.relative_to(site).as_posix() for path in site.rglob("*.html"))
    assert written == sorted(page.path for page in yielded)
    assert {"models/alpha.html", "models/gamma.html", "tasks/boolq.html", "mmlu.html"} <= set(written)
    nav = [page.path for page in yielded if page.title is not None]
    assert nav[:3] == ["index.html", "normalization.html", "cf-vs-mcf.html"] and "tasks/boolq.html" not in nav
    assert f'href="../{nav[-1]}"' in (site / "models/alpha.html").read_text(encoding="utf-8")


# -- in a real browser ----------------------------------------------------------------------------


def test_every_page_loads_cleanly(built, browser):
    site = built["site"]
    pages = sorted(site.rglob("*.html"))
    assert len(pages) == 7 + 1 + 10 + 3  # the top pages, one per series, one per task, one per model
    with watched(browser) as w:
        for path in pages:
            page = w.goto(path.as_uri())
            draw_charts_live(page)
            if page.locator("#browser-list").count():
                page.wait_for_selector("#browser-list .instance, #browser-list .empty")
            assert page.evaluate("window.__pwned") is None, path
        assert w.errors == [], w.errors
        assert w.blocked == [], f"requests to other hosts: {w.blocked}"
        assert all(url.startswith(("file://", "data:")) for url in w.requests)


def _column_values(page, column: int) -> list[str]:
    return page.eval_on_selector_all(
        "#leaderboard tbody:first-of-type tr:not(.group-label)",
        f"rows => rows.map(r => r.children[{column}].getAttribute('data-sort'))",
    )


def test_leaderboard_sorts_daggers_partial(built, browser):
    with watched(browser) as w:
        page = w.goto((built["site"] / "index.html").as_uri())
        headers = page.locator("#leaderboard thead th")
        names = [headers.nth(k).inner_text() for k in range(headers.count())]
        column = next(k for k, name in enumerate(names) if "ARC-C" in name)
        page.locator("#leaderboard thead th").nth(column).locator("button").click()
        values = [float(v) for v in _column_values(page, column) if v]
        assert values == sorted(values, reverse=True) and len(values) == 2
        assert headers.nth(column).get_attribute("aria-sort") == "descending"
        page.locator("#leaderboard thead th").nth(column).locator("button").click()
        values = [float(v) for v in _column_values(page, column) if v]
        assert values == sorted(values)
        assert headers.nth(column).get_attribute("aria-sort") == "ascending"
        model_column = next(k for k, name in enumerate(names) if "Model" in name)
        page.locator("#leaderboard thead th").nth(model_column).locator("button").click()
        assert _column_values(page, model_column) == ["Alpha-1B", "Beta-1B"]

        def cell(model: str):
            row = page.locator("#leaderboard tbody tr", has_text=model)
            return row.locator("td[data-task=arc_challenge]")

        assert "†" in cell("Alpha-1B").inner_text()
        assert "†" not in cell("Beta-1B").inner_text()
        gamma = page.locator("#leaderboard tbody.partial-group tr", has_text="Gamma (quick test)")
        assert gamma.locator(".badge-partial").inner_text().strip().lower() == "partial"
        assert page.locator("#leaderboard tbody:first-of-type .badge-partial").count() == 0
        assert "ᵖ" in gamma.locator("td[data-task=arc_challenge]").inner_text()
        assert page.locator(".legend").inner_text().count("†") == 1
        page.fill("#model-filter", "beta")
        assert page.locator("#leaderboard tbody tr:visible", has_text="Alpha-1B").count() == 0
        assert page.locator("#leaderboard tbody tr:visible", has_text="Beta-1B").count() == 1
        assert w.errors == []


def _chart_marks(page, chart: str) -> list[str]:
    """The class of each point, line and bar a chart's SVG draws, in order."""
    marks = f"#{chart} svg .mark-symbol path, #{chart} svg .mark-line path, #{chart} svg .mark-rule line"
    return page.eval_on_selector_all(marks, "marks => marks.map(m => m.parentElement.getAttribute('class'))")


_TEXT_OUTSIDE = """chart => {
  const box = chart.querySelector('svg').getBoundingClientRect();
  return [...chart.querySelectorAll('svg text')].filter(text => {
    const r = text.getBoundingClientRect();
    return r.width > 0 && (r.left < box.left - 0.5 || r.right > box.right + 0.5
                           || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5);
  }).map(text => text.textContent);
}"""


def test_chart_renders_marks(built, browser):
    """A chart page shows the chart drawn when the site was built, with no chart library loaded and no
    label cut off; vega, loaded once the pointer is on the chart, draws it again live with the same
    marks."""
    with watched(browser) as w:
        for page_name, chart, count in (
            ("cf-vs-mcf.html", "figure2", 1),
            ("training/demo.html", "figure1", 2),
        ):
            before = len(w.requests)
            page = w.goto((built["site"] / page_name).as_uri())
            built_marks = _chart_marks(page, chart)
            assert len(built_marks) > 10 and "mark-symbol role-mark" in " ".join(built_marks), built_marks[:3]
            loaded = w.requests[before:]
            assert not any("vega" in url for url in loaded), "a chart library loaded before it was needed"
            # every label as this browser draws it inside the SVG (the build measured it in DejaVu Sans)
            assert page.eval_on_selector(f"#{chart}", _TEXT_OUTSIDE) == []
            assert draw_charts_live(page) == count
            assert _chart_marks(page, chart) == built_marks
            assert any(url.endswith("static/vega-embed.min.js") for url in w.requests[before:])
        assert w.errors == []


def test_script_in_dataset_shows_as_text(built, browser):
    with watched(browser) as w:
        page = w.goto((built["site"] / "tasks/arc_challenge.html").as_uri())
        page.wait_for_selector("#browser-list .instance")
        first = page.locator("#browser-list .instance").first
        assert XSS_QUESTION in first.locator(".question").inner_text()
        assert XSS_CHOICE in first.locator(".choices").inner_text()
        assert page.locator("#browser-list script, #browser-list img, #browser-list b").count() == 0
        assert "<script>window.__pwned = 1</script>" in page.locator("pre.prompt").first.inner_text()
        assert page.evaluate("window.__pwned") is None
        page.fill("#browser-search", "pwned")
        page.wait_for_function("document.querySelectorAll('#browser-list .instance').length === 1")
        page.fill("#browser-search", "")
        page.wait_for_function("document.querySelectorAll('#browser-list .instance').length > 1")
        status = page.locator("#browser-status").inner_text()
        assert "page 1 of 3" in status and "11 instances" in status, status
        page.click("#browser-next")
        assert "page 2 of 3" in page.locator("#browser-status").inner_text()
        assert page.locator("#browser-list .instance").first.get_attribute("data-index") == "5"
        assert w.errors == []


def test_served_over_http_like_pages(built, browser):
    """GitHub Pages serves the folder over HTTP; the same pages must work there (localhost only)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(built["site"]))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with watched(browser, allowed=(base,)) as w:
            for path in ("index.html", "cf-vs-mcf.html", "tasks/mmlu.html", "models/alpha.html"):
                page = w.goto(base + path)
                draw_charts_live(page)
            assert w.errors == [] and w.blocked == []
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("width,height,label", [(1366, 900, "laptop"), (390, 844, "phone")])
def test_screenshots(built, browser, width, height, label):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with watched(browser, width=width, height=height) as w:
        page = w.goto((built["site"] / "index.html").as_uri())
        page.screenshot(path=str(SCREENSHOTS / f"leaderboard-{label}.png"), full_page=True)
        page = w.goto((built["site"] / "tasks/arc_challenge.html").as_uri())
        page.wait_for_selector("#browser-list .instance")
        page.screenshot(path=str(SCREENSHOTS / f"task-arc_challenge-{label}.png"), full_page=True)
        page = w.goto((built["site"] / "cf-vs-mcf.html").as_uri())
        page.wait_for_selector("#figure2[data-rendered=static] svg")
        page.screenshot(path=str(SCREENSHOTS / f"cf-vs-mcf-{label}.png"), full_page=True)
        assert w.errors == []
    for name in ("leaderboard", "task-arc_challenge", "cf-vs-mcf"):
        assert (SCREENSHOTS / f"{name}-{label}.png").stat().st_size > 10_000


def test_partial_runs_are_drawn_distinguishably_not_dropped(built):
    page = (built["site"] / "cf-vs-mcf.html").read_text(encoding="utf-8")
    assert "No data for this chart yet" not in page
    assert "Gamma (quick test)" in page[page.index('id="figure2"') :]
    only_partial = [
        {"task_name": "ARC-Challenge", "display_name": "Quick", "cf_method": "cf_pmi", "partial": True,
         "cf_accuracy": 0.3, "cf_stderr": 0.1, "mcf_accuracy": 0.2, "mcf_stderr": 0.1},
    ]  # fmt: skip
    chart = charts.figure2_spec(only_partial, ["ARC-Challenge"], {"ARC-Challenge": 25.0}, ["Quick"])
    assert chart is not None
    values = json.dumps(chart.spec)
    assert '"run": "partial (fewer instances)"' in values and '"triangle-up"' in values


def test_instance_data_in_pieces_reassembles_in_the_browser(browser):
    """MMLU's instances are several MB: they are cut into script files that rebuild the same list, in
    order; a model's file hands over its name and picks as they are, whatever the name holds."""
    from olmes.site.browser_files import instance_scripts, model_script

    instances = [{"i": k, "id": f"x{k}", "q": "</script><b>q</b> " * 5, "c": ["a", "b"], "g": k % 2}
                 for k in range(60)]  # fmt: skip
    scripts = instance_scripts(instances, piece_bytes=1500, first_piece_bytes=300)
    assert len(scripts) == 7  # 60 instances of about 136 bytes: 2 first, then 11 to a 1500-byte piece
    assert len(scripts[0].encode()) < 300 + 400 and scripts[0].count('"id":') == 2
    assert all(len(text.encode()) < 1500 + 400 for text in scripts)
    name, picks = 'm "</script>\u2028', {"ranges": [[0, 2]], "predictions": {"mcf": [1, -1]}, "near_ties": {}}
    with watched(browser) as w:
        w.page.evaluate(
            "window.OLMES_BROWSER = {pieces: [], models: [],"
            " addInstances(n, items) { this.pieces.push([n, items]); },"
            " addModel(name, picks) { this.models.push([name, picks]); }}"
        )
        for text in [*scripts, model_script(name, picks)]:
            w.page.evaluate(text)
        pieces = w.page.evaluate("window.OLMES_BROWSER.pieces")
        assert [number for number, _ in pieces] == list(range(7))
        assert [item for _, items in pieces for item in items] == instances
        assert w.page.evaluate("window.OLMES_BROWSER.models") == [[name, picks]]


def _model_files_requested(urls: list[str]) -> set[str]:
    return {url.rsplit("/", 1)[1] for url in urls if "/models/" in url}


def test_browser_loads_only_the_picked_models(built, browser):
    """A task page loads the data of the models picked at first (the best complete runs), another
    model's when the reader picks it, and never the rest."""
    with watched(browser) as w:
        page = w.goto((built["site"] / "tasks/arc_challenge.html").as_uri())
        page.wait_for_selector("#browser-list .instance .preds")
        first = page.locator("#browser-list .instance").first
        assert sorted(first.locator(".preds tbody th").all_inner_texts()) == ["Alpha-1B", "Beta-1B"]
        assert _model_files_requested(w.requests) == {"alpha.js", "beta.js"}  # gamma is partial: not picked
        assert first.locator(".preds td.right, .preds td.wrong").count() == 2 * 5  # 2 models x 5 methods
        page.fill("#browser-model-search", "quick")  # its display name, Gamma (quick test)
        page.click("#browser-model-options button[data-model=gamma]")
        page.wait_for_function("document.querySelectorAll('#browser-list .instance')[0]"
                               ".querySelectorAll('.preds tbody tr').length === 3")  # fmt: skip
        assert _model_files_requested(w.requests) == {"alpha.js", "beta.js", "gamma.js"}
        gamma = first.locator(".preds tbody tr", has_text="Gamma (quick test)")
        assert gamma.locator("td.right, td.wrong").count() == 5  # scored on the first 3 instances
        page.click("#browser-picked button[data-model=alpha]")  # unpicked: its row goes
        assert first.locator(".preds tbody th").all_inner_texts() == ["Beta-1B", "Gamma (quick test)"]
        page.fill("#browser-search", "pwned")  # search and filters still work over the picked models
        page.wait_for_function("document.querySelectorAll('#browser-list .instance').length === 1")
        page.fill("#browser-search", "")
        page.select_option("#browser-filter", "wrong")
        page.wait_for_selector("#browser-list .instance, #browser-list .empty")
        for card in page.locator("#browser-list .instance").all():
            assert card.locator(".preds td.wrong").count() > 0
        assert page.evaluate("window.__pwned") is None
        assert w.errors == []


def test_rebuild_reuses_the_unchanged_model_data(built, tmp_path, monkeypatch):
    """A site rebuilt after a model was added makes only that model's data files anew, copies the
    others from the previous site, and equals a site built from scratch byte for byte."""
    from olmes.site.build import build_site
    from olmes.site.predictions import BrowserData

    made = []
    make = BrowserData.model_data
    monkeypatch.setattr(
        BrowserData,
        "model_data",
        lambda self, name, task: made.append((name, task)) or make(self, name, task),
    )
    without_gamma = tmp_path / "scores"
    shutil.copytree(built["scores"], without_gamma, ignore=shutil.ignore_patterns("gamma"))
    tables = {}
    for label, scores in (("before", without_gamma), ("after", built["scores"])):
        tables[label] = tmp_path / f"tables-{label}"
        args = ["tables", "--scores", str(scores), "--out", str(tables[label]), "--resamples", "20"]
        assert main([*args, "--models", str(built["models"])] if label == "after" else args) == 0

    site = tmp_path / "site"
    first = build_site([without_gamma], site, tables["before"], [built["requests"]])
    assert first.reused == [] and len(made) == 2 * len(TASKS)
    made.clear()
    again = build_site([built["scores"]], site, tables["after"], [built["requests"]], built["models"])
    assert made == [("gamma", "arc_challenge"), ("gamma", "boolq")]  # the new model's, only
    assert sorted(again.reused) == sorted(
        f"tasks/{task}/models/{model}.js" for task in TASKS for model in ("alpha", "beta")
    )
    scratch = tmp_path / "scratch"
    build_site([built["scores"]], scratch, tables["after"], [built["requests"]], built["models"])
    assert _tree(site) == _tree(scratch)

    tampered = site / "tasks/boolq/models/beta.js"  # a file that no longer matches the manifest is made anew
    tampered.write_text(tampered.read_text().replace("OLMES_BROWSER", "window.OLMES_BROWSER"))
    made.clear()
    build_site([built["scores"]], site, tables["after"], [built["requests"]], built["models"])
    assert made == [("beta", "boolq")] and _tree(site) == _tree(scratch)


def test_instances_of_another_run_are_refused(built, tmp_path):
    """The browser marks gold from the instance file: one whose gold differs from a run's is an error."""
    from olmes.site.build import build_site

    requests = tmp_path / "requests"
    shutil.copytree(built["requests"], requests)
    path = requests / "boolq.instances.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[1]["gold"] = 1 - rows[1]["gold"]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with pytest.raises(OlmesError, match="instance 1 has gold .* but (alpha|beta)'s scored run has"):
        build_site([built["scores"]], tmp_path / "site", built["tables"], [requests], built["models"])
    assert not (tmp_path / "site").exists()


def _tree(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*") if path.is_file()}


# -- charts and the leaderboard table with many models ---------------------------------------------


def test_a_chart_of_500_models_draws_the_top_ones_and_keeps_the_others_for_the_picker():
    ranking = [f"Model {k:03d}" for k in range(500)]  # strongest first
    rows = [
        {"subject": subject, "model": name, "formulation": formulation, "accuracy": (k % 97) / 100}
        for k, name in enumerate(reversed(ranking))  # given in another order than the ranking
        for subject in ("astronomy", "virology", "law")
        for formulation in ("CF", "MCF")
    ]
    chart = charts.subjects_spec(rows, ranking)
    drawn = [row["model"] for row in chart.spec["data"]["values"]]
    assert chart.shown == ranking[: charts.TOP_MODELS] and set(drawn) == set(chart.shown)
    assert len(drawn) == charts.TOP_MODELS * 3 * 2
    assert list(chart.others) == ranking[charts.TOP_MODELS :] and chart.total == 500
    assert chart.fields == ["subject", "formulation", "accuracy"]
    script = chart.data_script("mmlu-subjects")
    data = json.loads(script[script.index("] = ") + 4 : -2])
    assert data["rows"]["Model 499"] == [
        [subject, formulation, 0.0]
        for subject in ("astronomy", "virology", "law")
        for formulation in ("CF", "MCF")
    ]
    assert len(script.encode()) < 300_000  # 500 models x 6 rows
    assert charts.subjects_spec(rows, ranking, top=3).shown == ranking[:3]


PWNING_NAME = '</text><script>window.__pwned = 3</script><a href="javascript:x" onload="y">M'


def test_a_chart_drawn_when_the_site_is_built_keeps_names_as_text():
    """A model's name (store text, untrusted) reaches the chart's SVG only as escaped text."""
    rows = [
        {"subject": subject, "model": name, "formulation": formulation, "accuracy": 0.25 + k / 4}
        for k, name in enumerate([PWNING_NAME, "Plain"])
        for subject in ("astronomy", "law")
        for formulation in ("CF", "MCF")
    ]
    chart = charts.subjects_spec(rows, ["Plain", PWNING_NAME])
    svg = static_svg(chart.spec, "mmlu-subjects")
    assert "<script" not in svg and "<a " not in svg
    elements = list(ET.fromstring(svg).iter())
    assert not [name for element in elements for name in element.attrib if name.lower().startswith("on")]
    texts = [element.text for element in elements if element.tag == f"{SVG_NS}text"]
    assert PWNING_NAME in texts  # the legend's label: the whole name, as text
    labels = [element.get("aria-label", "") for element in elements]
    assert sum(f"Model: {PWNING_NAME};" in label for label in labels) == 4  # its 4 points
    assert static_svg(chart.spec, "mmlu-subjects") == svg  # drawn the same each build


SVG_OPEN = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'


@pytest.mark.parametrize(
    "body,refused",
    [
        ("<script>window.__pwned = 1</script>", "a <script> element"),
        ("<foreignObject><p>x</p></foreignObject>", "a <foreignObject> element"),
        ('<a xlink:href="javascript:x"><text>x</text></a>', "a <a> element"),
        ('<g onload="x"/>', "the attribute onload='x' on <g>"),
        ('<path style="fill: url(https://example.org/x)"/>', "the attribute style="),
        ('<text xlink:href="#x">x</text>', "the attribute href='#x' on <text>"),
    ],
)
def test_a_chart_svg_with_more_than_drawing_elements_is_refused(body, refused):
    with pytest.raises(OlmesError, match=re.escape(f"chart c: its SVG has {refused}")):
        checked_svg(SVG_OPEN + body + "</svg>", "c")


def test_a_chart_svg_that_is_no_svg_is_refused():
    assert checked_svg(SVG_OPEN + '<g clip-path="url(#clip1)"><path d="M0,0"/></g></svg>', "c")
    with pytest.raises(OlmesError, match="chart c: its SVG does not parse"):
        checked_svg("<svg><g></svg>", "c")
    with pytest.raises(OlmesError, match="chart c: its SVG's root is <html>, not <svg>"):
        checked_svg("<html/>", "c")


def _site_with(built, folder: Path, module, name: str, value) -> Path:
    """The site of ``built`` made again into ``folder`` with ``module.name`` set to ``value``."""
    site = folder / "site"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, name, value)
        args = ["site", "--scores", str(built["scores"]), "--tables", str(built["tables"])]
        assert main(args + ["--requests", str(built["requests"]), "--out", str(site)]) == 0
    return site


@pytest.fixture(scope="module")
def built_top1(built, tmp_path_factory):
    """The same site with charts that draw only the strongest model: the others are for the picker."""
    return _site_with(built, tmp_path_factory.mktemp("top1"), charts, "TOP_MODELS", 1)


def _svg_text(page, selector: str) -> str:
    return page.eval_on_selector(selector, "element => element.querySelector('svg').textContent")


def test_picker_adds_a_model_to_the_chart_and_its_table(built_top1, browser):
    with watched(browser) as w:
        page = w.goto((built_top1 / "cf-vs-mcf.html").as_uri())
        page.wait_for_selector("#figure2[data-rendered=static] svg")
        assert "strongest of the 3 models" in page.locator(".picker-rule").inner_text()
        names = page.eval_on_selector_all("#figure2-names option", "options => options.map(o => o.value)")
        assert len(names) == 2 and "Gamma (quick test)" in names
        top = ({"Alpha-1B", "Beta-1B"} - set(names)).pop()
        assert top in _svg_text(page, "#figure2") and names[0] not in _svg_text(page, "#figure2")
        before = page.locator("#figure2 svg .mark-symbol path").count()
        page.fill(".picker[data-chart=figure2] .picker-input", names[0])
        page.press(".picker[data-chart=figure2] .picker-input", "Enter")
        page.wait_for_function("document.getElementById('figure2').getAttribute('data-picked') !== null")
        page.wait_for_selector("#figure2[data-rendered=true] svg")
        assert names[0] in _svg_text(page, "#figure2") and top in _svg_text(page, "#figure2")
        assert page.locator("#figure2 svg .mark-symbol path").count() > before
        page.fill(".picker[data-chart=figure2] .picker-input", "No such model")
        page.click(".picker[data-chart=figure2] .picker-add")
        assert "No other model" in page.locator(".picker[data-chart=figure2] .picker-status").inner_text()

        page = w.goto((built_top1 / "mmlu.html").as_uri())
        page.wait_for_selector("#mmlu-subjects[data-rendered=static] svg")
        headers = page.locator("#subjects-table thead th")
        assert headers.count() == 2 + 2  # subject, n, the top model's CF and MCF
        other = page.eval_on_selector("#mmlu-subjects-names option", "option => option.value")
        page.fill(".picker[data-chart=mmlu-subjects] .picker-input", other)
        page.press(".picker[data-chart=mmlu-subjects] .picker-input", "Enter")
        page.wait_for_function("document.querySelectorAll('#subjects-table thead th').length === 6")
        page.wait_for_selector("#mmlu-subjects[data-rendered=true] svg")
        assert other in _svg_text(page, "#mmlu-subjects")
        headers.nth(5).locator("button").click()  # the added MCF column sorts like the others
        values = [float(v) for v in page.eval_on_selector_all(
            "#subjects-table tbody tr", "rows => rows.map(r => r.children[5].getAttribute('data-sort'))"
        )]  # fmt: skip
        assert values == sorted(values, reverse=True) and len(values) == len(MMLU_SUBJECTS)
        page.click(".picked button")  # removing the model takes its columns out again
        page.wait_for_function("document.querySelectorAll('#subjects-table thead th').length === 4")
        assert w.errors == []
    csv_text = (built_top1 / "downloads/mmlu_subjects.csv").read_text(encoding="utf-8")
    assert len(csv_text.splitlines()) == 1 + len(MMLU_SUBJECTS) * 2 * 2  # every model: alpha, beta


@pytest.fixture(scope="module")
def built_fold1(built, tmp_path_factory):
    """The same site with long tables from 2 rows on: each shows its first row until unfolded."""
    return _site_with(built, tmp_path_factory.mktemp("fold1"), nav_views, "TABLE_OPEN_ROWS", 1)


def test_a_long_table_shows_its_first_rows_until_unfolded(built_fold1, browser):
    """Only the first TABLE_OPEN_ROWS rows are parsed as rows before the first render (the others are
    the text of a script element); "Show all" unfolds them, a sort shows the first rows of its order,
    and a name filter shows every match."""
    total = len((built_fold1 / "downloads" / "leaderboard.csv").read_text().splitlines()) - 1
    with watched(browser) as w:
        page = w.goto((built_fold1 / "index.html").as_uri())
        rows = "#leaderboard tbody tr:not(.group-label)"
        visible = "rs => rs.filter(r => r.offsetParent !== null).map(r => r.querySelector('th').dataset.sort)"

        def names():
            return page.eval_on_selector_all(rows, "rs => rs.map(r => r.querySelector('th').dataset.sort)")

        def shown():
            return page.eval_on_selector_all(rows, visible)

        assert total >= 3 and len(names()) == 1 and shown() == names()
        assert page.locator("#leaderboard script.later-rows").count() >= 1
        button = page.locator("button[data-show-all=leaderboard]")
        assert button.inner_text() == f"Show all {total} rows"
        button.click()
        everyone = names()
        assert (
            len(everyone) == total and shown() == everyone and button.get_attribute("aria-expanded") == "true"
        )
        assert page.locator("#leaderboard script.later-rows").count() == 0
        button.click()
        assert shown() == everyone[:1]
        page.click("#leaderboard thead th:nth-child(2) button")  # by name, A to Z
        assert shown() == [sorted(everyone, key=str.lower)[0]]
        needle = everyone[-1].lower()[:6]
        page.fill("#model-filter", needle)
        assert set(shown()) == {name for name in everyone if needle in name.lower()}
        for other in ("cf-vs-mcf.html", "normalization.html"):
            page = w.goto((built_fold1 / other).as_uri())
            assert (
                page.locator("button.show-all").count() >= 1 and page.locator("table.collapsed").count() >= 1
            )
        assert w.errors == []


def test_sorting_540_rows_is_fast(browser):
    """The leaderboard at 500 models and the paper's 40: a sort reads each key once and appends once."""
    site_js = (Path(__file__).resolve().parents[1] / "olmes/site/static/site.js").read_text()
    rows = "".join(
        f"<tr><td data-sort='{k + 1}'>{k + 1}</td><th data-sort='Model {k}'>Model {k}</th>"
        + "".join(f"<td data-sort='{((k * 7919 + t * 104729) % 1000) / 1000:.6f}'>x</td>" for t in range(11))
        + "</tr>"
        for k in range(540)
    )
    html = f"<table id='t'><thead><tr>{'<th></th>' * 13}</tr></thead><tbody>{rows}</tbody></table>"
    with watched(browser) as w:
        w.page.set_content(html)
        w.page.add_script_tag(content=site_js)
        took = w.page.evaluate(
            """() => { const t = document.getElementById('t'), times = [];
            for (const [column, type, direction] of [[5, 'num', 'descending'], [1, 'text', 'ascending'],
                                                     [0, 'num', 'ascending'], [7, 'num', 'ascending']]) {
              const start = performance.now();
              OLMES.sortTable(t, column, type, direction);
              times.push(performance.now() - start);
            }
            return times; }"""
        )
        values = w.page.eval_on_selector_all(
            "#t tbody tr", "rows => rows.map(r => +r.children[7].dataset.sort)"
        )
        assert values == sorted(values) and len(values) == 540
        assert max(took) < 100, took
        assert w.errors == []


def test_the_reproduction_page_lists_each_flip_with_its_margins_and_verdict(built, tmp_path):
    """The site's Reproduction page (and the leaderboard's note) from a report with a tie within float
    error and a flip the model does not explain; every model name and value is the report's."""
    from olmes.site.build import build_site

    tie = {"method": "cf_none", "instance_index": 3, "here": 0, "there": 1, "margin_here": 1e-5,
           "margin_there": 2e-5, "bound": 1e-4, "within_error": True}  # fmt: skip
    real = {**tie, "instance_index": 4, "method": "mcf", "margin_here": 0.5, "within_error": False}
    reports = []
    hardware = (["cpu"], ["cpu", "not recorded"])
    for (name, flips), store_hardware in zip(
        (("alpha", [tie]), ("beta", [tie, real])), hardware, strict=True
    ):
        reports.append(tmp_path / f"{name}.json")
        report = {**reproduction_report(flips), "model": name, "store_hardware": store_hardware}
        reports[-1].write_text(json.dumps(report))
    build_site([built["scores"]], tmp_path / "site", built["tables"], reproduction=reports)
    page = (tmp_path / "site" / "reproduction.html").read_text(encoding="utf-8")
    assert "<h2>Alpha-1B</h2>" in page and "<h2>Beta-1B</h2>" in page  # the display names, as everywhere
    assert "published from cpu (some of its runs did not record their hardware)" in page
    assert "cpu, not recorded" not in page
    assert page.count("tie within float error</td>") == 2 and page.count("not explained by float error") == 2
    assert "reproduced within float error</strong>" in page and "DIFFERS</strong>" in page
    assert "1.0e-04" in page and "5.0e-01" in page  # the bound and the unexplained margin
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "reproduced within float error</strong>, 49/50 decisions identical" in index
