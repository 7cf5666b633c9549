"""The task registry is the one home of every per-task fact.

A made-up task is added in one place (a record in ``TASKS``, plus its template value in ``TEMPLATES``
and its curated shots, which are data) and must then show up everywhere a task does: the config
check, requests, scoring, tables and site.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from olmes.cli.config import validate_config
from olmes.cli.main import main
from olmes.core.errors import OlmesError
from olmes.core.records import write_records
from olmes.core.tasks import TASKS, Task
from olmes.requests.build import build_requests, request_sets
from olmes.requests.tasks import TEMPLATES
from olmes.requests.tasks.base import curated_fewshot
from olmes.requests.tasks.question_answer import CSQA
from tests.helpers import engine_logprobs

REPO = Path(__file__).resolve().parent.parent
WHY = "Made-up reason <for> a made-up task & its normalization."


@pytest.fixture
def toy_task(monkeypatch):
    """CommonsenseQA's data under another name, template family, facts and normalization."""
    toy = dataclasses.replace(
        CSQA,
        key="toyqa",
        display_name="Toy QA",
        short_name="TOY",
        recommended_norm="token",
        why_norm=WHY,
    )
    monkeypatch.setitem(TASKS, toy.key, toy)
    monkeypatch.setitem(TEMPLATES, toy.key, toy)
    monkeypatch.setitem(curated_fewshot(), toy.key, curated_fewshot()["csqa"])
    return toy


def test_every_task_has_a_template_made_from_its_registered_facts():
    assert list(TEMPLATES) == list(TASKS)
    for key, template in TEMPLATES.items():
        facts = {fact.name: getattr(TASKS[key], fact.name) for fact in dataclasses.fields(Task)}
        assert {name: getattr(template, name) for name in facts} == facts


def test_config_schema_takes_its_task_list_from_the_registry(toy_task):
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    schema = REPO / "workflow" / "schemas" / "config.schema.yaml"
    validate_config({**config, "tasks": list(TASKS)}, schema)
    with pytest.raises(Exception, match="'nosuchtask' is not one of"):
        validate_config({**config, "tasks": ["nosuchtask"]}, schema)


@pytest.mark.parametrize(("value", "valid"), [("auto", True), (512, True), (32, False), ("big", False)])
def test_max_batch_tokens_is_a_number_or_auto(value, valid):
    config = {**yaml.safe_load((REPO / "config" / "config.yaml").read_text()), "max_batch_tokens": value}
    schema = REPO / "workflow" / "schemas" / "config.schema.yaml"
    if valid:
        validate_config(config, schema)
    else:
        with pytest.raises(OlmesError, match="config key 'max_batch_tokens'"):
            validate_config(config, schema)


def test_tasks_command_lists_the_registry(toy_task, capsys):
    assert main(["tasks", "--json"]) == 0
    listed = {row["task"]: row for row in json.loads(capsys.readouterr().out)}
    assert list(listed) == list(TASKS)
    assert listed["toyqa"]["instances"] == 1221 and listed["toyqa"]["cf_normalization"] == "token"


def test_made_up_task_reaches_requests_scores_tables_and_site(toy_task, tmp_path):
    folders = {name: tmp_path / name for name in ("requests", "logprobs", "scores", "tables", "site")}
    args = []
    for formulation in request_sets(toy_task):  # cf, pmi (CSQA's record scores pmi), mcf
        rows = build_requests("toyqa", formulation, limit=4)
        assert {row["task"] for row in rows} == {"toyqa"} and len({r["instance_index"] for r in rows}) == 4
        write_records(rows, folders["requests"] / f"toyqa.{formulation}.jsonl")
        path = folders["logprobs"] / f"toyqa.{formulation}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        engine_logprobs(rows, "m", 7).to_parquet(path, index=False)
        args += [f"--{formulation}", str(path)]
    assert (
        main(
            [
                "score",
                "--model-name",
                "m",
                "--task",
                "toyqa",
                *args,
                "--limit",
                "4",
                "--predictions",
                str(folders["scores"] / "toyqa.predictions.parquet"),
                "--summary",
                str(folders["scores"] / "toyqa.scores.json"),
            ]
        )  # fmt: skip
        == 0
    )
    summary = json.loads((folders["scores"] / "toyqa.scores.json").read_text())
    assert summary["display_name"] == "Toy QA" and summary["full_count"] == 1221
    assert summary["recommended_norm"] == "token" and summary["best_of_two"]["cf_method"] == "cf_token"
    assert summary["partial"] and "cf_pmi" in summary["methods"]  # CSQA's record has pmi rows

    assert main(["tables", "--scores", str(folders["scores"]), "--out", str(folders["tables"])]) == 0
    table4 = json.loads((folders["tables"] / "table4_olmes.json").read_text())
    assert "Toy QA" in table4["header"]
    assert "TOY" in (folders["tables"] / "table4_olmes.tex").read_text()

    site = folders["site"]
    command = ["site", "--scores", str(folders["scores"]), "--tables", str(folders["tables"])]
    assert main([*command, "--requests", str(folders["requests"]), "--out", str(site)]) == 0
    page = (site / "tasks" / "toyqa.html").read_text()
    assert "Toy QA" in page and "Made-up reason &lt;for&gt; a made-up task &amp; its normalization." in page
    assert "all 1221" in page
    assert "token for" in (site / "methods.html").read_text()
