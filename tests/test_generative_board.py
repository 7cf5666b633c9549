"""The OLMES v0.2 generative tasks on the board: ``olmes tables --generative`` (the table
``generative_scores``: values, the average rule, partial rows; without the option every file as before),
and the site built from those tables (the leaderboard's generative table, the generative page, a page
per task with its prompt and instance browser, text escaped), checked in headless Chromium at 1366 px.

The generative summaries, their per-instance Parquet and the generation request files are fixtures
made here (:func:`make_generative`), written through their records' formats; the ten tasks' scores are
the committed store's (``leaderboard/``). A second site reads the generative tasks' files as a store
keeps them (:func:`write_store_task_files`: the first two requests, and an instances file of question
and gold answers): its instance browser shows every instance a model has.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from markupsafe import escape

from olmes.cli.main import main
from olmes.core.generative import GENERATIVE_TASKS, GENERATIVE_VERSION
from olmes.core.records.generative import (
    GENERATIVE_INSTANCE_COLUMNS,
    GENERATIVE_INSTANCES_FORMAT,
    GENERATIVE_SCORES_FORMAT,
    write_generative_summary,
)
from olmes.core.records.jsonlines import records_bytes, write_records
from olmes.core.records.tables import GENERATIVE_TABLE_FORMAT
from olmes.core.resources import file_sha256
from tests.helpers import watched

REPO = Path(__file__).resolve().parents[1]
STORE = REPO / "leaderboard"
MODELS = ("SmolLM2-135M", "Gemma-3-270M")  # the store's models
GEN_ONLY = "gen-only-model"  # generative results only: no ten-task scores, no model page
SCRIPT = "<script>alert('x')</script>"
N = 4  # instances per task in the fixtures


def _value(model: str, task: str) -> float:
    """A fixture model's primary metric on a task: distinct per model and task."""
    return round(0.1 + 0.05 * list(GENERATIVE_TASKS).index(task) + 0.2 * (model == MODELS[1]), 4)


def write_task_result(folder: Path, model: str, task: str, *, partial: bool = False) -> Path:
    """A model x task's per-instance Parquet and its summary under ``folder/<model>/``."""
    spec = GENERATIVE_TASKS[task]
    out = folder / model
    out.mkdir(parents=True, exist_ok=True)
    count = N - 1 if partial else N
    columns = {
        "model": [model] * count,
        "task": [task] * count,
        "instance_index": list(range(count)),
        "native_id": [f"{task}-{k}" for k in range(count)],
        "generation": [SCRIPT if k == 0 else f" answer {k}\n" for k in range(count)],
        "exact_match": [float(k % 2) for k in range(count)],
        "f1": [None if spec.primary_metric != "f1" else 0.5 for _ in range(count)],
        "extracted": [str(k) if spec.primary_metric == "exact_match" else None for k in range(count)],
        "bits_per_byte": [0.9] * count,
    }
    fields = [pa.field(c.name, pa.type_for_alias(c.arrow_type)) for c in GENERATIVE_INSTANCE_COLUMNS]
    schema = pa.schema(fields)
    schema = schema.with_metadata(GENERATIVE_INSTANCES_FORMAT.metadata())
    parquet = out / f"{task}.instances.parquet"
    pq.write_table(pa.table(columns, schema=schema), parquet)
    value = _value(model, task)
    metric = {"value": value, "stderr": 0.01, "n": count}
    metrics = {"exact_match": metric if spec.primary_metric == "exact_match" else {**metric, "value": 0.5}}
    if spec.primary_metric == "f1":
        metrics["f1"] = metric
    path = out / f"{task}.generative.json"
    write_generative_summary(
        path,
        {
            "model": model, "task": task, "display_name": spec.display_name, "version": GENERATIVE_VERSION,
            "n_instances": count, "full_count": spec.standard_count, "limit": N if partial else None,
            "partial": partial, "partial_reasons": [f"limit {N - 1}"] if partial else [],
            "primary_metric": spec.primary_metric, "metrics": metrics,
            "bits_per_byte": {"value": 0.9, "stderr": 0.02, "n": count}, "inputs": {},
            "instances": {"path": parquet.name, "sha256": file_sha256(parquet)},
        },
    )  # fmt: skip
    return path


def _request_rows(task: str, count: int = N) -> list[dict]:
    """``count`` generation requests sharing 2 shots, with untrusted text in a question."""
    spec = GENERATIVE_TASKS[task]
    shots = "Question: one?\nAnswer: 1\n\nQuestion: two?\nAnswer: 2\n\n"
    return [
        {
            "task": task, "instance_index": k, "native_id": f"{task}-{k}",
            "question": f"<b>question {k}</b> of {task}?",
            "context": f"{shots}Question: <b>question {k}</b>   of {task}?\nAnswer:",
            "stop_sequences": list(spec.stop_sequences), "max_gen_toks": spec.max_gen_toks,
            "answers": [[f"gold {k}"], ["alt", "span"]], "gold_context": "Answer:",
            "gold_continuation": f" gold {k}",
        }
        for k in range(count)
    ]  # fmt: skip


def write_generation_requests(folder: Path, task: str) -> Path:
    """``<folder>/<task>.gen.jsonl``: N requests sharing 2 shots, with untrusted text in a question."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task}.gen.jsonl"
    write_records(_request_rows(task), path)
    return path


STORE_INSTANCES = {task: N + 2 for task in GENERATIVE_TASKS} | {"squad": N - 1}
"""Instances in the store-shaped instances file, per task: more than the models have, and for SQuAD
one fewer (its last instance is in no file: the browser lists it, its question marked not available)."""


def write_store_task_files(folder: Path, task: str) -> None:
    """A store's ``tasks/`` files of a generative task (olmes.store.generative.generative_task_files):
    its first two generation requests and every instance's question and gold answers, gzipped."""
    rows = _request_rows(task, STORE_INSTANCES[task])
    folder.mkdir(parents=True, exist_ok=True)
    write_records(rows[:2], folder / f"{task}.gen.examples.jsonl")
    listed = [
        {key: row[key] for key in ("task", "instance_index", "native_id", "question", "answers")}
        for row in rows
    ]
    (folder / f"{task}.gen.instances.jsonl.gz").write_bytes(records_bytes(listed, compress=True))


def make_generative(root: Path) -> tuple[Path, Path]:
    """Fixture results: the store's first model complete on all six tasks, its second partial on
    CoQA and missing GSM8K, a third model with generative results only; the request files. Returns
    (the summaries' folder, the requests folder)."""
    scores, requests = root / "generative", root / "requests"
    for task in GENERATIVE_TASKS:
        write_task_result(scores, MODELS[0], task)
        write_generation_requests(requests, task)
        if task != "gsm8k":
            write_task_result(scores, MODELS[1], task, partial=task == "coqa")
    write_task_result(scores, GEN_ONLY, "squad")
    return scores, requests


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("generative")
    scores, requests = make_generative(root)
    # the committed store without its own generative results (a store's are read without --generative)
    bare = root / "bare-store"
    shutil.copytree(STORE, bare, ignore=shutil.ignore_patterns("generative", "*.gen.*"))
    plain, tables, site = root / "plain", root / "tables", root / "site"
    assert main(["tables", "--store", str(bare), "--out", str(plain)]) == 0
    assert main(["tables", "--store", str(bare), "--generative", str(scores), "--out", str(tables)]) == 0
    assert main(["site", "--store", str(bare), "--tables", str(tables), "--requests", str(requests),
                 "--out", str(site)]) == 0  # fmt: skip
    return {"root": root, "scores": scores, "plain": plain, "tables": tables, "site": site, "store": bare}


@pytest.fixture(scope="module")
def store_site(built):
    """The site of the same tables, its generative tasks' files as a store keeps them."""
    tasks = built["root"] / "store-tasks"
    for task in GENERATIVE_TASKS:
        write_store_task_files(tasks, task)
    site = built["root"] / "store-site"
    store = str(built["store"])
    assert main(["site", "--store", store, "--tables", str(built["tables"]), "--requests", str(tasks),
                 "--out", str(site)]) == 0  # fmt: skip
    return site


def _data(path: Path, call: str) -> list:
    """The arguments of a browser data script (``OLMES_GEN.<call>(...)``)."""
    text = path.read_text(encoding="utf-8")
    prefix = f"window.OLMES_GEN && OLMES_GEN.{call}("
    assert text.startswith(prefix) and text.endswith(");\n"), text[:80]
    return json.loads(f"[{text[len(prefix) : -3]}]")


def _records(tables: Path) -> dict[str, dict]:
    document = GENERATIVE_TABLE_FORMAT.read(tables / "generative_scores.json")
    return {record["model"]: record for record in document["records"]}


# -- the tables --------------------------------------------------------------------------------------


def test_values_average_and_standard_error(built):
    records = _records(built["tables"])
    complete = records[MODELS[0]]
    values = [_value(MODELS[0], task) for task in GENERATIVE_TASKS]
    assert complete["average"] == pytest.approx(sum(values) / 6)
    assert complete["average_stderr"] == pytest.approx(math.sqrt(6 * 0.01**2) / 6)
    assert complete["no_average"] is None and not complete["partial"]
    assert complete["version"] == GENERATIVE_VERSION == "OLMES v0.2"
    for task in GENERATIVE_TASKS:
        cell = complete["tasks"][task]
        assert cell["score"] == _value(MODELS[0], task) and cell["stderr"] == 0.01
        assert cell["primary_metric"] == GENERATIVE_TASKS[task].primary_metric
        assert cell["bits_per_byte"]["value"] == 0.9
    assert "f1" not in complete["tasks"]["gsm8k"]["metrics"]


def test_no_average_without_all_six_complete(built):
    records = _records(built["tables"])
    partial = records[MODELS[1]]
    assert partial["average"] is None and partial["average_stderr"] is None and partial["partial"]
    assert "GSM8K" in partial["no_average"] and "partial on CoQA" in partial["no_average"]
    assert partial["tasks"]["gsm8k"] is None and partial["tasks"]["coqa"]["partial"]
    only = records[GEN_ONLY]
    assert only["average"] is None and only["tasks"]["squad"]["score"] == _value(GEN_ONLY, "squad")


def test_rows_follow_the_models_order_and_names(built):
    document = json.loads((built["tables"] / "generative_scores.json").read_text(encoding="utf-8"))
    leaderboard = json.loads((built["tables"] / "index.json").read_text(encoding="utf-8"))["models"]
    names = [model["name"] for model in leaderboard]
    assert [record["model"] for record in document["records"]] == [*names, GEN_ONLY]
    shown = {model["name"]: model.get("display_name", model["name"]) for model in leaderboard}
    assert [row[0] for row in document["rows"]][:2] == [shown[name] for name in names]
    assert all(GENERATIVE_VERSION in head for head in document["header"][1:2] + document["header"][3::2][:6])


def test_csv_and_latex_show_the_partial_mark_and_reason(built):
    csv = (built["tables"] / "generative_scores.csv").read_text(encoding="utf-8")
    assert "ᵖ" in csv and "no generative average" in csv
    tex = (built["tables"] / "generative_scores.tex").read_text(encoding="utf-8")
    assert r"\textsuperscript{p}" in tex and "OLMES v0.2" in tex


def test_index_records_the_generative_inputs(built):
    index = json.loads((built["tables"] / "index.json").read_text(encoding="utf-8"))
    inputs = {(entry["model"], entry["task"]): entry for entry in index["generative_inputs"]}
    assert len(inputs) == 6 + 5 + 1
    entry = inputs[(MODELS[1], "coqa")]
    assert entry["partial"] and entry["sha256"] == file_sha256(entry["path"])
    assert GENERATIVE_SCORES_FORMAT.read(entry["path"])["task"] == "coqa"


def test_without_generative_every_file_is_as_before(built):
    plain, tables = built["plain"], built["tables"]
    names = {path.name for path in plain.iterdir()}
    added = {f"generative_scores.{ext}" for ext in ("csv", "json", "tex")}
    assert {path.name for path in tables.iterdir()} == names | added
    for name in sorted(names - {"index.json"}):
        assert (plain / name).read_bytes() == (tables / name).read_bytes(), name
    before = json.loads((plain / "index.json").read_text(encoding="utf-8"))
    after = json.loads((tables / "index.json").read_text(encoding="utf-8"))
    after.pop("generative_inputs")
    after["files"] = [name for name in after["files"] if name not in added]
    assert before == after
    assert "generative_inputs" not in before


def test_a_summary_twice_is_refused(built, tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    source = built["scores"] / GEN_ONLY / "squad.generative.json"
    (copy / "squad.generative.json").write_bytes(source.read_bytes())
    out = tmp_path / "t"
    args = ["tables", "--store", str(STORE), "--generative", str(built["scores"]), str(copy)]
    args += ["--out", str(out)]
    assert main(args) != 0


# -- the site ----------------------------------------------------------------------------------------


def test_the_site_has_the_generative_pages(built):
    site = built["site"]
    board = (site / "index.html").read_text(encoding="utf-8")
    assert "Generative tasks (OLMES v0.2)" in board and 'id="generative-table"' in board
    assert 'href="generative.html">OLMES v0.2 generative</a>' in board
    assert (site / "generative.html").is_file()
    for task in GENERATIVE_TASKS:
        page = (site / "tasks" / f"{task}.html").read_text(encoding="utf-8")
        spec = GENERATIVE_TASKS[task]
        assert str(escape(spec.description)) in page
        assert f"{spec.max_gen_toks} generated" in page
        assert (site / "tasks" / task / "instances.js").is_file()
    coqa = (site / "tasks" / "coqa.html").read_text(encoding="utf-8")
    assert "&#34;\\n\\n&#34;" in coqa  # the stop sequence, whitespace visible
    # the exact prompt, byte for byte (escaped), its shots apart from its query
    assert '<span class="shots">Question: one?\nAnswer: 1\n\nQuestion: two?\nAnswer: 2\n\n</span>' in coqa
    assert '<span class="query">Question: &lt;b&gt;question 0&lt;/b&gt;   of coqa?\nAnswer:</span>' in coqa


def test_untrusted_text_is_escaped(built):
    site = built["site"]
    for path in [*site.rglob("*.html"), *(site / "tasks").rglob("*.js")]:
        text = path.read_text(encoding="utf-8")
        assert "<script>alert" not in text and "<b>question" not in text, path
    data = (site / "tasks" / "squad" / "generations-0.js").read_text(encoding="utf-8")
    assert "\\u003cscript\\u003ealert" in data


def _overlaps(page, selector: str) -> list[str]:
    """Pairs of cells of the table ``selector`` whose boxes overlap (a cell pushed onto another)."""
    return page.evaluate(
        """(selector) => {
        const found = [];
        for (const row of document.querySelectorAll(selector + ' tr')) {
          const cells = [...row.children].map(c => c.getBoundingClientRect());
          for (let k = 1; k < cells.length; k++) {
            if (cells[k].left < cells[k - 1].right - 0.5) found.push(row.textContent.slice(0, 40));
          }
        }
        return found;
      }""",
        selector,
    )


def test_leaderboard_shows_the_generative_table_at_1366(built, browser):
    with watched(browser, width=1366, height=900) as w:
        page = w.goto((built["site"] / "index.html").as_uri())
        table = page.locator("#generative-table")
        table.scroll_into_view_if_needed()
        assert table.is_visible()
        assert page.locator("#generative-table tbody tr").count() == 3
        box = table.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 1366, box
        assert not _overlaps(page, "#generative-table")
        main = page.locator("#leaderboard").bounding_box()
        assert box["y"] >= main["y"] + main["height"]  # below the main table, not over it
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366
        assert not w.errors, w.errors


def test_the_instance_browser_shows_generations_as_text(built, browser):
    with watched(browser, width=1366, height=900) as w:
        page = w.goto((built["site"] / "tasks" / "squad.html").as_uri())
        page.wait_for_function("document.querySelectorAll('#gen-list .generation').length > 0")
        first = page.locator("#gen-list .generation").first.text_content()
        assert first == SCRIPT  # shown as text, never run
        assert page.locator("#gen-list script").count() == 0
        assert "<b>question 0</b> of squad?" in page.locator("#gen-list .question").first.text_content()
        assert not w.errors, w.errors


# -- the instance browser of a store ----------------------------------------------------------------


def test_store_instances_file_gives_every_instance_a_model_has(store_site):
    """The store keeps prompts of two instances only; the browser takes the rest's question and gold
    answers from the instances file, lists only instances a model has, and one no file holds with
    its question marked as not available."""
    [drop] = _data(store_site / "tasks" / "drop" / "instances.js", "instances")
    assert [item["i"] for item in drop] == list(range(N))  # 4 > the 2 examples; not the file's 6
    for item in drop:
        k = item["i"]
        assert item == {"i": k, "id": f"drop-{k}", "q": f"<b>question {k}</b> of drop?",
                        "a": [f"gold {k}", "alt | span"]}  # fmt: skip
    [squad] = _data(store_site / "tasks" / "squad" / "instances.js", "instances")
    assert [item["i"] for item in squad] == list(range(N))
    assert squad[N - 2]["q"] == f"<b>question {N - 2}</b> of squad?"
    assert squad[N - 1] == {"i": N - 1, "id": f"squad-{N - 1}", "q": None, "a": []}
    page = (store_site / "tasks" / "squad.html").read_text(encoding="utf-8")
    assert f"{N} instances" in page and "1 without a question" in page
    assert "from <code>squad.gen.examples.jsonl</code>" in page  # the prompt: the examples file
    drop_page = (store_site / "tasks" / "drop.html").read_text(encoding="utf-8")
    assert "without a question" not in drop_page
    for path in [*store_site.rglob("*.html"), *(store_site / "tasks").rglob("*.js")]:
        assert "<b>question" not in path.read_text(encoding="utf-8"), path


def test_store_browser_columns_at_1366(store_site, browser):
    """Every instance a model has is shown; the generation takes the table's room (wider than the
    model's column, whose name wraps), its whitespace kept; an instance without a question says so."""
    with watched(browser, width=1366, height=900) as w:
        page = w.goto((store_site / "tasks" / "squad.html").as_uri())
        page.wait_for_function(
            "document.querySelectorAll('#gen-list .generation').length > 0 && "
            "!document.querySelector('#gen-list').textContent.includes('loading…')"
        )
        articles = page.locator("#gen-list .instance")
        assert articles.count() == N
        questions = page.locator("#gen-list .question").all_text_contents()
        assert questions[N - 2] == f"<b>question {N - 2}</b> of squad?"
        assert "question not available" in questions[N - 1]
        assert page.locator("#gen-list .instance").nth(N - 1).locator(".generation").count() >= 1
        widths = page.evaluate(
            """() => [...document.querySelectorAll('#gen-list .gen-preds tbody tr')]
              .filter(row => row.querySelector('td.generation'))
              .map(row => [row.querySelector('th').getBoundingClientRect().width,
                           row.querySelector('td.generation').getBoundingClientRect().width,
                           row.closest('table').getBoundingClientRect().width])"""
        )
        assert widths
        for model, generation, table in widths:
            assert generation > model and generation > table / 2, (model, generation, table)
        assert not _overlaps(page, "#gen-list .gen-preds")
        texts = articles.nth(1).locator(".generation pre").all_text_contents()
        assert texts and set(texts) == {" answer 1\n"}  # whitespace kept
        assert (
            page.evaluate("getComputedStyle(document.querySelector('#gen-list .generation pre')).whiteSpace")
            == "pre-wrap"
        )
        name = page.locator("#gen-list .gen-preds tbody th").first
        assert page.evaluate("(n) => getComputedStyle(n).whiteSpace", name.element_handle()) == "normal"
        assert page.locator("#gen-list script").count() == 0
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366
        assert not w.errors, w.errors
