"""Issue 37, cases 5-7: the claims around a store model's numbers (model.json, the summaries, the run
records, the store record, the models' names), each checked against its one source by olmes verify and
by olmes publish with the same rule (olmes/store/claims.py). Before: every edit below passed verify, and
the site showed it. Stores are small: one model on OpenBookQA with made-up log-probs whose run records
carry an identity, as the engine's do (tests/helpers.py)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from olmes.core.errors import OlmesError
from olmes.store.claims import name_key
from olmes.store.publish import publish
from olmes.store.verify import verify_store
from tests.helpers import TASK, make_results

MODEL = "SmolLM2-135M"
DISPLAY = "SmolLM2-135M instruct Q4_1 GGUF"
IDENTITY = {
    "original": "HuggingFaceTB/SmolLM2-135M-Instruct",
    "tuning": "instruct",
    "weight_format": "gguf",
    "quantization": "Q4_1",
    "compute_dtype": "float32",
    "evidence": "GGUF metadata and file name",
}


def results_of(root: Path, model: str = MODEL, display: str = DISPLAY, seed: int = 0) -> Path:
    """A results folder of ``model`` on TASK, named ``display`` by its models file."""
    results = make_results(root, model, seed=seed, identity=IDENTITY)
    (results / "models.json").write_text(json.dumps({"models": [{"name": model, "display_name": display}]}))
    return results


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("claims")
    publish(results_of(root / "results"), root / "leaderboard", logprobs="in-store")
    return root / "leaderboard"


@pytest.fixture
def leaderboard(published, tmp_path) -> Path:
    copy = tmp_path / "leaderboard"
    shutil.copytree(published, copy)
    return copy


def problems(root: Path) -> list[str]:
    return [f"{problem.path.name}: {problem.what}" for problem in verify_store(root).problems]


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def record_path(root: Path) -> Path:
    return root / "models" / MODEL / "model.json"


def test_the_published_store_is_clean(leaderboard) -> None:
    assert problems(leaderboard) == []


def _set(*keys_and_value):
    *keys, value = keys_and_value

    def change(record: dict) -> None:
        target = record
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return change


MODEL_RECORD_EDITS = {  # issue 37, case 5: model.json edited after publish -> the problem verify names
    "display-name": (_set("display_name", "Llama-3-70B"), "display name 'Llama-3-70B' does not say"),
    "display-name-qualified": (
        _set("display_name", "Llama-3-70B instruct Q4_1 GGUF"),
        "does not name the model it is (HuggingFaceTB/SmolLM2-135M-Instruct)",
    ),
    "identity": (
        _set("identity", {**IDENTITY, "weight_format": "safetensors", "quantization": "none"}),
        "identity is {",
    ),
    "identity-dropped": (lambda record: record.pop("identity"), "identity is None, its run records say"),
    "dtype": (_set("dtype", "bfloat16"), "dtype is 'bfloat16', its run records say 'float32'"),
    "device": (_set("device", "cuda"), "device is 'cuda', its run records say 'cpu'"),
    "spec": (_set("spec", "meta-llama/Llama-3-70B"), "spec is 'meta-llama/Llama-3-70B'"),
    "revision": (_set("revision", "hub:meta-llama/Llama-3-70B@abc"), "revision is 'hub:meta-llama"),
    "versions": (_set("versions", "torch", "9.9"), "versions is {"),
    "hardware": (
        _set("tasks", TASK, "hardware", ["NVIDIA H100"]),
        f"tasks.{TASK}: hardware is ['NVIDIA H100']",
    ),
    "task-wall-time": (_set("tasks", TASK, "wall_time_s", 0.1), f"tasks.{TASK}: wall_time_s is 0.1"),
    "wall-time": (_set("wall_time_s", 0.1), "wall_time_s is 0.1, its tasks' entries sum to"),
    "published": (_set("tasks", TASK, "published", "yesterday"), "published 'yesterday' is not a UTC time"),
    "extra-key": (_set("verified_by", "AI2"), "unknown key 'verified_by'"),
    "extra-task-key": (_set("tasks", TASK, "note", "x"), f"tasks.{TASK}: unknown key 'note'"),
}


@pytest.mark.parametrize("edit", sorted(MODEL_RECORD_EDITS))
def test_an_edited_model_record_is_caught(leaderboard, edit) -> None:
    change, expected = MODEL_RECORD_EDITS[edit]
    edit_json(record_path(leaderboard), change)
    found = problems(leaderboard)
    assert any(line.startswith("model.json: ") and expected in line for line in found), found


def test_a_summary_naming_another_model_is_caught(leaderboard) -> None:
    """Case 6: the summary's model, the predictions' model column and its SHA-256 all say GPT-5-Turbo."""
    scores = leaderboard / "models" / MODEL / "scores"
    predictions = scores / f"{TASK}.predictions.parquet"
    frame = pd.read_parquet(predictions)
    frame["model"] = "GPT-5-Turbo"
    frame.to_parquet(predictions, index=False)
    sha256 = hashlib.sha256(predictions.read_bytes()).hexdigest()
    edit_json(
        scores / f"{TASK}.scores.json",
        lambda s: s.update(model="GPT-5-Turbo") or s["predictions"].update(sha256=sha256),
    )
    found = problems(leaderboard)
    assert f"{TASK}.scores.json: model is 'GPT-5-Turbo', but it is in the folder of model '{MODEL}'" in found


def test_an_edited_run_record_is_caught(leaderboard) -> None:
    """Case 5, the run record's side: its hardware edited no longer matches the summary's copy nor the
    model record's; a key the format has not is refused."""
    run = leaderboard / "models" / MODEL / "logprobs" / f"{TASK}.cf.parquet.run.json"
    edit_json(run, _set("hardware", "NVIDIA H100 (cuda)"))
    edit_json(run, _set("signed_by", "AI2"))
    found = problems(leaderboard)
    assert f"{TASK}.cf.parquet.run.json: unknown key 'signed_by'" in found
    assert f"{TASK}.scores.json: inputs.cf.run is not the run record beside its log-prob file" in found
    assert any(line.startswith(f"model.json: tasks.{TASK}: hardware is") for line in found), found


def test_an_unknown_key_of_the_store_record_is_caught(leaderboard) -> None:
    edit_json(leaderboard / "store.json", _set("trusted", True))
    assert problems(leaderboard) == ["store.json: unknown key 'trusted'"]


def test_a_gitignore_that_hides_the_models_is_caught(leaderboard) -> None:
    """Case 2: a .gitignore listing models/ would keep the next published model out of git, silently."""
    (leaderboard / ".gitignore").write_text("/blobs/\nmodels/\n")
    (found,) = problems(leaderboard)
    assert found.startswith(".gitignore: a store's .gitignore holds only '/blobs/'"), found


def _copy_model(root: Path, name: str, display: str | None = None) -> None:
    """Another model folder: the model published again under ``name`` (and ``display``)."""
    shutil.copytree(root / "models" / MODEL, root / "models" / name)
    summary = root / "models" / name / "scores" / f"{TASK}.scores.json"
    predictions = summary.parent / f"{TASK}.predictions.parquet"
    frame = pd.read_parquet(predictions)
    frame["model"] = name
    frame.to_parquet(predictions, index=False)
    sha256 = hashlib.sha256(predictions.read_bytes()).hexdigest()
    edit_json(summary, lambda s: s.update(model=name) or s["predictions"].update(sha256=sha256))
    edit_json(
        root / "models" / name / "model.json", lambda r: r.update(name=name, display_name=display or DISPLAY)
    )


def test_model_names_that_differ_only_in_case_are_caught(leaderboard) -> None:
    """Case 7: folders smollm2-135m and SmolLM2-135M broke olmes tables (and the Pages build) after a
    clean verify."""
    _copy_model(leaderboard, MODEL.lower(), "SmolLM2-135M instruct Q4_1 GGUF (again)")
    found = problems(leaderboard)
    assert found == [
        f"{MODEL.lower()}: its name reads as that of model '{MODEL}' (display name {DISPLAY!r}); "
        "rename one of them"
    ], found


def test_a_look_alike_display_name_is_caught(leaderboard) -> None:
    """Case 7: a Cyrillic letter in the display name gave two identical rows."""
    look_alike = DISPLAY.replace("o", "\u043e")  # Cyrillic о
    _copy_model(leaderboard, "SmolLM2-135M-b", look_alike)
    found = problems(leaderboard)
    assert any("its display name" in line and f"of model '{MODEL}'" in line for line in found), found


def test_a_model_folder_name_out_of_ascii_is_caught(leaderboard) -> None:
    _copy_model(leaderboard, "Smol\u0406M", "Another instruct Q4_1 GGUF model, SmolLM2")
    found = problems(leaderboard)
    assert any("'Smol\u0406M' is not a model name" in line for line in found), found


def test_name_keys_fold_case_width_and_look_alikes() -> None:
    assert name_key("Plain") == name_key("plain") == name_key("Pla\u0456n") == name_key("ＰＬＡＩＮ")
    assert name_key("Plain") != name_key("Plan")


def test_publish_refuses_a_name_that_reads_as_another(published, tmp_path) -> None:
    """Publish applies the same rule before writing: nothing of the new model enters the store."""
    leaderboard = tmp_path / "leaderboard"
    shutil.copytree(published, leaderboard)
    other = results_of(tmp_path / "other", MODEL.lower(), "SmolLM2 instruct Q4_1 GGUF, second", seed=1)
    with pytest.raises(OlmesError, match=f"its name reads as that of model '{MODEL}'"):
        publish(other, leaderboard, logprobs="in-store")
    look = results_of(tmp_path / "look", "SmolLM2-B", DISPLAY.replace("a", "\u0430"), seed=2)
    with pytest.raises(OlmesError, match="its display name .* reads as that of model"):
        publish(look, leaderboard, logprobs="in-store")
    assert sorted(p.name for p in (leaderboard / "models").iterdir()) == [MODEL]


def test_a_copied_model_folder_beside_a_readme_table_is_problems_not_a_crash(leaderboard) -> None:
    """The benchmark's case 7 (benchmarks/submission_check.py): a folder copied under a name differing
    only in case, its record still naming the original, with the README's table beside the store. The
    table's check read every model record and stopped verify with one error, its report lost."""
    from olmes.store.readme_table import readme_row

    summary = json.loads((leaderboard / "models" / MODEL / "scores" / f"{TASK}.scores.json").read_text())
    row = readme_row(leaderboard, summary)
    link = f"[summary](leaderboard/models/{MODEL}/scores/{TASK}.scores.json)"
    (leaderboard.parent / "README.md").write_text(
        f"| model | task | score summary |\n|---|---|---|\n| {row['model']} | {row['task']} | {link} |\n"
        f"\nOLMES average over the 10 tasks: {DISPLAY} none.\n"
    )
    assert problems(leaderboard) == []
    shutil.copytree(leaderboard / "models" / MODEL, leaderboard / "models" / MODEL.lower())
    found = problems(leaderboard)
    wrong = f"the model record of '{MODEL}', in the folder of '{MODEL.lower()}'"
    assert any(line.startswith("model.json: ") and wrong in line for line in found), found
    assert any(line.startswith("README.md: ") and wrong in line for line in found), found


def test_a_run_record_nested_100k_deep_is_a_problem_not_a_traceback(leaderboard) -> None:
    run = leaderboard / "models" / MODEL / "logprobs" / f"{TASK}.cf.parquet.run.json"
    run.write_text("[" * 100_000 + "]" * 100_000)
    found = problems(leaderboard)
    assert found and any("nested deeper than 64 levels" in line for line in found), found


def test_a_robustness_entry_of_the_model_record_is_checked_against_its_result(tmp_path) -> None:
    """model.json's robustness entries (the committed store's): the instances its result says, and
    only results the folder holds."""
    committed = Path(__file__).resolve().parent.parent / "leaderboard"
    root = tmp_path / "leaderboard"
    shutil.copytree(committed, root, ignore=shutil.ignore_patterns("*.parquet"))  # --no-logprobs: claims only
    name = "SmolLM2-135M"

    def edit(record: dict) -> None:
        record["robustness"]["var1"]["piqa"]["instances"] = 99
        record["robustness"]["var2"]["mmlu"] = record["robustness"]["var2"]["piqa"]

    edit_json(root / "models" / name / "model.json", edit)
    found = [f"{p.path.name}: {p.what}" for p in verify_store(root, [name], logprobs=False).problems]
    assert "model.json: robustness.var1.piqa: instances is 99, its result says 100" in found, found
    assert "model.json: robustness.var2.mmlu: listed, but the model folder has no such result" in found, found
