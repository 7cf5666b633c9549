"""The Snakemake workflow end to end on a tiny model and two tasks, and its failure modes."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from olmes.core.numerics import within_tolerance
from tests.helpers import (
    WORKFLOW_LIMIT,
    WORKFLOW_ROBUSTNESS,
    WORKFLOW_SETS,
    WORKFLOW_TASKS,
    workflow_environment,
    write_workflow_config,
)
from tests.tiny_model import build_tiny_model

pytestmark = pytest.mark.slow  # the workflow end to end under snakemake

REPO = Path(__file__).resolve().parent.parent
LOGPROB_FILES = sum(len(sets) for sets in WORKFLOW_SETS.values())  # per model
METHODS = {task: ["cf_none", "cf_token", "cf_char", *(["cf_pmi"] if "pmi" in sets else []), "mcf"]
           for task, sets in WORKFLOW_SETS.items()}  # fmt: skip
ROBUSTNESS_LOGPROB_FILES = len(WORKFLOW_SETS["arc_challenge"]) + 1  # per model: var2's request sets, mcf_rot


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {
        "Tiny": build_tiny_model(root / "tiny", seed=0),
        "Tiny2": build_tiny_model(root / "tiny2", seed=1),
    }


def _snakemake(workdir: Path, *args: str, profile: str = "default") -> subprocess.CompletedProcess:
    command = [
        str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile"), "--directory",
        str(workdir), "--workflow-profile", str(REPO / "workflow" / "profiles" / profile), *args,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env=workflow_environment(), timeout=900)


def _olmes(*args: str) -> None:
    done = subprocess.run(["olmes", *args], capture_output=True, text=True, env=workflow_environment())
    assert done.returncode == 0, done.stderr


GENERATIVE = ["naturalqs_open"]  # an OLMES v0.2 generative task: short prompts, quick with a tiny model


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, tiny_models) -> Path:
    workdir = tmp_path_factory.mktemp("workflow")
    write_workflow_config(workdir, {"Tiny": tiny_models["Tiny"]}, generative_tasks=GENERATIVE)
    done = _snakemake(workdir, "--cores", "2", "evaluate")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return workdir


def test_outputs_exist(finished_run: Path) -> None:
    results = finished_run / "results"
    for task in WORKFLOW_TASKS:
        for request_set in WORKFLOW_SETS[task]:
            assert (results / "requests" / f"{task}.{request_set}.jsonl").is_file()
            assert (results / "logprobs" / "Tiny" / f"{task}.{request_set}.parquet").is_file()
            assert (results / "logprobs" / "Tiny" / f"{task}.{request_set}.parquet.run.json").is_file()
        assert (results / "requests" / f"{task}.instances.jsonl").is_file()
        for method in METHODS[task]:
            assert (results / "predictions" / "Tiny" / f"{task}.{method}.parquet").is_file()
        assert (results / "scores" / "Tiny" / f"{task}.scores.json").is_file()
    assert not (results / "requests" / "winogrande.pmi.jsonl").exists()
    assert (results / "tables" / "index.json").is_file()
    assert list((results / "tables").glob("*.tex"))
    assert (results / "site" / "index.html").is_file()
    var2 = json.loads((results / "variants/var2/scores/Tiny/arc_challenge.scores.json").read_text())
    assert var2["variant"] == "var2" and var2["n_instances"] == WORKFLOW_LIMIT
    var2_requests = (results / "variants/var2/requests/arc_challenge.cf.jsonl").read_text().splitlines()
    assert len(var2_requests) == 12  # WORKFLOW_LIMIT instances x 4 choices, every one labelled var2
    assert all('"variant": "var2"' in line for line in var2_requests)
    assert json.loads((results / "scores/Tiny/winogrande.rotations.json").read_text())["rotations"] == 2
    table5 = json.loads((results / "tables" / "table5_variants.json").read_text())
    assert table5["header"][3:5] == ["orig", "var2"] and [row[:3] for row in table5["rows"]] == [
        ["Tiny", "ARC-Challenge", str(WORKFLOW_LIMIT)]
    ]  # fmt: skip
    assert 'id="rotations"' in (results / "site" / "robustness.html").read_text()
    # one log-prob job for the model: at most one load (none when the cache has every request), one
    # run record per log-prob file
    log = (results / "logs" / "logprobs" / "Tiny.log").read_text()
    assert log.count("olmes: loaded ") <= 1, log
    assert log.count(" requests (") == LOGPROB_FILES + ROBUSTNESS_LOGPROB_FILES, log
    # the generative task: requests, generations, summary; its table and task page
    assert len((results / "requests" / "naturalqs_open.gen.jsonl").read_text().splitlines()) == WORKFLOW_LIMIT
    summary = json.loads((results / "generative" / "Tiny" / "naturalqs_open.generative.json").read_text())
    assert (
        summary["n_instances"] == WORKFLOW_LIMIT and summary["partial"] and summary["version"] == "OLMES v0.2"
    )
    assert (results / "generative" / "Tiny" / "naturalqs_open.generations.parquet.run.json").is_file()
    generative = json.loads((results / "tables" / "generative_scores.json").read_text())
    assert [row["model"] for row in generative["records"]] == ["Tiny"]
    assert "Tiny" in (results / "site" / "tasks" / "naturalqs_open.html").read_text()


def test_outputs_agree_with_commands_run_by_hand(finished_run: Path, tiny_models, tmp_path) -> None:
    results = finished_run / "results"
    task = "arc_challenge"
    for request_set in WORKFLOW_SETS[task]:
        requests = tmp_path / f"{request_set}.jsonl"
        _olmes("requests", task, "--request-set", request_set, "--limit", str(WORKFLOW_LIMIT),
               "--output", str(requests))  # fmt: skip
        assert requests.read_bytes() == (results / "requests" / f"{task}.{request_set}.jsonl").read_bytes()
        logprobs = tmp_path / f"{request_set}.parquet"
        _olmes("logprobs", "--model", str(tiny_models["Tiny"]), "--requests", str(requests), "--output",
               str(logprobs), "--no-cache", "--quiet")  # fmt: skip
        by_hand = pd.read_parquet(logprobs)
        by_workflow = pd.read_parquet(results / "logprobs" / "Tiny" / f"{task}.{request_set}.parquet")
        pd.testing.assert_frame_equal(
            by_hand.drop(columns="sum_logprob"), by_workflow.drop(columns="sum_logprob")
        )
        assert within_tolerance(
            by_hand["sum_logprob"], by_workflow["sum_logprob"], by_hand["num_tokens"]
        ).all()
    summary = tmp_path / "s.scores.json"
    _olmes("score", "--model-name", "Tiny", "--task", task, "--cf", str(tmp_path / "cf.parquet"), "--pmi",
           str(tmp_path / "pmi.parquet"), "--mcf", str(tmp_path / "mcf.parquet"),
           "--limit", str(WORKFLOW_LIMIT), "--predictions", str(tmp_path / "p.parquet"),
           "--summary", str(summary))  # fmt: skip
    mine = json.loads(summary.read_text())
    theirs = json.loads((results / "scores" / "Tiny" / f"{task}.scores.json").read_text())
    assert list(mine["methods"]) == list(theirs["methods"]) == METHODS[task]
    assert mine["best_of_two"] == theirs["best_of_two"]
    assert mine["partial"] is theirs["partial"] is True


def test_second_run_has_nothing_to_do(finished_run: Path) -> None:
    done = _snakemake(finished_run, "--cores", "2", "-n", "evaluate")
    assert done.returncode == 0
    assert "Nothing to be done" in done.stdout + done.stderr


def test_adding_a_model_runs_only_that_models_jobs(finished_run: Path, tiny_models, tmp_path) -> None:
    workdir = tmp_path / "added"
    subprocess.run(["cp", "-a", f"{finished_run}/.", str(workdir)], check=True)
    write_workflow_config(workdir, tiny_models, generative_tasks=GENERATIVE)
    done = _snakemake(workdir, "evaluate", "--cores", "2", "-n", "--quiet", "rules")
    counts = _job_counts(done.stdout + done.stderr)
    assert counts.get("logprobs") == 1  # one job makes all of a model's log-prob files
    assert counts.get("generate") == 1 and counts.get("score_generative") == 1
    assert "generation_requests" not in counts
    assert counts.get("predict") == sum(len(methods) for methods in METHODS.values()) + len(
        METHODS["arc_challenge"]
    )
    assert counts.get("score") == len(WORKFLOW_TASKS) + 1 and counts.get("rotations") == 1
    assert "requests" not in counts and "instances" not in counts


def test_publish_then_the_leaderboard_with_its_reproduction(
    finished_run: Path, tiny_models, tmp_path
) -> None:
    """publish refuses the partial run unless asked; the default target then builds the store's site and
    recomputes the store model's first instances here (the tiny model's weights are a local folder)."""
    workdir = tmp_path / "published"
    subprocess.run(["cp", "-a", f"{finished_run}/.", str(workdir)], check=True)
    done = _snakemake(workdir, "--cores", "2", "publish")
    assert done.returncode != 0
    assert "is partial" in (workdir / "results" / "logs" / "publish.log").read_text()
    write_workflow_config(
        workdir,
        {"Tiny": tiny_models["Tiny"]},
        publish={"partial": True, "replace": False},
        generative_tasks=GENERATIVE,
        reproduce_generative=2,
    )
    done = _snakemake(workdir, "--cores", "2", "publish")
    assert done.returncode == 0, done.stderr[-3000:]
    published = (workdir / "results" / "published.txt").read_text()
    assert (
        "Tiny: 2 task(s) (2 partial), 2 robustness result(s), 1 generative task(s) (1 partial)" in published
    )
    done = _snakemake(workdir, "--cores", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((workdir / "results" / "reproduction" / "Tiny.json").read_text())
    assert report["limit"] == 5 and report["same_fingerprint"]
    assert [task["instances"] for task in report["tasks"]] == [WORKFLOW_LIMIT] * len(WORKFLOW_TASKS)
    assert report["identical"] == report["decisions"] > 0 and report["beyond_tolerance"] == 0
    assert report["verdict"] == "reproduced" and report["max_share_of_tolerance"] <= 1
    (generated,) = report["generative"]  # the generative task's first 2 instances generated again
    assert generated["task"] == "naturalqs_open" and generated["instances"] == 2
    assert generated["identical"] == 2 and generated["differing"] == [] and generated["max_abs_delta"] < 1e-4
    assert "reproduced: " in done.stdout + done.stderr and "decisions identical" in done.stdout + done.stderr
    site = workdir / "site"
    assert "decisions identical" in (site / "index.html").read_text()
    assert (site / "reproduction.html").is_file()
    assert [page.name for page in (site / "models").glob("*.html")] == ["Tiny.html"]
    assert len(list((site / "reported").glob("*.html"))) == 40  # the rule passes --reported
    assert "ARC-Challenge" in (site / "robustness.html").read_text()  # the store's robustness results
    # the store names the local folder by its last part; --weights elsewhere must be the same weights
    record = json.loads((workdir / "leaderboard" / "models" / "Tiny" / "model.json").read_text())
    assert record["spec"] == Path(tiny_models["Tiny"]).name
    other = subprocess.run(
        [str(Path(sys.executable).parent / "olmes"), "reproduce", "Tiny", "--store", "leaderboard",
         "--weights", str(tiny_models["Tiny2"]), "--workdir", "w", "--output", "w.json"],
        cwd=workdir, capture_output=True, text=True,
    )  # fmt: skip
    assert other.returncode == 2 and "is not the weights of Tiny" in other.stderr


def _job_counts(text: str) -> dict[str, int]:
    counts, in_table = {}, False
    for line in text.splitlines():
        parts = line.split()
        if parts[:2] == ["job", "count"]:
            in_table = True
        elif in_table and len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
            counts[parts[0]] = int(parts[1])
    return counts


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"tasks": ["arc_challenge", "nosuchtask"]}, "tasks[1]"),
        ({"limit": -5}, "limit"),
        ({"models": {"M": {"spec": "no-such-short-name"}}}, "models.M.spec"),
        ({"source": "internet"}, "source"),
        ({"robustness": {**WORKFLOW_ROBUSTNESS, "variants": ["var7"]}}, "robustness.variants[0]"),
        ({"robustness": {**WORKFLOW_ROBUSTNESS, "rotation_tasks": ["piqa"]}}, "robustness.rotation_tasks"),
    ],
)
def test_bad_config_stops_before_any_job(tmp_path, tiny_models, overrides: dict, key: str) -> None:
    write_workflow_config(tmp_path, {"Tiny": tiny_models["Tiny"]}, **overrides)
    done = _snakemake(tmp_path, "--cores", "1")
    assert done.returncode != 0
    assert f"config key '{key}'" in done.stderr
    assert not (tmp_path / "results").exists()


def test_jobs_run_the_olmes_beside_snakemake_without_an_activated_venv(tmp_path, tiny_models) -> None:
    """`.venv/bin/snakemake` with no olmes on PATH (the venv not activated): its jobs still find olmes."""
    bare_path = os.pathsep.join(["/usr/bin", "/bin"])
    assert shutil.which("olmes", path=bare_path) is None
    write_workflow_config(tmp_path, {"Tiny": tiny_models["Tiny"]})
    target = f"results/requests/{WORKFLOW_TASKS[0]}.instances.jsonl"
    command = [
        str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile"), "--directory",
        str(tmp_path), "--cores", "1", target,
    ]  # fmt: skip
    env = {**os.environ, "PATH": bare_path}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len((tmp_path / target).read_text().splitlines()) == WORKFLOW_LIMIT


def test_slurm_profile_dry_run_shows_one_gpu_job_per_model_with_its_resources(tmp_path, tiny_models) -> None:
    pytest.importorskip("snakemake_executor_plugin_slurm")
    spec = str(tiny_models["Tiny2"])
    models = {"Tiny": {"spec": str(tiny_models["Tiny"])},
              "Big": {"spec": spec, "parameters": 70.55, "dtype": "bfloat16"},
              "Given": {"spec": spec, "resources": {"gpus": 3, "mem_mb": 5000}}}  # fmt: skip
    write_workflow_config(tmp_path, {}, models=models)
    done = _snakemake(tmp_path, "evaluate", "-n", profile="slurm")
    assert done.returncode == 0, done.stderr[-2000:]
    output = done.stdout + done.stderr
    assert _job_counts(output)["logprobs"] == len(models)
    job = (  # the job's lines, wildcards then resources, with others (e.g. threads) between them
        r"rule logprobs:\n(?:    .*\n)*?    wildcards: model=(\S+)\n"
        r"(?:    (?!resources:).*\n)*?    resources: (.*)"
    )
    jobs = re.findall(job, output)
    resources = {model: dict(item.split("=", 1) for item in line.split(", ")) for model, line in jobs}
    assert sorted(resources) == sorted(models)
    assert resources["Tiny"]["gpu"] == "1" and int(resources["Big"]["gpu"]) >= 2  # 141 GB of weights
    assert int(resources["Big"]["mem_mb"]) > 141_000 > int(resources["Tiny"]["mem_mb"])
    assert (resources["Given"]["gpu"], resources["Given"]["mem_mb"]) == ("3", "5000")
    assert "Group job" not in output


def test_lint_is_clean() -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "snakemake"), "--lint", "-s", str(REPO / "Snakefile")],
        capture_output=True, text=True, cwd=REPO, env=workflow_environment(),
    )  # fmt: skip
    assert done.returncode == 0 and "Congratulations" in done.stdout + done.stderr, done.stdout + done.stderr
