"""olmes import oe-eval refuses ambiguity and writes all or nothing (issue 37, cases 8-10).

Each run here is a copy of a few task files of the real oe-eval run (tests/data/oe_eval/smollm2-first20)
with one edit: a second line for one instance or request, a model named otherwise, a bad log-prob.
A refused import leaves the output exactly as it was; so does one interrupted while it builds, and
one interrupted while it swaps its folders in never leaves a model x task half old and half new."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from olmes.store.oe_eval import staging
from tests.helpers import olmes

REPO = Path(__file__).resolve().parent.parent
FIRST20 = REPO / "tests" / "data" / "oe_eval" / "smollm2-first20"
SPEC = "smollm2-135m"
MODEL = "Imported"
OBQA, CSQA, OBQA_MC = "task-004-openbookqa", "task-002-csqa", "task-005-openbookqa:mc"
RUN_FILES = ("metrics.json", "metrics-all.jsonl")


def run_of(folder: Path, *tasks: str) -> Path:
    """A run folder holding the real run's files of ``tasks`` and its metrics.json and metrics-all.jsonl."""
    folder.mkdir(parents=True)
    for task in tasks:
        for kind in ("metrics.json", "requests.jsonl", "predictions.jsonl"):
            shutil.copy(FIRST20 / f"{task}-{kind}", folder)
    for name in RUN_FILES:
        shutil.copy(FIRST20 / name, folder)
    return folder


def edit_lines(path: Path, edit) -> None:
    """Each JSON line of ``path`` passed through ``edit`` (which changes it in place)."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        edit(row)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def import_run(run: Path, output: Path, model: str = MODEL) -> tuple[int, str]:
    return olmes(
        "import", "oe-eval", str(run), "--model", model, "--model-spec", SPEC, "--output", str(output)
    )


def refused(run: Path, output: Path, model: str = MODEL) -> str:
    """The one error line of a refused import, which wrote nothing (a new output folder is not made)."""
    before = snapshot(output)
    code, err = import_run(run, output, model)
    assert code == 2 and err.startswith("olmes: error: ") and err.count("\n") == 1, err
    assert snapshot(output) == before, "a refused import changed the output"
    return err


def snapshot(folder: Path) -> dict[str, bytes] | None:
    """Every file under ``folder`` (hidden ones too) and its bytes; None when there is no folder."""
    if not folder.exists():
        return None
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# -- case 8: two lines for one instance or one request ------------------------------------------------


@pytest.mark.parametrize(
    ("second", "where", "lines"),
    [("different", "last", "4 and 21"), ("different", "first", "1 and 5"), ("identical", "last", "4 and 21")],
)
def test_two_predictions_of_one_instance_are_refused(tmp_path, second, where, lines):
    run = run_of(tmp_path / "run", OBQA)
    path = run / f"{OBQA}-predictions.jsonl"
    rows = path.read_text().splitlines()
    extra = json.loads(rows[3])  # doc_id 3
    if second == "different":
        extra["model_output"][0]["sum_logits"] -= 10.0
    rows = [json.dumps(extra), *rows] if where == "first" else [*rows, json.dumps(extra)]
    path.write_text("\n".join(rows) + "\n")
    err = refused(run, tmp_path / "results")
    assert f"{path}: lines {lines} are both the prediction of doc_id 3" in err
    assert ("(identical)" if second == "identical" else "(they differ)") in err


def test_two_lines_for_one_request_are_refused(tmp_path):
    run = run_of(tmp_path / "run", OBQA)
    path = run / f"{OBQA}-requests.jsonl"
    rows = path.read_text().splitlines()
    path.write_text("\n".join([*rows, rows[9]]) + "\n")  # doc_id 2's choice 1 again
    err = refused(run, tmp_path / "results")
    assert f"lines 10 and {len(rows) + 1} are both the request of doc_id 2, idx 1 (identical)" in err


def test_a_doc_id_of_two_instances_is_refused(tmp_path):
    run = run_of(tmp_path / "run", OBQA)
    edit_lines(
        run / f"{OBQA}-requests.jsonl",
        lambda row: row.update(native_id="x-1") if (row["doc_id"], row["idx"]) == (5, 2) else None,
    )
    err = refused(run, tmp_path / "results")
    assert "give doc_id 5 two instances ('9-794', 'x-1')" in err


def test_a_prediction_of_another_instance_is_refused(tmp_path):
    run = run_of(tmp_path / "run", OBQA)
    edit_lines(run / f"{OBQA}-predictions.jsonl",
               lambda row: row.update(native_id="x-1") if row["doc_id"] == 6 else None)  # fmt: skip
    err = refused(run, tmp_path / "results")
    assert "predictions.jsonl: doc_id 6 is x-1, its requests' is 9-1163" in err


# -- case 9: the model the run names ----------------------------------------------------------------


def name_model(run: Path, names: list[str], **config) -> None:
    """Set ``config`` in the model_config of the run's files ``names`` (every line of a JSON-lines file)."""
    for name in names:
        path = run / name
        if name.endswith(".jsonl"):
            edit_lines(path, lambda row: row["model_config"].update(config))
        else:
            edit_json(path, lambda data: data["model_config"].update(config))


def test_a_run_of_another_model_is_refused(tmp_path):
    run = run_of(tmp_path / "run", OBQA)
    name_model(run, [f"{OBQA}-metrics.json", *RUN_FILES], model="meta-llama/Llama-3-70B", model_path=None)
    err = refused(run, tmp_path / "results")
    assert (
        "the run evaluated meta-llama/Llama-3-70B (its model_config), not the model of --model-spec "
        "smollm2-135m (HuggingFaceTB/SmolLM2-135M-Instruct)" in err
    )


@pytest.mark.parametrize("other", ["metrics.json", "metrics-all.jsonl", f"{OBQA_MC}-metrics.json"])
def test_files_that_name_different_models_are_refused(tmp_path, other):
    run = run_of(tmp_path / "run", OBQA, OBQA_MC)
    name_model(run, [other], model="meta-llama/Llama-3-70B")
    err = refused(run, tmp_path / "results")
    assert "name different models (model 'SmolLM2-135M-Instruct', 'meta-llama/Llama-3-70B')" in err
    assert other.partition(".json")[0] in err


def test_a_model_is_recognized_however_the_run_writes_its_name(tmp_path):
    """A hub id in other letter cases, a local copy in a folder of the repository's name: the same model."""
    run = run_of(tmp_path / "run", OBQA)
    name_model(
        run,
        [f"{OBQA}-metrics.json", *RUN_FILES],
        model="huggingfacetb/SMOLLM2-135M-instruct",
        model_path="/models/elsewhere/SmolLM2-135M-Instruct/",
    )
    code, err = import_run(run, tmp_path / "results")
    assert code == 0, err


# -- case 10: the models file, refusals and interruptions -------------------------------------------

OTHERS = [
    {
        "name": "Other",
        "display_name": "Other 7B",
        "series": "Other",
        "training_tokens": 2e12,
        "checkpoint": "step9",
    },
    {"name": "Third", "display_name": "Third", "training_tokens": 1.5e12},
]


def test_an_import_keeps_every_field_of_the_models_file(tmp_path):
    output = tmp_path / "results"
    output.mkdir()
    mine = {"name": MODEL, "display_name": "before", "series": "Mine", "checkpoint": "final"}
    (output / "models.json").write_text(json.dumps({"models": [OTHERS[0], mine, OTHERS[1]]}))
    code, err = import_run(run_of(tmp_path / "run", OBQA), output)
    assert code == 0, err
    models = json.loads((output / "models.json").read_text())["models"]
    assert models == [OTHERS[0], {**mine, "display_name": "Imported instruct Q4_1 GGUF"}, OTHERS[1]]


@pytest.fixture(scope="module")
def earlier(tmp_path_factory) -> Path:
    """A results folder holding an earlier import of the model (OpenBookQA and CommonsenseQA)."""
    root = tmp_path_factory.mktemp("earlier")
    code, err = import_run(run_of(root / "run", OBQA, CSQA), root / "results")
    assert code == 0, err
    return root / "results"


def set_first_log_prob(run: Path, value: float) -> None:
    def edit(row):
        if row["doc_id"] == 0:
            row["model_output"][0]["sum_logits"] = value

    edit_lines(run / f"{OBQA}-predictions.jsonl", edit)


def truncate(run: Path) -> None:
    path = run / f"{OBQA}-predictions.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:15]))


@pytest.mark.parametrize(
    ("damage", "what"),
    [
        (lambda run: set_first_log_prob(run, math.nan), "sum_logits is nan, not a log-prob"),
        (lambda run: set_first_log_prob(run, 5.0), "sum_logits is 5.0, positive: not a log-prob"),
        (truncate, "doc_id 15 (7-414): no model output for choice 0"),
    ],
    ids=["nan", "positive", "truncated"],
)
def test_a_refused_import_leaves_the_results_as_they_were(earlier, tmp_path, damage, what):
    output = tmp_path / "results"
    shutil.copytree(earlier, output)
    run = run_of(tmp_path / "run", OBQA)
    damage(run)
    assert what in refused(run, output, "Second")


def changed_run(folder: Path) -> Path:
    """OpenBookQA again, one log-prob a little lower: an import that replaces the earlier one's files."""
    run = run_of(folder, OBQA)

    def edit(row):
        if row["doc_id"] == 0:
            row["model_output"][1]["sum_logits"] -= 0.5

    edit_lines(run / f"{OBQA}-predictions.jsonl", edit)
    return run


def without_leftovers(state: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in state.items() if not name.startswith(".import.")}


@pytest.mark.slow  # a second process, which loads olmes and the tokenizer
def test_an_import_killed_while_it_builds_leaves_the_earlier_one(earlier, tmp_path):
    """SIGKILL as the new summary is about to be written: the earlier import's files are all there,
    unchanged; the next import removes what the killed one left and imports."""
    output = tmp_path / "results"
    shutil.copytree(earlier, output)
    before = snapshot(output)
    run = changed_run(tmp_path / "run")
    script = (
        "import os, signal, sys\n"
        "from olmes.scoring import score\n"
        "score.write_scores = lambda *args: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from olmes.cli.main import main\n"
        f"sys.exit(main(['import', 'oe-eval', {str(run)!r}, '--model', {MODEL!r}, '--model-spec', {SPEC!r},"
        f" '--output', {str(output)!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL, done.stderr
    after = snapshot(output)
    assert without_leftovers(after) == before and after != before  # it had begun building
    code, err = import_run(run, output)
    assert code == 0 and "left by an interrupted import" in err, err
    assert not [name for name in os.listdir(output) if name.startswith(".import.")]
    files = set(snapshot(output))
    assert files == set(before)  # the same files, OpenBookQA's new: none of its old ones stays


class Killed(BaseException):
    """The process dies here (nothing after it runs, no exception handler)."""


def sides(state: dict[str, bytes], old: dict[str, bytes], new: dict[str, bytes], task: str) -> set[str]:
    """Which imports (old, new) every file of ``task`` there is from: empty if a mix."""
    found = {"old", "new"}
    for name, data in state.items():
        if f"/{MODEL}/{task}." in name:
            found &= {side for side, files in (("old", old), ("new", new)) if files.get(name) == data}
    return found


def test_an_import_killed_while_it_swaps_never_mixes_and_is_finished_next_time(
    earlier, tmp_path, monkeypatch
):
    output = tmp_path / "results"
    shutil.copytree(earlier, output)
    old = snapshot(output)

    def die(*args):
        raise Killed()

    with monkeypatch.context() as patch:  # killed at the commit point: the journal is complete
        patch.setattr(staging, "_swap", die)
        with pytest.raises(Killed):
            import_run(changed_run(tmp_path / "run"), output)
    committed = tmp_path / "committed"
    shutil.copytree(output, committed)
    staging._clean_up_interrupted(output)
    new = snapshot(output)
    assert set(new) == set(old) and new != old
    for kill_at in range(8):  # the swap's moves: three folders out, the models file and three in
        shutil.rmtree(output)
        shutil.copytree(committed, output)
        assert swap_killed_at(output, kill_at, monkeypatch) == min(kill_at, 7)
        state = without_leftovers(snapshot(output))
        for task in ("openbookqa", "csqa"):
            found = sides(state, old, new, task)
            assert found, f"killed at move {kill_at}: {task} is a mix of the old and the new import"
            if f"scores/{MODEL}/{task}.scores.json" in state:  # a result: all its files are there
                side = old if "old" in found else new
                assert all(name in state for name in side if f"/{MODEL}/{task}." in name), (kill_at, task)
        staging._clean_up_interrupted(output)
        assert snapshot(output) == new, f"killed at move {kill_at}: not finished by the next import"


def swap_killed_at(output: Path, kill_at: int, monkeypatch) -> int:
    """The journal's swap, killed before its move number ``kill_at``; how many moves it made."""
    moves = []

    def move(original, *args):
        if len(moves) == kill_at:
            raise Killed()
        moves.append(args)
        return original(*args)

    with monkeypatch.context() as patch:
        patch.setattr(Path, "rename", lambda path, target, f=Path.rename: move(f, path, target))
        patch.setattr(os, "replace", lambda *args, f=os.replace: move(f, *args))
        with contextlib.suppress(Killed):
            staging._swap(output, MODEL, output / f".import.{MODEL}.swap")
    return len(moves)
