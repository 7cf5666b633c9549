"""Checkpoint series (config key ``series``, olmes/cli/series.py): one entry expanded into one model per
checkpoint, from local checkpoint folders or a hub repo's branches (recorded, never read from the hub
here), with training tokens by rule; each error is one line naming the key; the workflow plans only
the jobs of checkpoints added to a series."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from huggingface_hub import GitRefInfo, GitRefs, HfApi

from olmes.cli.config import validate_config
from olmes.cli.series import TokenRule, model_name
from olmes.cli.workflow import check_config, models_file_text
from olmes.core.errors import OlmesError
from tests.helpers import workflow_environment, write_workflow_config
from tests.tiny_model import build_tiny_model

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
RECORDED = REPO / "tests" / "data" / "series" / "allenai-OLMo-7B-0424-hf.refs.json"
OLMO_REPO = "allenai/OLMo-7B-0424-hf"
PYTHIA_STEP = 2_097_152  # Pythia's and SmolLM's batch: 2M tokens a step


@pytest.fixture
def workdir(tmp_path, monkeypatch) -> Path:
    """The folder the workflow runs in: relative sources and ``results`` are from here."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _config(series: dict, models: dict | None = None) -> dict:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    return {**config, "models": models or {}, "series": series, "results": "results"}


def _expand(series: dict, models: dict | None = None) -> dict[str, dict]:
    return check_config(_config(series, models), SCHEMA)


def _checkpoint_folders(root: Path, *names: str) -> Path:
    """Fake Hugging Face checkpoint folders (a config.json each) under ``root``."""
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "config.json").write_text("{}", encoding="utf-8")
    return root


def _local(**entry) -> dict:
    return {"tiny": {"source": "ckpts", "tokens": {"rule": "olmo"}, **entry}}


def _error(series: dict, models: dict | None = None) -> str:
    with pytest.raises(OlmesError) as raised:
        _expand(series, models)
    message = str(raised.value)
    assert "\n" not in message
    return message


def _recorded_refs() -> GitRefs:
    """The recorded branches as ``HfApi.list_repo_refs`` returns them."""
    branches = json.loads(RECORDED.read_text(encoding="utf-8"))["branches"]
    return GitRefs(branches=[GitRefInfo(**branch) for branch in branches], converts=[], tags=[])


def _hub_must_not_be_asked(*args, **kwargs):
    raise AssertionError("the hub was asked for the branches")


def _hub(**entry) -> dict:
    return {"olmo": {"source": OLMO_REPO, "tokens": {"rule": "olmo"}, **entry}}


def _commit(branch: str) -> str:
    refs = json.loads(RECORDED.read_text(encoding="utf-8"))["branches"]
    return next(ref["target_commit"] for ref in refs if ref["name"] == branch)


# -- token rules on real-shaped revision names --------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "revision", "tokens"),
    [
        (TokenRule(rule="olmo"), "step1000-tokens4B", 4e9),  # OLMo-7B-0424-hf
        (TokenRule(rule="olmo"), "step738020-tokens3095B", 3.095e12),
        (TokenRule(rule="olmo"), "step500-tokens2100M", 2.1e9),
        (TokenRule(rule="olmo"), "main", None),
        (TokenRule(rule="olmo"), "step1000", None),
        (TokenRule(rule="olmo"), "stage1-step1000-tokens5B", None),
        (TokenRule(rule="pythia", tokens_per_step=PYTHIA_STEP), "step143000", 143_000 * PYTHIA_STEP),
        (TokenRule(rule="pythia", tokens_per_step=PYTHIA_STEP), "step-143000", None),
        (TokenRule(rule="smollm", tokens_per_step=PYTHIA_STEP), "step-125000", 125_000 * PYTHIA_STEP),
        (TokenRule(rule="smollm", tokens_per_step=PYTHIA_STEP), "step125000", None),
        (TokenRule(table={"step100": 1.0e8, "final": 2.5e8}), "final", 2.5e8),
        (TokenRule(table={"step100": 1.0e8}), "step200", None),
    ],
)
def test_token_rules_read_real_shaped_names(rule: TokenRule, revision: str, tokens: float | None) -> None:
    assert rule.tokens(revision) == tokens


def test_a_model_name_keeps_only_what_the_models_pattern_allows() -> None:
    assert model_name("olmo", "stage1/step1000 tokens4B") == "olmo-stage1-step1000-tokens4B"
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", model_name("s", "a:b@c~d"))


# -- local folders and the checkpoint selectors ---------------------------------------------------------


def test_a_local_folder_expands_into_one_model_per_checkpoint_by_tokens(workdir) -> None:
    _checkpoint_folders(workdir / "ckpts", "step200-tokens2B", "step100-tokens1B", "step1500-tokens500M")
    (workdir / "ckpts" / "notes").mkdir()  # a folder without config.json is no checkpoint
    (workdir / "ckpts" / "README.md").write_text("not a checkpoint", encoding="utf-8")
    series = _local(
        display_name="tiny LM",
        checkpoints={"match": "^step"},
        dtype="float32",
        parameters=0.001,
        resources={"gpus": 0},
    )
    models = _expand(series, {"Other": {"spec": "smollm2-135m"}})
    assert list(models) == [
        "Other",
        "tiny-step1500-tokens500M",
        "tiny-step100-tokens1B",
        "tiny-step200-tokens2B",
    ]
    assert models["tiny-step100-tokens1B"] == {
        "spec": "ckpts/step100-tokens1B",
        "display_name": "tiny LM, step100-tokens1B",
        "series": "tiny",
        "checkpoint": "step100-tokens1B",
        "training_tokens": 1e9,
        "dtype": "float32",
        "parameters": 0.001,
        "resources": {"gpus": 0},
    }
    assert models["tiny-step1500-tokens500M"]["training_tokens"] == 5e8


def test_an_explicit_list_of_revisions_is_ordered_by_tokens_then_name(workdir) -> None:
    _checkpoint_folders(workdir / "ckpts", "late", "early", "also-early", "unused")
    table = {"late": 3e9, "early": 1e9, "also-early": 1e9, "unused": 2e9}
    models = _expand(
        _local(checkpoints={"revisions": ["late", "early", "also-early"]}, tokens={"table": table})
    )
    assert [entry["checkpoint"] for entry in models.values()] == ["also-early", "early", "late"]
    assert models["tiny-late"]["display_name"] == "tiny, late"  # the series name by default


@pytest.mark.parametrize(
    ("count", "every", "picked"),
    [(5, 2, [1, 3, 5]), (4, 2, [1, 3, 4]), (3, 1, [1, 2, 3]), (3, 5, [1, 3]), (1, 3, [1])],
)
def test_every_nth_checkpoint_in_training_order_and_always_the_last(workdir, count, every, picked) -> None:
    names = [f"step-{n}" for n in range(1, count + 1)]
    _checkpoint_folders(workdir / "ckpts", *reversed(names), "main")  # main names no step: no checkpoint
    tokens = {"rule": "smollm", "tokens_per_step": PYTHIA_STEP}
    models = _expand(_local(checkpoints={"every": every}, tokens=tokens))
    assert [entry["checkpoint"] for entry in models.values()] == [f"step-{n}" for n in picked]
    assert [entry["training_tokens"] for entry in models.values()] == [n * PYTHIA_STEP for n in picked]


def test_every_leaves_out_the_initial_weights(workdir) -> None:
    """Pythia's step0 is the untrained model: Figure 1 needs tokens > 0."""
    _checkpoint_folders(workdir / "ckpts", "step0", "step1000", "step2000", "step3000")
    tokens = {"rule": "pythia", "tokens_per_step": PYTHIA_STEP}
    models = _expand(_local(checkpoints={"every": 2}, tokens=tokens))
    assert [entry["checkpoint"] for entry in models.values()] == ["step1000", "step3000"]


def test_a_local_source_may_be_written_as_a_path(workdir) -> None:
    _checkpoint_folders(workdir / "runs" / "a", "step-1", "step-2")
    tokens = {"rule": "smollm", "tokens_per_step": 10}
    for source in ("./runs/a", str(workdir / "runs" / "a") + "/"):
        models = _expand(_local(source=source, checkpoints={"every": 1}, tokens=tokens))
        specs = [entry["spec"] for entry in models.values()]
        assert specs == [f"{source.rstrip('/')}/step-1", f"{source.rstrip('/')}/step-2"]


# -- a hub repo: its branches, pinned to their commits, read once and recorded ---------------------------


def test_a_recorded_refs_file_is_read_and_the_hub_is_not(workdir, monkeypatch) -> None:
    monkeypatch.setattr(HfApi, "list_repo_refs", _hub_must_not_be_asked)
    (workdir / "results" / "series").mkdir(parents=True)
    shutil.copy(RECORDED, workdir / "results" / "series" / "olmo.refs.json")
    models = _expand(_hub(display_name="OLMo 7B April 2024", checkpoints={"every": 2}, parameters=7))
    assert [entry["checkpoint"] for entry in models.values()] == [
        "step1000-tokens4B", "step3000-tokens12B", "step5000-tokens20B",
    ]  # fmt: skip
    first = models["olmo-step1000-tokens4B"]
    assert first["spec"] == f"{OLMO_REPO}@{_commit('step1000-tokens4B')}"  # the checkpoint's commit
    assert first["display_name"] == "OLMo 7B April 2024, step1000-tokens4B" and first["parameters"] == 7
    assert first["training_tokens"] == 4e9


def test_without_a_recorded_file_the_hub_is_read_once_and_recorded(workdir, monkeypatch) -> None:
    asked = []
    monkeypatch.setattr(HfApi, "list_repo_refs", lambda self, repo: asked.append(repo) or _recorded_refs())
    models = _expand(_hub(checkpoints={"match": r"^step\d+-tokens\d+B$"}))
    assert asked == [OLMO_REPO] and len(models) == 5
    recorded = json.loads((workdir / "results" / "series" / "olmo.refs.json").read_text(encoding="utf-8"))
    assert recorded["repo"] == OLMO_REPO and re.match(r"\d{4}-\d\d-\d\dT", recorded["read_at"])
    assert recorded["branches"] == json.loads(RECORDED.read_text(encoding="utf-8"))["branches"]
    monkeypatch.setattr(HfApi, "list_repo_refs", _hub_must_not_be_asked)  # a rerun, offline
    assert _expand(_hub(checkpoints={"match": r"^step\d+-tokens\d+B$"})) == models


def test_a_recorded_file_of_another_repo_is_read_again(workdir, monkeypatch) -> None:
    (workdir / "results" / "series").mkdir(parents=True)
    other = {**json.loads(RECORDED.read_text(encoding="utf-8")), "repo": "allenai/OLMo-1B-hf"}
    (workdir / "results" / "series" / "olmo.refs.json").write_text(json.dumps(other), encoding="utf-8")
    asked = []
    monkeypatch.setattr(HfApi, "list_repo_refs", lambda self, repo: asked.append(repo) or _recorded_refs())
    _expand(_hub(checkpoints={"revisions": ["step2000-tokens8B"]}))
    assert asked == [OLMO_REPO]


def test_the_models_file_carries_each_checkpoints_series_and_tokens(workdir) -> None:
    _checkpoint_folders(workdir / "ckpts", "step2-tokens8B", "step1-tokens4B")
    models = _expand(_local(display_name="Tiny", checkpoints={"every": 1}), {"M": {"spec": "smollm2-135m"}})
    assert json.loads(models_file_text(models))["models"] == [
        {"name": "M"},
        {"name": "tiny-step1-tokens4B", "display_name": "Tiny, step1-tokens4B", "series": "tiny",
         "training_tokens": 4e9, "checkpoint": "step1-tokens4B"},
        {"name": "tiny-step2-tokens8B", "display_name": "Tiny, step2-tokens8B", "series": "tiny",
         "training_tokens": 8e9, "checkpoint": "step2-tokens8B"},
    ]  # fmt: skip


def test_the_config_check_returns_each_checkpoint_with_its_spec_parsed(workdir) -> None:
    (workdir / "results" / "series").mkdir(parents=True)
    shutil.copy(RECORDED, workdir / "results" / "series" / "olmo.refs.json")
    checked = validate_config(_config(_hub(checkpoints={"revisions": ["step4000-tokens16B"]})), SCHEMA)
    spec = checked["olmo-step4000-tokens16B"].spec
    assert (spec.kind, spec.repo_id, spec.revision) == ("hub", OLMO_REPO, _commit("step4000-tokens16B"))


def test_the_commented_example_of_config_yaml_is_a_series(workdir, monkeypatch) -> None:
    monkeypatch.setattr(HfApi, "list_repo_refs", lambda self, repo: _recorded_refs())
    text = (REPO / "config" / "config.yaml").read_text(encoding="utf-8")
    block = re.search(r"^# series:\n(?:#   .*\n)+", text, flags=re.M).group()
    series = yaml.safe_load("\n".join(line[2:] for line in block.splitlines()))["series"]
    models = _expand(series)
    assert [entry["training_tokens"] for entry in models.values()] == [4e9, 8e9, 1.2e10, 1.6e10, 2e10]
    assert models["OLMo-7B-0424-step1000-tokens4B"]["parameters"] == 7


def test_the_example_of_config_readme_expands_as_it_says(workdir) -> None:
    text = (REPO / "config" / "README.md").read_text(encoding="utf-8")
    section = text.split("## Checkpoint series", 1)[1]
    series = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, flags=re.S).group(1))["series"]
    _checkpoint_folders(workdir / "checkpoints" / "tiny-lm", "step200-tokens2B", "step100-tokens1B")
    models = _expand(series)
    assert list(models) == ["tiny-lm-step100-tokens1B", "tiny-lm-step200-tokens2B"]
    entry = models["tiny-lm-step100-tokens1B"]
    assert entry["spec"] == "checkpoints/tiny-lm/step100-tokens1B" and entry["training_tokens"] == 1e9
    assert entry["display_name"] == (
        "tiny LM trained by olmes on task train splits (not a published model), step100-tokens1B"
    )


# -- every error: one line naming the key and what to do ---------------------------------------------


@pytest.mark.parametrize(
    ("series", "message"),
    [
        (_local(checkpoints={"every": 1}, tokens={"rule": "gpt"}),
         "config key 'series.tiny.tokens.rule': 'gpt' is not one of ['olmo', 'pythia', 'smollm']"),
        (_local(checkpoints={"every": 0}),
         "config key 'series.tiny.checkpoints.every': 0 is less than the minimum of 1"),
        (_local(checkpoints={"revisions": ["main"]}),
         "config key 'series.tiny.tokens': revision 'main' is not stepN-tokensNB or stepN-tokensNM (the olmo "
         "rule); pick only such revisions (checkpoints) or give its tokens in a table"),
        (_local(checkpoints={"match": "^final$"}),
         "config key 'series.tiny.checkpoints.match': '^final$' matches none of the checkpoint folders of "
         "ckpts: main, step1-tokens1B, step2-tokens2B"),
        (_local(checkpoints={"match": "step(("}),
         "config key 'series.tiny.checkpoints.match': 'step((' is no regular expression (missing ), "
         "unterminated subpattern at position 5)"),
        (_local(checkpoints={"revisions": ["step3-tokens3B"]}),
         "config key 'series.tiny.checkpoints.revisions': 'step3-tokens3B' is not among the checkpoint "
         "folders of ckpts: main, step1-tokens1B, step2-tokens2B"),
        (_local(checkpoints={"every": 1}, tokens={"table": {"x": 1.0}}),
         "config key 'series.tiny.tokens': no revision is the revisions of tokens.table among the checkpoint "
         "folders of ckpts: main, step1-tokens1B, step2-tokens2B; give another rule or a table"),
        (_local(checkpoints={}),
         "config key 'series.tiny.checkpoints': give exactly one of revisions, match, every (it has none)"),
        (_local(checkpoints={"match": "step", "every": 2}),
         "config key 'series.tiny.checkpoints': give exactly one of revisions, match, every (it has match, "
         "every)"),
        (_local(checkpoints={"every": 1}, tokens={"rule": "olmo", "table": {"main": 1}}),
         "config key 'series.tiny.tokens': give exactly one of rule, table (it has rule, table)"),
        (_local(checkpoints={"every": 1}, tokens={"rule": "pythia"}),
         "config key 'series.tiny.tokens.tokens_per_step': the pythia rule needs it: a revision stepN was "
         "trained on N x tokens_per_step tokens (the batch size in tokens, e.g. 2097152)"),
        (_local(checkpoints={"every": 1}, tokens={"rule": "olmo", "tokens_per_step": 4}),
         "config key 'series.tiny.tokens.tokens_per_step': the olmo rule reads the tokens from the name; "
         "remove it"),
        (_local(checkpoints={"every": 1}, tokens={"table": {"main": 1}, "tokens_per_step": 4}),
         "config key 'series.tiny.tokens.tokens_per_step': a table gives the tokens; remove it"),
        (_local(checkpoints={"every": 1}, tokens={"table": {"main": 0}}),
         "config key 'series.tiny.tokens.table.main': 0 is less than or equal to the minimum of 0"),
        (_local(checkpoints={"every": 1}, source="./elsewhere"),
         "config key 'series.tiny.source': the folder ./elsewhere does not exist (relative to {workdir}); "
         "give a folder of checkpoint folders or a hub repo id org/name"),
        (_local(checkpoints={"every": 1}, source="empty"),
         "config key 'series.tiny.source': the folder empty holds no checkpoint folder (a subfolder with a "
         "config.json, one Hugging Face folder per checkpoint)"),
        (_local(checkpoints={"every": 1}, source="org/name/extra"),
         "config key 'series.tiny.source': org/name/extra is no folder here and no hub repo id (org/name, "
         "without @revision: checkpoints picks the revisions); write a local folder as ./path or /path"),
        (_local(checkpoints={"every": 1}, source="allenai/OLMo-7B-0424-hf@main"),
         "config key 'series.tiny.source': allenai/OLMo-7B-0424-hf@main is no folder here and no hub repo "
         "id"),
        ({"bad name": _local()["tiny"]}, "config key 'series': 'bad name' does not match"),
        (_local(checkpoints={"every": 1}, spec="ckpts/main"),
         "config key 'series.tiny': Additional properties are not allowed ('spec' was unexpected)"),
    ],
)  # fmt: skip
def test_each_error_is_one_line_naming_the_key(workdir, series, message) -> None:
    _checkpoint_folders(workdir / "ckpts", "step1-tokens1B", "step2-tokens2B", "main")
    (workdir / "empty" / "not-a-checkpoint").mkdir(parents=True)
    assert message.format(workdir=workdir) in _error(series)


def test_the_initial_weights_picked_by_name_are_refused(workdir) -> None:
    _checkpoint_folders(workdir / "ckpts", "step0", "step1000")
    tokens = {"rule": "pythia", "tokens_per_step": PYTHIA_STEP}
    assert _error(_local(checkpoints={"match": "^step"}, tokens=tokens)) == (
        "config key 'series.tiny.tokens': revision 'step0' was trained on 0 tokens (the initial weights); "
        "Figure 1 places checkpoints by tokens > 0, so leave it out (checkpoints)"
    )


def test_two_revisions_of_one_model_name_are_refused(workdir) -> None:
    _checkpoint_folders(workdir / "ckpts", "a b", "a+b", "a_b", "a:b")
    tokens = {"table": {"a b": 1e9, "a:b": 2e9}}
    assert _error(_local(checkpoints={"revisions": ["a b", "a:b"]}, tokens=tokens)) == (
        "config key 'series.tiny.checkpoints': revisions 'a b' and 'a:b' are both the model tiny-a-b (a name "
        "keeps letters, digits and . _ + -); leave one out"
    )


def test_a_checkpoint_may_not_take_a_models_name(workdir) -> None:
    _checkpoint_folders(workdir / "ckpts", "step1-tokens1B")
    taken = {"tiny-step1-tokens1B": {"spec": "smollm2-135m"}}
    assert _error(_local(checkpoints={"every": 1}), taken) == (
        "config key 'series.tiny': its checkpoint step1-tokens1B would be the model tiny-step1-tokens1B, a "
        "name models.tiny-step1-tokens1B already gives a model; rename the series or that entry"
    )


def test_two_series_may_not_make_one_model_name(workdir) -> None:
    _checkpoint_folders(workdir / "one", "b-step-1")
    _checkpoint_folders(workdir / "two", "step-1")
    tokens = {"table": {"b-step-1": 1e9, "step-1": 1e9}}
    series = {
        "a": {"source": "one", "checkpoints": {"every": 1}, "tokens": tokens},
        "a-b": {"source": "two", "checkpoints": {"every": 1}, "tokens": tokens},
    }
    assert "would be the model a-b-step-1, a name series.a already gives a model" in _error(series)


def test_a_revision_not_among_the_recorded_branches_says_how_to_read_them_again(workdir, monkeypatch) -> None:
    monkeypatch.setattr(HfApi, "list_repo_refs", _hub_must_not_be_asked)
    (workdir / "results" / "series").mkdir(parents=True)
    shutil.copy(RECORDED, workdir / "results" / "series" / "olmo.refs.json")
    assert _error(_hub(checkpoints={"revisions": ["step6000-tokens24B"]})) == (
        "config key 'series.olmo.checkpoints.revisions': 'step6000-tokens24B' is not among the branches of "
        f"{OLMO_REPO} (recorded in results/series/olmo.refs.json on 2025-01-15T09:30:00+00:00; delete that "
        "file to read them again): main, step1000-tokens4B, step2000-tokens8B, step3000-tokens12B, "
        "step4000-tokens16B, ... (6 in all)"
    )


def test_an_unreachable_hub_is_one_line_and_records_nothing(workdir, monkeypatch) -> None:
    def offline(self, repo):
        raise ConnectionError("Failed to resolve 'huggingface.co'\n(more lines of the client)")

    monkeypatch.setattr(HfApi, "list_repo_refs", offline)
    assert _error(_hub(checkpoints={"every": 1})) == (
        f"config key 'series.olmo.source': cannot read the branches of {OLMO_REPO} from the hub "
        f"(ConnectionError: Failed to resolve 'huggingface.co'), nor is there a folder {OLMO_REPO} here; "
        "check the repo id and the network, or put a refs file recorded elsewhere where this run records it "
        "(config/README.md, series)"
    )
    assert not (workdir / "results").exists()


def test_a_broken_recorded_file_says_to_delete_it(workdir, monkeypatch) -> None:
    monkeypatch.setattr(HfApi, "list_repo_refs", _hub_must_not_be_asked)
    (workdir / "results" / "series").mkdir(parents=True)
    (workdir / "results" / "series" / "olmo.refs.json").write_text('{"repo": "x"}', encoding="utf-8")
    message = _error(_hub(checkpoints={"every": 1}))
    assert message.startswith(
        "config key 'series.olmo.source': the recorded refs file results/series/olmo.refs.json is not one "
        "this workflow writes (KeyError('branches')); delete it to read the branches again"
    )


def test_a_config_without_any_model_is_refused(workdir) -> None:
    assert _error({}) == "config key 'models': no model to evaluate; give one in 'models' or in 'series'"


# -- the workflow: adding checkpoints to a series plans only their jobs -------------------------------

NO_ROBUSTNESS = {"variants": [], "variant_tasks": [], "rotation_tasks": []}


def _snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    command = [
        str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile"), "--directory",
        str(workdir), "--workflow-profile", str(REPO / "workflow" / "profiles" / "default"), *args,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env=workflow_environment(), timeout=900)


def _planned_jobs(workdir: Path) -> list[tuple[str, str | None]]:
    """(rule, model wildcard or None) of each job ``snakemake -n evaluate`` plans, from its job list."""
    done = _snakemake(workdir, "-n", "evaluate")
    assert done.returncode == 0, done.stderr[-3000:]
    jobs = []
    for block in re.split(r"^(?:local)?rule ", done.stdout + done.stderr, flags=re.M)[1:]:
        model = re.search(r"^\s+wildcards: .*?\bmodel=([^,\s]+)", block, flags=re.M)
        jobs.append((block.split(":")[0], model and model.group(1)))
    return jobs


@pytest.mark.slow  # a real run of two tiny checkpoints (about 50 s on 2 busy cores)
def test_adding_two_checkpoints_to_a_series_plans_only_their_jobs(tmp_path) -> None:
    checkpoints = tmp_path / "checkpoints"
    first = build_tiny_model(checkpoints / "step100-tokens1B", seed=0)
    shutil.copytree(first, checkpoints / "step200-tokens2B")
    series = {
        "tiny-lm": {
            "source": "checkpoints",
            "display_name": "tiny LM trained on nothing (random weights)",
            "checkpoints": {"match": r"^step\d+-tokens\d+B$"},
            "tokens": {"rule": "olmo"},
        }
    }
    write_workflow_config(
        tmp_path, {}, tasks=["winogrande"], limit=2, robustness=NO_ROBUSTNESS, series=series
    )
    before = _planned_jobs(tmp_path)
    old = {"tiny-lm-step100-tokens1B", "tiny-lm-step200-tokens2B"}
    assert {model for _, model in before if model} == old
    assert sum(rule == "logprobs" for rule, _ in before) == 2
    # the two checkpoints' jobs, up to their scores (the tables and the site gather all models: they
    # are planned again after any model is added)
    done = _snakemake(tmp_path, "--cores", "2", "evaluate", "--until", "score")
    assert done.returncode == 0, done.stderr[-3000:]

    for source, name in ((first, "step300-tokens3B"), (first, "step400-tokens4B")):
        shutil.copytree(source, checkpoints / name)
    after = _planned_jobs(tmp_path)
    new = {"tiny-lm-step300-tokens3B", "tiny-lm-step400-tokens4B"}
    assert {model for _, model in after if model} == new
    # besides: the jobs over all models, and the site's instance file (its input, not made until score)
    assert sorted(rule for rule, model in after if not model) == [
        "evaluate", "instances", "models_file", "site", "tables",
    ]  # fmt: skip
    per_model = [rule for rule, model in after if model == "tiny-lm-step300-tokens3B"]
    assert sorted(set(per_model)) == ["logprobs", "predict", "score"] and per_model.count("logprobs") == 1
    assert len(after) == len(before) - 2  # the same jobs as the first two had, but the two request jobs
