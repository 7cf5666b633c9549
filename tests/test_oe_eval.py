"""olmes import / export oe-eval: results of AI2's OLMES implementation, checked and scored as ours.

The fixtures in tests/data/oe_eval/ are what AI2's implementation really wrote when it ran here
offline on the embedded SmolLM2 (each folder's SOURCE.md says how); the round trip uses the
committed store's SmolLM2 results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from olmes.core.numerics import within_tolerance
from olmes.store.verify import verify_store
from tests.helpers import olmes

pytestmark = pytest.mark.slow  # the embedded SmolLM2 on real oe-eval runs

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "oe_eval"
STORE = REPO / "leaderboard"
STORE_MODEL = "SmolLM2-135M"
SPEC = "smollm2-135m"


def new_store(path: Path) -> Path:
    path.mkdir()
    (path / "store.json").write_text('{"format": "olmes.store/1"}\n')
    return path


DISPLAY = "SmolLM2-135M imported instruct Q4_1 GGUF"


def import_run(run: Path, output: Path, model: str = "Imported", *args: str) -> tuple[int, str]:
    return olmes("import", "oe-eval", str(run), "--model", model, "--model-spec", SPEC,
                 "--output", str(output), *args)  # fmt: skip


def summary(folder: Path, model: str, task: str) -> dict:
    return json.loads((folder / "scores" / model / f"{task}.scores.json").read_text())


# -- the round trip: ours exported, read back ------------------------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "run"
    code, err = olmes("export", "oe-eval", "--from", str(STORE), "--model", STORE_MODEL,
                      "--tasks", "openbookqa", "--output", str(out))  # fmt: skip
    assert code == 0, err
    return out


def test_export_writes_the_layout_of_oe_eval(exported):
    names = sorted(path.name for path in exported.iterdir())
    assert names == [
        "metrics-all.jsonl", "metrics.json",
        "task-000-openbookqa-metrics.json", "task-000-openbookqa-predictions.jsonl",
        "task-000-openbookqa-requests.jsonl",
        "task-001-openbookqa-metrics.json", "task-001-openbookqa-predictions.jsonl",
        "task-001-openbookqa-requests.jsonl",
    ]  # fmt: skip
    rc = json.loads((exported / "task-000-openbookqa-metrics.json").read_text())
    stored = json.loads((STORE / "models" / STORE_MODEL / "scores" / "openbookqa.scores.json").read_text())
    assert rc["task_config"]["metadata"]["alias"] == "openbookqa:rc::olmes"
    assert rc["metrics"]["acc_uncond"] == stored["methods"]["cf_pmi"]["accuracy"]
    assert rc["metrics"]["primary_score"] == rc["metrics"]["acc_uncond"]  # pmi is OBQA's recommended norm
    assert rc["num_instances"] == 500 and rc["olmes_export"]["model"] == STORE_MODEL
    groups = {
        json.loads(line)["task_name"]: json.loads(line) for line in (exported / "metrics-all.jsonl").open()
    }
    best = groups["openbookqa::olmes"]["metrics"]["primary_score"]
    assert best == stored["best_of_two"]["score"]  # oe-eval's mc_or_rc is the OLMES best of two
    requests = [json.loads(line) for line in (exported / "task-000-openbookqa-requests.jsonl").open()]
    assert len(requests) == 500 * 4 * 2 and requests[-1]["doc_id"] == 1_000_499  # pmi at the offset


def test_export_read_back_by_the_importer_gives_the_same_scores(exported, tmp_path):
    # the display name names the model it is (SmolLM2) and says its qualifiers (olmes.store.checks)
    code, err = import_run(exported, tmp_path / "results", "Back", "--display-name", DISPLAY)
    assert code == 0, err
    assert (
        f"{DISPLAY} (Back) openbookqa: imported 500 instances (full; cf, mcf, pmi); 5 of 5 reported metrics "
        "equal ours" in err
    )
    stored = json.loads((STORE / "models" / STORE_MODEL / "scores" / "openbookqa.scores.json").read_text())
    back = summary(tmp_path / "results", "Back", "openbookqa")
    for key in ("methods", "best_of_two", "bpb", "n_instances", "partial", "limit"):
        assert back[key] == stored[key], key
    run = back["inputs"]["cf"]["run"]
    assert run["imported"]["implementation"] == "olmes export"  # never taken for AI2's own run
    assert run["imported"]["num_tokens_recounted"] == 0
    for request_set in ("cf", "pmi", "mcf"):
        ours = pd.read_parquet(
            STORE / "models" / STORE_MODEL / "logprobs" / f"openbookqa.{request_set}.parquet"
        )
        again = pd.read_parquet(tmp_path / "results/logprobs/Back" / f"openbookqa.{request_set}.parquet")
        columns = ["instance_index", "choice", "sum_logprob", "num_tokens", "num_chars", "num_bytes"]
        assert again[columns].equals(ours[columns]), request_set
    store = new_store(tmp_path / "store")
    code, err = olmes(
        "publish", "--from", str(tmp_path / "results"), "--store", str(store), "--logprobs", "in-store"
    )
    assert code == 0, err
    found = verify_store(store)
    assert not found.problems and found.results == 1


# -- a real run of AI2's implementation ------------------------------------------------------------

FIRST20 = DATA / "smollm2-first20"
TASKS_IN_RUN = ("arc_challenge", "csqa", "openbookqa", "mmlu")


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("imported") / "results"
    commit = "5a51f502d463b8cdc4a2dcad7d7096c41ff1197e"
    code, err = import_run(FIRST20, out, "Imported", "--commit", commit, "--display-name", DISPLAY)
    assert code == 0, err
    return out


@pytest.fixture(scope="module")
def ours(imported, tmp_path_factory) -> Path:
    """The same requests (the import's canonical request files) scored by olmes's own engine."""
    out = tmp_path_factory.mktemp("ours")
    args = []
    for path in sorted((imported / "requests" / "Imported").glob("*.jsonl")):
        args += ["--requests", str(path), "--output", str(out / f"{path.stem}.parquet")]
    code, err = olmes("logprobs", "--model", SPEC, "--no-cache", "--quiet", *args)
    assert code == 0, err
    return out


def test_a_real_oe_eval_run_imports_with_our_requests_and_log_probs(imported, ours):
    for path in sorted(ours.glob("*.parquet")):
        mine = pd.read_parquet(path)
        theirs = pd.read_parquet(imported / "logprobs" / "Imported" / path.name)
        assert theirs["num_tokens"].equals(mine["num_tokens"]), path.name  # recounted, not its 1s
        assert within_tolerance(theirs["sum_logprob"], mine["sum_logprob"], mine["num_tokens"]).all(), (
            path.name
        )
    for task in TASKS_IN_RUN:
        got = summary(imported, "Imported", task)
        assert got["partial"] and got["limit"] == 20 and got["n_instances"] == 20
        inputs = {f"{name}_path": ours / f"{task}.{name}.parquet" for name in got["inputs"]}
        from olmes.scoring.score import score_task

        mine, again = score_task("Imported", **inputs, limit=20)
        theirs = pd.read_parquet(imported / "scores" / "Imported" / f"{task}.predictions.parquet")
        assert theirs["prediction"].tolist() == mine["prediction"].tolist(), task  # every decision
        assert got["methods"] == again["methods"], task


def test_the_run_record_keeps_its_provenance_and_names_the_num_tokens_defect(imported):
    run = json.loads((imported / "logprobs" / "Imported" / "arc_challenge.cf.parquet.run.json").read_text())
    facts = run["imported"]
    assert facts["implementation"] == "oe-eval"
    assert facts["commit"] == "5a51f502d463b8cdc4a2dcad7d7096c41ff1197e"
    assert facts["model_config"]["model_path"] == "/work/oe-model/SmolLM2-135M-Instruct"
    assert facts["task_config"]["fewshot_source"] == "OLMES:ARC-Challenge"
    assert facts["num_tokens_recounted"] > 0  # its num_tokens are all 1
    assert set(facts["files_sha256"]) == {
        "task-000-arc_challenge-metrics.json", "task-000-arc_challenge-requests.jsonl",
        "task-000-arc_challenge-predictions.jsonl",
    }  # fmt: skip
    by_metric = {entry["metric"]: entry for entry in facts["comparison"]}
    assert set(by_metric) == {"acc_raw", "acc_per_token", "acc_per_char", "acc_uncond"}
    assert all(by_metric[m]["agrees"] for m in ("acc_raw", "acc_per_char", "acc_uncond"))
    assert all(by_metric[m]["differing_decisions"] == 0 for m in ("acc_raw", "acc_per_char", "acc_uncond"))
    token = by_metric["acc_per_token"]
    assert not token["agrees"] and "num_tokens 1" in token["note"]
    # its per-token picks are its raw picks: they differ from olmes's by far more than float error
    assert token["differing_decisions"] > token["ties_within_error"] and not token["agrees_within_error"]
    assert token["reported"] == by_metric["acc_raw"]["reported"]
    assert run["model"] == SPEC and run["tokens_forwarded"] == 0


def test_an_imported_run_publishes_and_verifies_like_any_other(imported, tmp_path):
    store = new_store(tmp_path / "store")
    code, err = olmes("publish", "--from", str(imported), "--store", str(store), "--partial")
    assert code == 0, err
    found = verify_store(store)
    assert not found.problems and found.results == len(TASKS_IN_RUN)
    record = json.loads((store / "models" / "Imported" / "model.json").read_text())
    assert record["display_name"] == DISPLAY
    tables = tmp_path / "tables"
    code, err = olmes("tables", "--store", str(store), "--out", str(tables), "--resamples", "20")
    assert code == 0, err
    code, err = olmes("site", "--store", str(store), "--tables", str(tables), "--out", str(tmp_path / "site"))
    assert code == 0, err
    page = (tmp_path / "site" / "models" / "Imported.html").read_text()
    assert "oe-eval at commit 5a51f502d463b8cdc4a2dcad7d7096c41ff1197e, imported (olmes import)" in page


def test_an_imported_run_exports_back_to_the_same_scores(imported, tmp_path):
    store = new_store(tmp_path / "store")
    assert olmes("publish", "--from", str(imported), "--store", str(store), "--partial",
                 "--logprobs", "in-store")[0] == 0  # fmt: skip
    code, err = olmes("export", "oe-eval", "--from", str(store), "--model", "Imported", "--output",
                      str(tmp_path / "run"))  # fmt: skip
    assert code == 0, err
    code, err = import_run(tmp_path / "run", tmp_path / "again", "Imported")
    assert code == 0, err
    for task in TASKS_IN_RUN:
        first, again = summary(imported, "Imported", task), summary(tmp_path / "again", "Imported", task)
        assert again["methods"] == first["methods"] and again["limit"] == 20, task


# -- what is refused, in one line -------------------------------------------------------------------


def refused(run: Path, tmp_path: Path) -> str:
    code, err = import_run(run, tmp_path / "results")
    assert code == 2 and err.startswith("olmes: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "results" / "scores").exists()
    return err


def test_a_sampled_instance_set_is_refused(tmp_path):
    err = refused(DATA / "smollm2-sampled", tmp_path)
    assert (
        "not the standard's instance set: its instance 0 is Mercury_405462, the standard's is Mercury_7175875"
        in err
    )
    assert "random_subsample_seed" in err


def test_another_shot_set_is_refused(tmp_path):
    err = refused(DATA / "smollm2-othershots", tmp_path)
    assert "instance 0 (Mercury_7175875) choice 0: context differs from the standard's at character 10" in err
    assert "in the few-shot examples" in err and "Lichens" in err


def edited_copy(tmp_path: Path, name: str, edit) -> Path:
    """A copy of the real run whose file ``name`` has each JSON line passed through ``edit``."""
    run = tmp_path / "run"
    shutil.copytree(FIRST20, run)
    path = run / name
    lines = [json.dumps(edit(json.loads(line))) for line in path.read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n")
    return run


def test_one_changed_prompt_is_refused_naming_it(tmp_path):
    def edit(row):
        if row["doc_id"] == 3 and row["idx"] == 2:
            head, tail = row["request"]["context"].rsplit("Answer:", 1)  # the question's own
            row["request"]["context"] = head + "Answer :" + tail
        return row

    err = refused(edited_copy(tmp_path, "task-002-csqa-requests.jsonl", edit), tmp_path)
    assert "task-002-csqa-requests.jsonl: instance 3" in err and "choice 2: context differs" in err
    assert "(in the question)" in err and "Answer :'" in err


def test_another_gold_is_refused(tmp_path):
    def edit(row):
        if row["doc_id"] == 5:
            row["label"] = (row["label"] + 1) % 4
        return row

    err = refused(edited_copy(tmp_path, "task-005-openbookqa:mc-requests.jsonl", edit), tmp_path)
    assert "instance 5" in err and "gold is" in err


def test_a_task_that_is_not_olmes_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for kind in ("metrics.json", "requests.jsonl", "predictions.jsonl"):
        (run / f"task-000-gsm8k-{kind}").write_text("{}\n" if kind != "metrics.json" else
                                                    '{"task_name": "gsm8k", "task_config": {}}')  # fmt: skip
    err = refused(run, tmp_path)
    assert "task 'gsm8k' is not a run of an OLMES task" in err


def test_missing_log_probs_are_refused(tmp_path):
    def edit(row):
        row["model_output"][0].pop("sum_logits_uncond")
        return row

    err = refused(edited_copy(tmp_path, "task-000-arc_challenge-predictions.jsonl", edit), tmp_path)
    assert "sum_logits_uncond is None, not a log-prob" in err


def test_a_model_name_that_is_no_folder_name_is_refused(tmp_path, capsys):
    import yaml

    from olmes.cli.argtypes import MODEL_NAME
    from olmes.cli.main import main

    with pytest.raises(SystemExit) as stopped:  # argparse's own one line
        main(
            [
                "import",
                "oe-eval",
                str(FIRST20),
                "--model",
                "../elsewhere",
                "--output",
                str(tmp_path / "results"),
            ]
        )
    assert stopped.value.code == 2 and "'../elsewhere' is not a model name" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert schema["properties"]["models"]["propertyNames"]["pattern"] == MODEL_NAME.pattern
