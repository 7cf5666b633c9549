"""A message that names a model to a user names it by its display name, which says what was evaluated
(tuning, quantization, weight format), with its name (the store folder, the argument a command takes)
after it in parentheses (olmes.store.naming), as the tables, the site and the README do. Each test
uses a model whose display name differs from its name, so each fails on the bare-name wording.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from olmes.cli.main import main
from olmes.core.errors import OlmesError
from olmes.store import claims, revision
from olmes.store import reproduce as reproducing
from olmes.store.naming import shown_name, store_shown_name
from olmes.store.oe_eval import staging
from olmes.store.publish import publish
from tests.helpers import TASK, make_results, make_robustness, publish_cli, reproduction_report

DISPLAY = "M1 instruct Q4_1 GGUF"
NAMED = f"{DISPLAY} (M1)"  # how a message names it


def list_models(root: Path, **displays: str) -> Path:
    """The results folder's models file, as the workflow writes it: each model's display name."""
    entries = [{"name": name, "display_name": display} for name, display in displays.items()]
    (root / "models.json").write_text(json.dumps({"models": entries}))
    return root


def results(root: Path, model: str = "M1", display: str = DISPLAY, **options) -> Path:
    return list_models(make_results(root, model, **options), **{model: display})


def run(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, err.getvalue()


def test_a_model_is_named_by_its_display_name_then_its_name() -> None:
    assert shown_name("M1", DISPLAY) == NAMED
    assert shown_name("M1", "M1") == shown_name("M1", None) == "M1"  # nothing to add


# -- olmes publish ----------------------------------------------------------------------------------


def test_publish_says_what_went_in_by_its_display_name(tmp_path) -> None:
    code, err = publish_cli("--from", str(results(tmp_path / "results")), "--store", str(tmp_path / "store"))
    assert code == 0, err
    assert err == f"{DISPLAY}: 1 task(s) -> {tmp_path / 'store' / 'models' / 'M1'}\n"
    assert store_shown_name(tmp_path / "store", "M1") == NAMED
    assert store_shown_name(tmp_path / "store", "M9") == "M9"  # no record: its name


def one_more_space(row, answer="Answer:"):
    """A request of other prompts than the standard's: one more space after the answer line."""
    return {**row, "context": row["context"].replace(answer, answer + " ", 1)}


def test_a_partial_result_refused_names_the_model_by_its_display_name(tmp_path) -> None:
    partial = results(tmp_path / "partial", limit=7)
    code, err = publish_cli("--from", str(partial), "--store", str(tmp_path / "store"))
    assert code == 2 and err.startswith(f"olmes: error: {NAMED} {TASK} is partial ("), err


def test_other_requests_refused_name_the_model_by_its_display_name(tmp_path) -> None:
    other = results(tmp_path / "other", tamper=one_more_space)
    code, err = publish_cli("--from", str(other), "--store", str(tmp_path / "store"))
    assert code == 2 and err.startswith(f"olmes: error: {NAMED} {TASK} cf: made with other requests"), err


def test_a_model_not_in_the_results_is_refused_naming_those_there_by_their_display_names(tmp_path) -> None:
    code, err = publish_cli(
        "--from", str(results(tmp_path / "results")), "--store", str(tmp_path / "s"), "M9"
    )
    assert code == 2 and err.endswith(f"has no results of model 'M9'; it has: {NAMED}\n"), err


def test_a_result_already_in_the_store_names_the_model_by_its_display_name(tmp_path) -> None:
    store = str(tmp_path / "store")
    assert publish_cli("--from", str(results(tmp_path / "first")), "--store", store)[0] == 0
    code, err = publish_cli("--from", str(results(tmp_path / "second", seed=1)), "--store", store)
    assert code == 2 and err.endswith(
        f"{store} already has {NAMED} on {TASK}; pass --replace to replace it\n"
    )


def test_other_weights_refused_name_the_model_by_its_display_name(tmp_path) -> None:
    store = str(tmp_path / "store")
    assert publish_cli("--from", str(results(tmp_path / "first")), "--store", store)[0] == 0
    weights = results(tmp_path / "weights", fingerprint="e" * 32)
    code, err = publish_cli("--from", str(weights), "--store", store)
    assert code == 2 and err.startswith(f"olmes: error: {store} has {NAMED} from other weights or settings")


def test_robustness_results_of_other_requests_name_the_model_by_its_display_name(tmp_path) -> None:
    tampered = make_robustness(
        tmp_path / "r", "M1", tamper=lambda row: one_more_space(row, "Correct answer:")
    )
    list_models(tampered, M1=DISPLAY)
    code, err = publish_cli("--from", str(tampered), "--store", str(tmp_path / "s"), "--robustness-only")
    assert code == 2 and err.startswith(f"olmes: error: {NAMED} {TASK} (var1) cf: made with other"), err


def test_robustness_results_of_a_model_not_in_the_store_name_it_by_its_display_name(tmp_path) -> None:
    alone = list_models(make_robustness(tmp_path / "r", "M1"), M1=DISPLAY)
    code, err = publish_cli("--from", str(alone), "--store", str(tmp_path / "s"), "--robustness-only")
    assert code == 2 and f"has no model {NAMED}; publish its standard results first" in err, err


def test_results_of_two_fingerprints_name_the_model_by_its_display_name(tmp_path) -> None:
    mixed = make_robustness(tmp_path / "mixed", "M1", fingerprint="e" * 32)  # prompt variant var1 ...
    (mixed / "scores" / "M1" / f"{TASK}.rotations.json").unlink()
    results(mixed)  # ... and standard results, of other weights
    code, err = publish_cli("--from", str(mixed), "--store", str(tmp_path / "s"))
    assert code == 2 and err.startswith(
        f"olmes: error: the results of {NAMED} come from different models ("
    ), err


def test_a_refusal_by_verify_names_the_model_by_its_display_name(tmp_path) -> None:
    folder = results(tmp_path / "results")
    summary = folder / "scores" / "M1" / f"{TASK}.scores.json"
    edited = json.loads(summary.read_text())
    edited["methods"]["mcf"]["accuracy"] = 0.95
    summary.write_text(json.dumps(edited))
    code, err = publish_cli("--from", str(folder), "--store", str(tmp_path / "store"))
    assert code == 2 and err.startswith(f"olmes: error: {NAMED} not published, olmes verify would refuse"), (
        err
    )


def test_a_display_name_that_reads_as_another_names_both_models_by_their_display_names(tmp_path) -> None:
    store = tmp_path / "store"
    publish(results(tmp_path / "first"), store)
    look_alike = "m1 INSTRUCT q4_1 gguf"
    with pytest.raises(OlmesError) as refused:
        publish(results(tmp_path / "second", "M2", look_alike, seed=1), store)
    assert str(refused.value) == (
        f"{look_alike} (M2) not published: its display name {look_alike!r} reads as that of model 'M1' "
        f"(display name {DISPLAY!r}); rename one of them"
    )


def test_a_name_that_reads_as_another_gives_that_models_display_name() -> None:
    assert claims.name_problems({"M1": DISPLAY, "m1": "Other base GGUF"}) == [
        ("m1", f"its name reads as that of model 'M1' (display name {DISPLAY!r}); rename one of them")
    ]


# -- olmes verify --base, olmes reproduce, olmes export and import -----------------------------------


def _git(repo: Path, *args: str) -> None:
    command = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args]
    subprocess.run(command, check=True, capture_output=True)


def test_verify_base_names_the_models_it_changed_by_their_display_names(tmp_path) -> None:
    store = tmp_path / "repo" / "leaderboard"
    publish(results(tmp_path / "first"), store, logprobs="in-store")
    _git(store.parent, "init", "-q")
    _git(store.parent, "add", "-A")
    _git(store.parent, "commit", "-q", "-m", "store")
    publish(results(tmp_path / "second", "M2", "M2 base Q4_K_M GGUF", seed=1), store, logprobs="in-store")
    (store / "models" / "M1" / "model.json").rename(tmp_path / "M1.json")  # M1 removed
    lines = revision.changes(store, "HEAD").lines()
    assert lines == [
        "olmes: verify: against HEAD: added: M2 base Q4_K_M GGUF (M2)",
        f"olmes: verify: against HEAD: removed: {NAMED}",  # as HEAD names it
    ], lines


def test_reproduce_names_the_model_by_its_display_name(tmp_path) -> None:
    store = tmp_path / "store"
    publish(results(tmp_path / "results"), store)
    code, err = run(
        "reproduce", "M1", "--store", str(store), "--max-weights-gb", "1",
        "--workdir", str(tmp_path / "work"), "--output", str(tmp_path / "report.json"),
    )  # fmt: skip
    assert code == 0 and err.startswith(f"olmes: reproduce: {NAMED} not reproduced here: its weights"), err


def test_weights_that_are_not_the_models_name_it_by_its_display_name(tmp_path, monkeypatch) -> None:
    store = tmp_path / "store"
    publish(results(tmp_path / "results"), store)
    other = SimpleNamespace(resolved=SimpleNamespace(content_id="sha256:other"))
    monkeypatch.setattr(reproducing, "prepare", lambda *args, **kwargs: other)
    with pytest.raises(OlmesError, match=re.escape(f"/w is not the weights of {NAMED} in {store} (")):
        reproducing.reproduce(store, "M1", 2, tmp_path / "work", tmp_path / "cache", weights="/w")


def test_an_export_refused_names_the_model_by_its_display_name(tmp_path) -> None:
    folder = results(tmp_path / "results")
    code, err = run("export", "oe-eval", "--from", str(folder), "--model", "M1", "--tasks", "piqa",
                    "--output", str(tmp_path / "none"))  # fmt: skip
    assert code == 2 and f"has no piqa results of {NAMED}; it has: {TASK}" in err, err


def test_export_says_what_it_wrote_by_the_models_display_name(tmp_path) -> None:
    folder = results(tmp_path / "results")
    code, err = run(
        "export", "oe-eval", "--from", str(folder), "--model", "M1", "--output", str(tmp_path / "out")
    )
    assert code == 0 and err.startswith(f"{NAMED}: 2 task files and 1 task groups written to "), err


def test_an_interrupted_import_finished_names_the_model_by_its_display_name(tmp_path, capsys) -> None:
    """The next import finishes a swap an interrupted one left, naming the model as its models file does."""
    journal = tmp_path / "results" / ".import.M1.swap"
    (journal / "scores" / "M1").mkdir(parents=True)
    list_models(journal, M1=DISPLAY)
    staging._clean_up_interrupted(tmp_path / "results")
    assert f"olmes: import: finished moving {NAMED} in, left half moved" in capsys.readouterr().err
    assert (tmp_path / "results" / "scores" / "M1").is_dir()


# -- the site ---------------------------------------------------------------------------------------


def test_the_leaderboard_names_a_reproduced_model_by_its_display_name(tmp_path) -> None:
    store = tmp_path / "store"
    publish(results(tmp_path / "results"), store)
    report = tmp_path / "M1.json"
    report.write_text(json.dumps({**reproduction_report([]), "model": "M1"}))
    assert run("tables", "--store", str(store), "--out", str(tmp_path / "tables"))[0] == 0
    code, err = run("site", "--store", str(store), "--tables", str(tmp_path / "tables"),
                    "--reproduction", str(report), "--out", str(tmp_path / "site"))  # fmt: skip
    assert code == 0, err
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert f"{DISPLAY}, first 10 instances of each task:" in index
