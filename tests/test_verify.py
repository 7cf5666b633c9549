"""``olmes verify``: a clean store passes, and each way of tampering with a store at rest is caught
with a line naming the file. The store is small (one model, OpenBookQA, made-up log-probs: the
helpers of tests/test_store.py), built once and copied fresh for each tamper."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from olmes.cli.main import main
from olmes.core.resources import file_sha256
from olmes.scoring.predictions import write_predictions
from olmes.store.publish import publish
from olmes.store.readme_table import readme_row
from tests.helpers import TASK, make_results

MODEL = "M1"


@pytest.fixture
def leaderboard(built, tmp_path) -> Path:
    copy = tmp_path / "repo" / "leaderboard"
    shutil.copytree(built, copy)
    return copy


def verify(*args: str) -> tuple[int, list[str]]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["verify", *args])
    return code, err.getvalue().splitlines()


def problems_of(root: Path, *args: str) -> list[str]:
    code, lines = verify(str(root), *args)
    problems = [line for line in lines if line.startswith("olmes: verify: ") and ": note: " not in line]
    assert code == (1 if len(problems) > 1 else 0), lines  # the last line is the summary
    return problems[:-1]


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def summary_path(root: Path) -> Path:
    return root / "models" / MODEL / "scores" / f"{TASK}.scores.json"


def test_a_clean_store_passes(leaderboard) -> None:
    code, lines = verify(str(leaderboard))
    assert code == 0 and lines[-1].startswith("olmes: verify: clean: 1 model(s), 1 result(s) checked"), lines


def test_an_edited_accuracy_is_caught(leaderboard) -> None:
    edit_json(summary_path(leaderboard), lambda s: s["methods"]["mcf"].update(accuracy=0.99))
    found = problems_of(leaderboard)
    assert found and all(line.startswith(f"olmes: verify: {summary_path(leaderboard)}: ") for line in found)
    assert any("methods.mcf accuracy is 0.99, its log-probs give" in line for line in found), found


def test_a_flipped_prediction_with_its_hash_updated_is_caught(leaderboard) -> None:
    predictions = summary_path(leaderboard).parent / f"{TASK}.predictions.parquet"
    frame = pd.read_parquet(predictions)
    first = frame.index[frame["method"] == "mcf"][0]
    frame.loc[first, "prediction"] = (frame.loc[first, "prediction"] + 1) % frame.loc[first, "num_choices"]
    write_predictions(frame, predictions)
    edit_json(summary_path(leaderboard), lambda s: s["predictions"].update(sha256=file_sha256(predictions)))
    assert problems_of(leaderboard) == [
        f"olmes: verify: {predictions}: 1 prediction row(s) differ from those its log-probs give"
    ]


def _change_a_logprob(path: Path) -> None:
    """The gold choice of the first instance gets the best log-prob: its decision changes."""
    frame = pd.read_parquet(path)
    first = frame.index[(frame["instance_index"] == 0) & (frame["choice"] == frame["label"])][0]
    frame.loc[first, "sum_logprob"] = -0.01
    schema = pq.read_schema(path)
    pq.write_table(pa.Table.from_pandas(frame, schema=schema, preserve_index=False), path)


def test_a_changed_logprob_is_caught_by_its_hash_or_by_the_recompute(leaderboard) -> None:
    logprobs = leaderboard / "models" / MODEL / "logprobs" / f"{TASK}.mcf.parquet"
    _change_a_logprob(logprobs)
    found = problems_of(leaderboard)
    assert len(found) == 1 and f"{logprobs} changed after its score summary was written" in found[0], found
    edit_json(summary_path(leaderboard), lambda s: s["inputs"]["mcf"].update(sha256=file_sha256(logprobs)))
    found = problems_of(leaderboard)
    assert any(f"{summary_path(leaderboard)}: methods.mcf " in line for line in found), found
    assert any(line.endswith("prediction row(s) differ from those its log-probs give") for line in found)


def test_a_request_set_made_with_other_prompts_is_caught(leaderboard, tmp_path) -> None:
    def one_more_space(row):
        return {**row, "context": row["context"].replace("Answer:", "Answer: ", 1)}

    other = make_results(tmp_path / "other", MODEL, tamper=one_more_space)
    folder = leaderboard / "models" / MODEL
    for name in (f"{TASK}.cf.parquet", f"{TASK}.cf.parquet.run.json"):
        shutil.copyfile(other / "logprobs" / MODEL / name, folder / "logprobs" / name)
    for name in (f"{TASK}.scores.json", f"{TASK}.predictions.parquet"):
        shutil.copyfile(other / "scores" / MODEL / name, folder / "scores" / name)
    sha256 = json.loads((folder / "scores" / f"{TASK}.scores.json").read_text())["inputs"]["cf"]["run"]
    edit_json(
        folder / "model.json",
        lambda r: r["tasks"][TASK]["requests_sha256"].update(cf=sha256["requests_sha256"]),
    )
    found = problems_of(leaderboard)
    assert found[0].startswith(f"olmes: verify: {summary_path(leaderboard)}: "), found
    assert f"{MODEL} {TASK} cf: made with other requests" in found[0]
    # the copied summary embeds the results folder's run records, not the store's (olmes.store.claims)
    assert all(line.endswith("run is not the run record beside its log-prob file") for line in found[1:])


def test_a_partial_result_without_its_label_is_caught(tmp_path) -> None:
    root = tmp_path / "leaderboard"
    publish(make_results(tmp_path / "results", MODEL, limit=7), root, allow_partial=True)
    assert problems_of(root) == []
    edit_json(summary_path(root), lambda s: s.update(partial=False, partial_reasons=[]))
    edit_json(root / "models" / MODEL / "model.json", lambda r: r["tasks"][TASK].update(partial=False))
    found = problems_of(root)
    assert found[0] == (
        f"olmes: verify: {summary_path(root)}: labelled partial=False [], but it is partial=True "
        "['run with limit 7', '7 instances scored, the standard has 500']"
    ), found


def test_a_model_folder_with_two_fingerprints_is_caught(leaderboard) -> None:
    record = leaderboard / "models" / MODEL / "logprobs" / f"{TASK}.pmi.parquet.run.json"
    edit_json(record, lambda r: r.update(model_fingerprint="e" * 32))
    found = problems_of(leaderboard)
    model_json = leaderboard / "models" / MODEL / "model.json"
    assert any(
        line.startswith(f"olmes: verify: {model_json}: the model folder holds results of 2 models: ")
        and f"{'e' * 32} in 1 file(s), e.g. logprobs/{TASK}.pmi.parquet.run.json" in line
        for line in found
    ), found


README_COLUMNS = ["model", "task", "OLMES", "CF (normalization)", "MCF", "score summary"]


def write_readme(root: Path, columns: list[str], edit: dict[str, str] | None = None) -> Path:
    """A README beside the store ``root`` whose table of published results has ``columns`` (in that
    order) and one row, the store's OpenBookQA, with the cells of ``edit`` changed."""
    summary = json.loads(summary_path(root).read_text())
    link = f"[{TASK}.scores.json]({root.name}/models/{MODEL}/scores/{TASK}.scores.json)"
    cells = {**readme_row(root, summary), "score summary": link, **(edit or {})}
    readme = root.parent / "README.md"
    table = [
        f"| {' | '.join(columns)} |",
        f"|{'---|' * len(columns)}",
        f"| {' | '.join(cells[c] for c in columns)} |",
    ]
    readme.write_text("\n".join(["# results", "", *table]) + "\n")
    return readme


def test_a_readme_row_that_disagrees_with_the_store_is_caught(leaderboard) -> None:
    write_readme(leaderboard, README_COLUMNS)
    assert problems_of(leaderboard) == []
    olmes = readme_row(leaderboard, json.loads(summary_path(leaderboard).read_text()))["OLMES"]
    readme = write_readme(leaderboard, README_COLUMNS, {"OLMES": "99.9"})
    assert problems_of(leaderboard) == [
        f"olmes: verify: {readme}: line 5, column 3: '99.9', the store says {olmes!r}"
    ]


def test_a_readme_table_is_read_by_its_header_whatever_the_order_of_its_columns(leaderboard) -> None:
    columns = ["score summary", "MCF", "task", "OLMES", "model", "CF (normalization)"]
    write_readme(leaderboard, columns)
    assert problems_of(leaderboard) == []
    mcf = readme_row(leaderboard, json.loads(summary_path(leaderboard).read_text()))["MCF"]
    readme = write_readme(leaderboard, columns, {"MCF": "12.3"})
    assert problems_of(leaderboard) == [
        f"olmes: verify: {readme}: line 5, column 2: '12.3', the store says {mcf!r}"
    ]


def test_the_readme_of_a_store_in_a_folder_of_any_name_is_checked(built, tmp_path) -> None:
    root = tmp_path / "repo" / "published"
    shutil.copytree(built, root)
    write_readme(root, README_COLUMNS)
    assert problems_of(root) == []
    olmes = readme_row(root, json.loads(summary_path(root).read_text()))["OLMES"]
    readme = write_readme(root, README_COLUMNS, {"OLMES": "99.9"})
    assert problems_of(root) == [
        f"olmes: verify: {readme}: line 5, column 3: '99.9', the store says {olmes!r}"
    ]


def test_an_external_logprob_file_not_here_says_to_fetch_it(tmp_path) -> None:
    root = tmp_path / "leaderboard"
    publish(make_results(tmp_path / "results", MODEL), root)  # log-probs to blobs/
    shutil.rmtree(root / "blobs")
    found = problems_of(root)
    assert found and all("fetch it with olmes fetch-logprobs" in line for line in found), found
    code, lines = verify(str(root), "--no-logprobs")
    assert code == 0 and any("not recomputed, its log-prob files are not here" in line for line in lines)


def _git(repo: Path, *args: str) -> str:
    command = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def test_base_checks_only_the_changed_models_and_writes_the_summary(leaderboard, tmp_path) -> None:
    repo = leaderboard.parent
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "store")
    publish(make_results(tmp_path / "more", "M2", seed=3), leaderboard, logprobs="in-store")
    edit_json(summary_path(leaderboard), lambda s: s["methods"]["mcf"].update(accuracy=0.99))  # M1: committed
    report = tmp_path / "summary.md"
    code, lines = verify(str(leaderboard), "--base", "HEAD", "--summary", str(report))
    assert lines[0] == "olmes: verify: against HEAD: added: M2", lines
    assert code == 1 and any(str(summary_path(leaderboard)) in line for line in lines)  # M1 changed too
    markdown = report.read_text()
    assert "#### M2 (`M2`): added" in markdown and "| OpenBookQA |" in markdown
    assert "#### M1 (`M1`): replaced" in markdown and "problem(s)" in markdown
