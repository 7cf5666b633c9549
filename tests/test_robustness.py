"""The robustness tables on made-up log-probs whose answers are known: Table 5 compares a prompt
variant with the standard on the variant's own instances, the rotations table and letter bias come
from olmes rotations, and the site's Robustness page draws them (Chromium)."""

from __future__ import annotations

import json
import shutil

import pytest

from olmes.cli.main import main
from olmes.core.errors import OlmesError
from olmes.core.records import olmes_score
from olmes.scoring.score import score_task
from olmes.scoring.statistics import standard_error
from olmes.site.build import build_site
from olmes.tables.results import load_scores
from olmes.tables.robustness import table5
from tests.helpers import compile_latex, draw_charts_live, instance_rows, rotation_frames, watched, write

N = 40  # boolq instances of the standard run; the variant runs the first 10


def _boolq_files(tmp_path, name, cf_right, mcf_right, n, variant=None):
    """CF and MCF log-prob files of BoolQ: instance i is right under CF iff cf_right(i), MCF likewise."""
    extra = {"variant": variant} if variant else {}
    cf, mcf = [], []
    for index in range(n):
        label = index % 2
        wrong = 1 - label
        cf_sums = [-1.0 if choice == (label if cf_right(index) else wrong) else -3.0 for choice in range(2)]
        mcf_sums = [-0.5 if choice == (label if mcf_right(index) else wrong) else -2.0 for choice in range(2)]
        cf += instance_rows("boolq", "cf", index, [" yes", " no"], cf_sums, label, **extra)
        mcf += instance_rows("boolq", "mcf", index, [" A", " B"], mcf_sums, label, **extra)
    return write(tmp_path, f"{name}-cf.parquet", cf), write(tmp_path, f"{name}-mcf.parquet", mcf)


def _score(tmp_path, name, cf_path, mcf_path, limit):
    out = tmp_path / "scores" / name
    argv = ["score", "--model-name", "m", "--cf", str(cf_path), "--mcf", str(mcf_path), "--limit", str(limit)]
    argv += [
        "--predictions",
        str(out / "boolq.predictions.parquet"),
        "--summary",
        str(out / "boolq.scores.json"),
    ]
    assert main(argv) == 0
    return out / "boolq.scores.json"


@pytest.fixture
def results(tmp_path):
    """Model m: the standard on 40 BoolQ instances (CF right on 9 of the first 10, wrong on the
    rest; MCF always wrong) and var1 on the first 10 (CF right on 5, MCF on 8); plus rotations of
    ARC-Easy (a model that always answers A)."""
    standard = _score(
        tmp_path, "standard", *_boolq_files(tmp_path, "std", lambda i: i < 9, lambda i: False, N), N
    )
    variant = _boolq_files(tmp_path, "var1", lambda i: i < 5, lambda i: i < 8, 10, variant="var1")
    var1 = _score(tmp_path, "var1", *variant, 10)
    mcf, rot = rotation_frames([0, 1, 2, 3], [4, 4, 4, 4], lambda gold_position, k: 0)
    mcf_path, rot_path = write(tmp_path, "arc-mcf.parquet", mcf), write(tmp_path, "arc-rot.parquet", rot)
    rotations = tmp_path / "scores" / "rotations" / "arc_easy.rotations.json"
    argv = ["rotations", "--model-name", "m", "--mcf", str(mcf_path), "--rotations", str(rot_path)]
    assert main([*argv, "--output", str(rotations)]) == 0
    return {"standard": standard, "var1": var1, "rotations": rotations, "root": tmp_path}


def test_a_variant_is_labelled_and_never_an_olmes_score(results):
    summary = json.loads(results["var1"].read_text())
    assert summary["variant"] == "var1" and olmes_score(summary) is None
    assert "prompt variant var1, not the standard's prompts" in summary["partial_reasons"]
    assert "variant" not in json.loads(results["standard"].read_text())


def test_table5_compares_on_the_variants_instances(results):
    scores = load_scores([results["standard"], results["var1"], results["rotations"]])
    table = table5(scores)
    assert table.header == ["Model", "Task", "n", "orig", "var1", "average", "|orig - avg|", "std. err."]
    record = table.records[0]
    # orig is the standard's CF on the first 10 instances (9/10), not its 9/40 over all 40
    assert record["n"] == 10 and record["scores"]["orig"]["score"] == pytest.approx(0.9)
    assert record["scores"]["var1"]["score"] == pytest.approx(0.8) and record["scores"]["var1"]["dagger"]
    assert record["average"] == pytest.approx(0.85) and record["abs_orig_minus_average"] == pytest.approx(
        0.05
    )
    assert record["stderr"] == pytest.approx(standard_error(0.9, 10))
    assert [cell.display for cell in table.rows[0]] == ["m", "BoolQ", "10", "90.0ᵖ", "80.0†ᵖ", "85.0", "5.0",
                                                        f"{100 * standard_error(0.9, 10):.1f}"]  # fmt: skip


def test_tables_write_the_robustness_tables_and_latex_compiles(results):
    out = results["root"] / "tables"
    assert main(["tables", "--scores", str(results["root"] / "scores"), "--out", str(out)]) == 0
    rotations = json.loads((out / "rotations.json").read_text())
    assert rotations["header"][:4] == ["Model", "Task", "n", "order 0"]
    assert rotations["rows"][0][:3] == ["m", "ARC-Easy", "4"]
    bias = json.loads((out / "letter_bias.json").read_text())["rows"]
    assert {row["letter"]: row["predicted"] for row in bias} == {"A": 1.0, "B": 0.0, "C": 0.0, "D": 0.0}
    index = json.loads((out / "index.json").read_text())
    assert [entry["result"] for entry in index["robustness_inputs"]] == [
        ["m", "arc_easy", "rotations"], ["m", "boolq", "var1"]
    ]  # fmt: skip
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex not installed")
    done = compile_latex(out)
    assert done.returncode == 0, done.stdout[-3000:]


def test_inconsistent_robustness_inputs_are_refused(results, tmp_path):
    with pytest.raises(OlmesError, match="need its standard score summaries too"):
        load_scores([results["var1"]])
    other = _score(
        tmp_path, "other", *_boolq_files(tmp_path, "o", lambda i: True, lambda i: True, 10, "var1"), 10
    )
    with pytest.raises(OlmesError, match="both hold var1 scores of model 'm' on boolq"):
        load_scores([results["standard"], results["var1"], other])
    shorter = _boolq_files(tmp_path, "short", lambda i: True, lambda i: True, 6, variant="var1")
    cf_var1, _ = _boolq_files(tmp_path, "v", lambda i: True, lambda i: True, 10, variant="var1")
    with pytest.raises(OlmesError, match="different prompt variants scored together"):
        score_task("m", cf_path=cf_var1, mcf_path=_boolq_files(tmp_path, "s", bool, bool, 10)[1])
    short = _score(tmp_path, "short", *shorter, 6)
    with pytest.raises(OlmesError, match="the standard result has 3 of the 6 instances a variant scored"):
        table5(load_scores([_score(tmp_path, "s2", *_boolq_files(tmp_path, "s2", bool, bool, 3), 3), short]))


def test_robustness_page_draws_the_tables_and_letter_bias(results, browser):
    site, tables = results["root"] / "site", results["root"] / "site-tables"
    given = [str(results[key]) for key in ("standard", "var1", "rotations")]
    assert main(["tables", "--scores", *given, "--out", str(tables), "--resamples", "20"]) == 0
    build_site([results["standard"], results["var1"], results["rotations"]], site, tables)
    html = (site / "robustness.html").read_text()
    assert 'id="table5_variants"' in html and 'id="rotations"' in html and "No prompt variants" not in html
    with watched(browser) as w:
        page = w.goto((site / "robustness.html").as_uri())
        assert page.locator("#letter-bias svg .mark-rect path").count() == 8  # 4 letters x predicted, gold
        assert draw_charts_live(page) == 1
        assert page.locator("#letter-bias svg .mark-rect path").count() == 8
        assert page.locator("#table5_variants tbody tr").count() == 1
        assert w.errors == [] and w.blocked == []
    empty, tables = results["root"] / "site-empty", results["root"] / "tables-empty"
    assert main(["tables", "--scores", given[0], "--out", str(tables), "--resamples", "20"]) == 0
    build_site([results["standard"]], empty, tables)
    assert "No prompt variants were run" in (empty / "robustness.html").read_text()
