"""The identity of evaluated models (olmes.logprobs.identity): read from GGUF metadata and Hugging Face
configs, carried by run records and the store, and said on every page, table and README row."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from olmes import store
from olmes.core import identities
from olmes.core.errors import OlmesError
from olmes.logprobs import identity as ident
from olmes.logprobs import models, runner
from olmes.logprobs.embedded import EMBEDDED
from olmes.logprobs.embedded_files import embedded_gguf
from olmes.logprobs.hashing import cached_sha256
from olmes.store.upgrade import upgrade_store

REPO = Path(__file__).resolve().parent.parent
LEADERBOARD = REPO / "leaderboard"


def write_gguf(
    path: Path, *, name: str, file_type: int | None = None, source: str | None = None, dtype=np.float16
):
    """A tiny GGUF: a name, optionally a file type and a source repository, two tensors."""
    from gguf import GGUFWriter

    writer = GGUFWriter(str(path), "llama")
    writer.add_name(name)
    if file_type is not None:
        writer.add_file_type(file_type)
    if source is not None:
        writer.add_source_url(source)
    writer.add_array("tokenizer.ggml.tokens", [f"t{i}" for i in range(300)])  # an array to skip
    writer.add_tensor("token_embd.weight", np.zeros((8, 4), dtype=dtype))
    writer.add_tensor("output_norm.weight", np.zeros(4, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_gguf_identity_comes_from_its_metadata(tmp_path) -> None:
    from gguf import LlamaFileType

    instruct = write_gguf(
        tmp_path / "tiny.gguf",
        name="Tiny 1M Instruct",
        file_type=LlamaFileType.MOSTLY_Q4_K_M,
        source="https://huggingface.co/org/Tiny-1M-Instruct",
    )
    assert ident.gguf_identity(instruct, "float32") == {
        "original": "org/Tiny-1M-Instruct",
        "tuning": "instruct",
        "weight_format": "gguf",
        "quantization": "Q4_K_M",
        "compute_dtype": "float32",
        "evidence": "GGUF metadata and file name",
    }
    # no file type: the commonest type of the matrices; no tuning word, no source: unknown
    plain = ident.gguf_identity(write_gguf(tmp_path / "plain.gguf", name="Tiny 1M"), "bfloat16")
    assert (plain["quantization"], plain["tuning"], plain["original"]) == ("F16", "unknown", "unknown")
    full = write_gguf(tmp_path / "tiny-base.gguf", name="Tiny", dtype=np.float32)
    assert ident.gguf_identity(full, "float32")["quantization"] == "none"
    assert ident.gguf_identity(full, "float32")["tuning"] == "base"  # the file name says it
    (tmp_path / "bad.gguf").write_bytes(b"GGUF\x01\x00")
    with pytest.raises(OlmesError, match="cannot read the GGUF metadata"):
        ident.gguf_identity(tmp_path / "bad.gguf", "float32")


def test_the_embedded_models_are_an_instruct_q4_1_and_a_base_q4_k_m_gguf() -> None:
    found = {}
    for gguf in (embedded_gguf(model) for model in EMBEDDED.values()):
        found[gguf.name] = ident.gguf_identity(gguf, "float32", cached_sha256(gguf))
    smollm2, gemma = found.values()
    assert (smollm2["tuning"], smollm2["quantization"]) == ("instruct", "Q4_1")
    assert smollm2["original"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert (gemma["tuning"], gemma["quantization"], gemma["original"]) == (
        "base",
        "Q4_K_M",
        "google/gemma-3-270m",
    )
    assert "olmes's record" in gemma["evidence"]  # the metadata itself does not say base


def test_hugging_face_identity_comes_from_config_and_files(tmp_path) -> None:
    folder = tmp_path / "tiny-chat"
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps({"quantization_config": {"quant_method": "gptq", "bits": 4}})
    )
    (folder / "model.safetensors").write_bytes(b"")
    found = ident.hf_identity(folder, "float16")
    assert (found["tuning"], found["weight_format"], found["quantization"]) == (
        "instruct",
        "safetensors",
        "gptq 4-bit",
    )
    assert found["original"] == "unknown"
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(b"")
    hub = ident.hf_identity(folder, "bfloat16", "org/Model-7B")
    assert hub == {
        "original": "org/Model-7B",
        "tuning": "unknown",  # the hub id says neither; the folder's name is not consulted
        "weight_format": "pytorch",
        "quantization": "none",
        "compute_dtype": "bfloat16",
        "evidence": "config.json and the hub id",
    }


def test_the_run_record_carries_the_identity(tmp_path) -> None:
    from tests.tiny_model import build_tiny_model

    plan = models.prepare(str(build_tiny_model(tmp_path / "tiny-base")), device="cpu")
    requests = tmp_path / "r.jsonl"
    requests.write_text("")
    record = runner.run_record(plan, requests, 0, 0, None, 512)
    assert record["identity"]["tuning"] == "base" and record["identity"]["weight_format"] == "safetensors"
    assert record["identity"]["compute_dtype"] == record["dtype"]


def test_display_names_get_the_qualifiers_they_lack() -> None:
    gguf = {"tuning": "instruct", "quantization": "Q4_1", "weight_format": "gguf"}
    assert identities.qualified_name("SmolLM2-135M", gguf) == "SmolLM2-135M instruct Q4_1 GGUF"
    assert (
        identities.qualified_name("SmolLM2-135M-Instruct Q4_1 GGUF", gguf)
        == "SmolLM2-135M-Instruct Q4_1 GGUF"
    )
    plain = {"tuning": "unknown", "quantization": "none", "weight_format": "safetensors"}
    assert identities.missing_qualifiers("OLMo-7B", plain) == []


# -- the committed store ---------------------------------------------------------------------------


def _old_store(root: Path) -> Path:
    """The committed store with its model records as they were before identities: no identity, the
    name as display name (the committed store's run records carry none: its identities come from the
    maintainers' reproductions)."""
    shutil.copytree(LEADERBOARD, root, ignore=shutil.ignore_patterns("generative", "*.gen.*"))
    for name in store.model_names(root):
        path = root / "models" / name / "model.json"
        record = json.loads(path.read_text())
        record.pop("identity")
        record.pop("generative", None)  # the generative results came later
        record["display_name"] = name
        path.write_text(json.dumps(record, indent=2) + "\n")
    return root


@pytest.mark.slow
def test_upgrade_gives_an_old_store_its_confirmed_identities_idempotently(tmp_path) -> None:
    old = _old_store(tmp_path / "store")
    assert upgrade_store(old).rewritten
    for name in store.model_names(LEADERBOARD):
        committed = store.read_model_record(LEADERBOARD, name)
        committed.pop("generative", None)
        assert store.read_model_record(old, name) == committed
    before = {p: p.read_bytes() for p in old.rglob("*.json")}
    assert not upgrade_store(old).rewritten
    assert before == {p: p.read_bytes() for p in old.rglob("*.json")}


def test_upgrade_gives_no_identity_that_nothing_confirms(tmp_path) -> None:
    old = _old_store(tmp_path / "store")
    shutil.rmtree(old / "reproductions")
    upgrade_store(old)
    for name in store.model_names(old):
        record = store.read_model_record(old, name)
        assert "identity" not in record and record["display_name"] == name
    with pytest.raises(OlmesError, match="not an olmes results store"):
        upgrade_store(tmp_path)


def test_config_store_and_scheme_name_the_models_alike() -> None:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["models"]
    for name in store.model_names(LEADERBOARD):
        record = store.read_model_record(LEADERBOARD, name)
        assert record["display_name"] == config[name]["display_name"]
        assert record["display_name"] == identities.qualified_name(name, record["identity"])


# -- every place that names a model says what it is ---------------------------------------------------


def visible_text(page: str) -> str:
    """What a reader sees of an HTML page: its text and tooltips; not scripts, styles, code or
    command lines (identifiers: specs, file names, result keys)."""
    tips = " ".join(re.findall(r'(?:title|aria-label|alt)="([^"]*)"', page))
    body = re.sub(r"<(script|style|code|pre)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", " ", body) + " " + tips)


def unqualified_mentions(text: str, names: dict[str, str]) -> list[str]:
    """Mentions of a model (its name, any separators, any case) that are not its display name."""
    found = []
    for name, display in names.items():
        rest = text.replace(display, " ")
        pattern = "[-_ ]?".join(map(re.escape, re.split(r"[-_ ]+", name)))
        found += [rest[max(0, m.start() - 40) : m.end() + 20] for m in re.finditer(pattern, rest, re.I)]
    return found


def _table_texts(folder: Path) -> dict[str, str]:
    """What each table shows: CSV and LaTeX whole, JSON's title, caption, header and rows."""
    texts = {}
    for path in sorted(folder.iterdir()):
        if path.suffix == ".tex":
            texts[path.name] = path.read_text().replace("\\_", "_")
        elif path.suffix == ".csv":
            rows = csv.DictReader(io.StringIO(path.read_text()))
            texts[path.name] = json.dumps([_shown(row) for row in rows], ensure_ascii=False)
        elif path.suffix == ".json" and path.name not in ("index.json", "flags.json"):
            table = json.loads(path.read_text())
            shown = {key: table.get(key) for key in ("title", "caption", "header")}
            shown["rows"] = [_shown(row) if isinstance(row, dict) else row for row in table.get("rows", [])]
            texts[path.name] = json.dumps(shown, ensure_ascii=False)
    return texts


def _shown(row: dict) -> dict:
    """A data row without its ``model`` column: the result key, an identifier (display_name is beside it)."""
    return {key: value for key, value in row.items() if key != "model"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    from olmes.cli.main import main

    out = tmp_path_factory.mktemp("honest")
    assert main(["tables", "--store", str(LEADERBOARD), "--out", str(out / "tables")]) == 0
    argv = ["site", "--store", str(LEADERBOARD), "--tables", str(out / "tables"), "--out", str(out / "site")]
    assert main(argv) == 0
    return out


def test_no_page_table_or_readme_row_names_a_model_as_its_original(built) -> None:
    records = [store.read_model_record(LEADERBOARD, name) for name in store.model_names(LEADERBOARD)]
    assert all(identities.missing_qualifiers(r["display_name"], r["identity"]) == [] for r in records)
    names = {record["name"]: record["display_name"] for record in records}
    texts = {str(p.relative_to(built)): visible_text(p.read_text()) for p in (built / "site").rglob("*.html")}
    texts |= _table_texts(built / "tables")
    readme = (REPO / "README.md").read_text()
    texts["README.md"] = re.sub(r"`[^`\n]*`|\]\([^)]*\)", " ", readme)  # code and link targets: identifiers
    leaks = {where: found for where, text in texts.items() if (found := unqualified_mentions(text, names))}
    assert leaks == {}
    # the scan finds a model named as its original (as the pages did before identities)
    page = texts["site/index.html"]
    assert all(display in page for display in names.values())
    for name, display in names.items():
        assert unqualified_mentions(page.replace(display, name), names)


def test_the_leaderboard_and_model_pages_state_the_identity(built) -> None:
    index = (built / "site" / "index.html").read_text()
    assert "instruct · GGUF weights, Q4_1 · computed in float32 (dequantized)" in index
    assert "base · GGUF weights, Q4_K_M · computed in float32 (dequantized)" in index
    page = visible_text((built / "site" / "models" / "Gemma-3-270M.html").read_text())
    assert "What was evaluated" in page and "Q4_K_M" in page and "olmes's record of this file" in page


def test_the_committed_models_are_shown_reproduced(built) -> None:
    """Issue 37: both embedded models carry a maintainer's reproduction record (leaderboard/reproductions/),
    so the leaderboard and their pages show them reproduced, never merely submitted."""
    index = (built / "site" / "index.html").read_text()
    assert index.count('class="badge badge-reproduced"') == len(store.model_names(LEADERBOARD)) == 2
    assert "badge-submitted" not in index
    for name in store.model_names(LEADERBOARD):
        page = visible_text((built / "site" / "models" / f"{name}.html").read_text())
        assert "Reproduced: a maintainer recomputed the first instances of every task" in page
