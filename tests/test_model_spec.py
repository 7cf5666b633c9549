"""The one model-spec parser (olmes.logprobs.spec): each kind, bad specs in one line, no torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from olmes.core.errors import OlmesError
from olmes.logprobs.spec import ModelSpec, parse_model_spec


def test_short_names_are_not_paths() -> None:
    assert parse_model_spec("smollm2-135m") == ModelSpec("smollm2-135m", "short-name")
    assert parse_model_spec("gemma3-270m").path is None


def test_a_gguf_file_is_a_gguf_spec(local_models) -> None:
    assert parse_model_spec("model.gguf") == ModelSpec("model.gguf", "gguf", Path("model.gguf"))
    absolute = str(local_models / "model.gguf")
    assert parse_model_spec(absolute).path == local_models / "model.gguf"


@pytest.mark.parametrize("spec", ["hf", "./hf", "{root}/hf"])
def test_a_folder_with_config_json_is_local(local_models, spec) -> None:
    spec = spec.format(root=local_models)
    parsed = parse_model_spec(spec)
    assert parsed.kind == "local" and (parsed.path / "config.json").is_file()
    assert parsed.repo_id is None and parsed.revision is None


def test_home_is_expanded(monkeypatch, local_models) -> None:
    monkeypatch.setenv("HOME", str(local_models))
    assert parse_model_spec("~/hf").path == local_models / "hf"


def test_hub_ids_split_into_repo_and_revision(local_models) -> None:
    latest = parse_model_spec("allenai/OLMo-2-0425-1B")
    assert latest == ModelSpec("allenai/OLMo-2-0425-1B", "hub", repo_id="allenai/OLMo-2-0425-1B")
    pinned = parse_model_spec("org/name@a1b2c3d")
    assert (pinned.kind, pinned.repo_id, pinned.revision, pinned.path) == ("hub", "org/name", "a1b2c3d", None)


def test_a_local_folder_wins_over_a_hub_id_of_the_same_name(local_models) -> None:
    (local_models / "org" / "name").mkdir(parents=True)
    (local_models / "org" / "name" / "config.json").write_text("{}", encoding="utf-8")
    assert parse_model_spec("org/name").kind == "local"
    assert parse_model_spec("org/name@v1").kind == "hub"  # no folder of that name


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("missing.gguf", "the GGUF file missing.gguf does not exist (relative to {root})"),
        ("./missing", "the model folder ./missing does not exist (relative to {root}); give a Hugging Face"),
        ("/no/such/model", "the model folder /no/such/model does not exist; give"),
        ("bare", "the folder bare has no config.json (not a Hugging Face model)"),
        ("./weights.bin", "./weights.bin is a file, not a model folder (with config.json) or a .gguf file"),
        ("weights.bin", "weights.bin is a file, not a model folder"),
        ("a/b/c", "a/b/c does not exist (relative to {root}) and is no hub id (org/name[@revision])"),
        ("no such model!", "unknown model short name 'no such model!'; known short names: gemma3-270m"),
    ],
)
def test_bad_specs_say_what_is_wrong_in_one_line(local_models, spec, message) -> None:
    with pytest.raises(OlmesError) as raised:
        parse_model_spec(spec)
    assert str(raised.value).startswith(message.format(root=local_models))
    assert "\n" not in str(raised.value)


def test_the_parser_imports_neither_torch_nor_transformers(local_models) -> None:
    code = (
        "import sys\n"
        "from olmes.logprobs.spec import parse_model_spec\n"
        "for spec in ('smollm2-135m', 'model.gguf', 'hf', 'org/name@v1'):\n"
        "    parse_model_spec(spec)\n"
        "print(sorted({'torch', 'transformers'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=local_models)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("spec", ["hf", "smollm2-135m", "org/name@v1"])
def test_olmes_logprobs_parses_its_model_once(local_models, monkeypatch, spec) -> None:
    """The files check, the plan and the run record take the spec parsed once (the plan gets the
    ModelSpec); only a local folder is a file the command reads."""
    from olmes.cli.commands import logprobs as command
    from olmes.cli.main import main
    from olmes.logprobs import models
    from olmes.logprobs import spec as spec_module

    parsed, planned = [], []
    parse = spec_module.parse_model_spec
    monkeypatch.setattr(spec_module, "parse_model_spec", lambda text: parsed.append(text) or parse(text))
    original_files = command.files

    def files(args):
        found = original_files(args)
        planned.append([path for option, path in found.reads if option == "--model"])
        return found

    def prepare(model, *args, **kwargs):
        planned.append(model)
        raise OlmesError("stop here")

    monkeypatch.setattr(command, "files", files)
    monkeypatch.setattr(models, "prepare", prepare)
    (local_models / "requests.jsonl").write_text("", encoding="utf-8")
    argv = ["logprobs", "--model", spec, "--requests", "requests.jsonl", "--output", "out.parquet"]
    assert main(argv) == 2
    assert parsed == [spec]
    assert planned[0] == ([Path("hf")] if spec == "hf" else [])
    assert planned[1] == parse_model_spec(spec)
