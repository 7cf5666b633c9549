"""Faults and bad input around the workflow and the site (issue 29, cases 1, 12, 14 and 15).

1. a results (or store, or site) path with a space: every rule's shell command keeps each path one
   word, so no rule writes over a file beside it (`2> notes v2/...` wrote stderr to `notes`);
12. a model spec naming a local path that is not there stops the workflow with one line before any job;
14. a display name thousands of characters long stays within its column on every page of the site;
15. on a cluster only the log-prob jobs are submitted: every other rule is a local rule.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from olmes.cli.config import validate_config
from olmes.cli.extras import extra_modules
from olmes.core.errors import OlmesError
from tests.helpers import WORKFLOW_LIMIT, watched, workflow_environment, write_workflow_config

pytestmark = pytest.mark.slow  # snakemake runs

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
SPACED = {"results": "notes v2", "store": "my store", "site": "my site"}
"""A config's folders, each with a space; `notes v2` beside a file `notes` (the issue's case)."""


def _snakemake(
    workdir: Path, *args: str, snakefile: Path = REPO / "Snakefile"
) -> subprocess.CompletedProcess:
    command = [
        str(Path(sys.executable).parent / "snakemake"), "-s", str(snakefile), "--directory", str(workdir),
        "--workflow-profile", str(REPO / "workflow" / "profiles" / "default"), *args,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env=workflow_environment(), timeout=600)


def _minimal_store(root: Path, name: str = "SmolLM2-135M") -> None:
    """The committed store's store.json and one model record: enough for the leaderboard's rules
    (reproduce, leaderboard_tables, leaderboard_site) to be planned in a dry run."""
    (root / "models" / name).mkdir(parents=True)
    (root / "store.json").write_bytes((REPO / "leaderboard" / "store.json").read_bytes())
    record = REPO / "leaderboard" / "models" / name / "model.json"
    (root / "models" / name / "model.json").write_bytes(record.read_bytes())


@pytest.fixture(scope="module")
def rule_locality(tmp_path_factory) -> dict[str, bool]:
    """Every rule of the workflow, and whether it runs where snakemake runs (a local rule: named in a
    `localrules:` directive or `localrule: True`, or a rule without an action); read by a Snakefile
    that includes the workflow's and then lists its rules (`--list-rules`: no job is planned)."""
    workdir = tmp_path_factory.mktemp("locality")
    write_workflow_config(workdir, {}, models={"Tiny": {"spec": "smollm2-135m"}})
    wrapper = workdir / "Snakefile"
    wrapper.write_text(
        f"include: {str(REPO / 'Snakefile')!r}\n\n"
        "import json as _json\n"
        "print('LOCALITY', _json.dumps({rule.name: rule.name in workflow._localrules or rule.norun"
        " for rule in workflow.rules}))\n",
        encoding="utf-8",
    )
    done = _snakemake(workdir, "--list-rules", snakefile=wrapper)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("LOCALITY "))
    return json.loads(line.removeprefix("LOCALITY "))


# -- case 15: only the model jobs (log-probs, generations) are cluster jobs --------------------------


def test_every_rule_but_the_model_jobs_is_a_local_rule(rule_locality) -> None:
    assert {"logprobs", "rotations", "requests", "leaderboard_site"} <= set(rule_locality)  # read them all
    assert [name for name, local in rule_locality.items() if not local] == ["logprobs", "generate"]


# -- case 1: paths with a space ----------------------------------------------------------------------


def test_every_rules_shell_command_keeps_each_path_with_a_space_one_word(tmp_path, rule_locality) -> None:
    """A dry run of every target on a config whose results, store and site folders have a space: each
    printed shell command, split as the shell splits it, keeps every such path whole; every rule of
    the workflow is among the jobs."""
    _minimal_store(tmp_path / SPACED["store"])
    write_workflow_config(
        tmp_path, {}, models={"Tiny": {"spec": "smollm2-135m"}}, generative_tasks=["naturalqs_open"], **SPACED
    )
    done = _snakemake(tmp_path, "-n", "all", "evaluate", "publish")
    assert done.returncode == 0, done.stderr[-3000:]
    rule, commands = None, {}
    for line in done.stdout.splitlines():
        if match := re.match(r"(?:local)?rule (\w+):$", line):
            rule = match.group(1)
        elif line.startswith("Shell command: ") and line != "Shell command: None":
            commands.setdefault(rule, []).append(line.removeprefix("Shell command: "))
    ruled = set(re.findall(r"^(?:local)?rule (\w+):$", done.stdout, re.M))
    assert ruled == set(rule_locality)  # every rule was planned, so every shell command was seen
    assert {"requests", "logprobs", "score", "publish", "reproduce", "leaderboard_site"} <= set(commands)
    for rule, lines in commands.items():
        for command in lines:
            words = shlex.split(command)
            for folder in SPACED.values():
                whole = sum(word.count(folder) for word in words)
                assert whole == command.count(folder), f"rule {rule}: {folder!r} split in {command}"
    assert not (tmp_path / "notes").exists()


def test_a_results_folder_with_a_space_leaves_the_file_beside_it_alone(tmp_path) -> None:
    """The issue's case: results `notes v2` beside a file `notes`. The request and instance jobs run;
    `notes` keeps its bytes (unquoted, `2> notes v2/logs/...` wrote the job's errors over it)."""
    (tmp_path / "notes").write_text("a file of the user's\n", encoding="utf-8")
    write_workflow_config(tmp_path, {}, models={"Tiny": {"spec": "smollm2-135m"}}, **SPACED)
    targets = ["notes v2/requests/arc_challenge.mcf.jsonl", "notes v2/requests/arc_challenge.instances.jsonl"]
    done = _snakemake(tmp_path, "--cores", "1", *targets)
    assert (tmp_path / "notes").read_text(encoding="utf-8") == "a file of the user's\n"
    assert done.returncode == 0, done.stderr[-3000:]
    instances = (tmp_path / targets[1]).read_text(encoding="utf-8").splitlines()
    assert len(instances) == WORKFLOW_LIMIT
    assert len((tmp_path / targets[0]).read_text(encoding="utf-8").splitlines()) == 4 * WORKFLOW_LIMIT
    assert (tmp_path / "notes v2" / "logs" / "requests" / "arc_challenge.mcf.log").is_file()


# -- case 12: model specs checked with the config ----------------------------------------------------


def _config(spec: str) -> dict:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    return {**config, "models": {"M": {"spec": spec}}}


@pytest.mark.parametrize(
    "spec",
    ["smollm2-135m", "gemma3-270m", "allenai/OLMo-2-0425-1B", "allenai/OLMo-2-0425-1B@a1b2c3d", "hf", "./hf",
     "model.gguf", "./model.gguf", "{root}/hf", "{root}/model.gguf"],
)  # fmt: skip
def test_config_accepts_short_names_hub_ids_and_local_models_that_are_there(local_models, spec) -> None:
    validate_config(_config(spec.format(root=local_models)), SCHEMA)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("/no/such/model", "the model folder /no/such/model does not exist; give a Hugging Face folder"),
        ("./missing", "the model folder ./missing does not exist (relative to {root})"),
        ("../missing", "the model folder ../missing does not exist (relative to {root})"),
        ("~/no-such-olmes-model", "the model folder ~/no-such-olmes-model does not exist"),
        ("missing.gguf", "the GGUF file missing.gguf does not exist (relative to {root})"),
        ("{root}/missing.gguf", "the GGUF file {root}/missing.gguf does not exist"),
        ("bare", "the folder bare has no config.json (not a Hugging Face model)"),
        ("./weights.bin", "./weights.bin is a file, not a model folder (with config.json) or a .gguf file"),
        ("weights.bin", "weights.bin is a file, not a model folder"),
        ("models/a/b", "models/a/b does not exist (relative to {root}) and is no hub id"),
        ("no-such-short-name", "unknown model short name 'no-such-short-name'"),
    ],
)
def test_config_refuses_a_local_model_that_is_not_there(local_models, spec, message) -> None:
    spec, message = spec.format(root=local_models), message.format(root=local_models)
    with pytest.raises(OlmesError) as raised:
        validate_config(_config(spec), SCHEMA)
    assert str(raised.value).startswith("config key 'models.M.spec': ") and message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_missing_model_folder_stops_the_workflow_in_one_line_before_any_job(tmp_path) -> None:
    write_workflow_config(tmp_path, {"Tiny": tmp_path / "no" / "such" / "model"})
    done = _snakemake(tmp_path, "-n", "evaluate")
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if "olmes: error" in line]
    assert errors == [
        f"olmes: error: config key 'models.Tiny.spec': the model folder {tmp_path}/no/such/model does not "
        "exist; give a Hugging Face folder (with config.json), a .gguf file, a hub id org/name[@revision] or "
        "a short name"
    ]
    assert "Traceback" not in done.stderr and "rule " not in done.stdout
    assert not (tmp_path / "results").exists()


def test_the_model_spec_check_needs_no_model_packages(tmp_path) -> None:
    """The config check runs on the light install: with torch and the models extra unimportable."""
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text("{}", encoding="utf-8")
    blocked = [name for name, extra in extra_modules() if extra == "models"]
    assert "torch" in blocked
    script = f"""
import sys, yaml
for name in {blocked!r}:
    sys.modules[name] = None
from pathlib import Path
from olmes.cli.config import validate_config
from olmes.core.errors import OlmesError
config = yaml.safe_load(Path({str(REPO / "config" / "config.yaml")!r}).read_text())
schema = Path({str(SCHEMA)!r})
validate_config({{**config, "models": {{"M": {{"spec": "./hf"}}, "H": {{"spec": "org/name"}}}}}}, schema)
try:
    validate_config({{**config, "models": {{"M": {{"spec": "./nothing"}}}}}}, schema)
except OlmesError as error:
    print(error)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the model folder ./nothing does not exist" in done.stdout


# -- case 14: a very long display name on the site ---------------------------------------------------

LONG_NAME = ("VeryLongModelName" * 300)[:4832]  # no space, no hyphen: no place the browser may break it


@pytest.fixture(scope="module")
def long_name_site(tmp_path_factory) -> Path:
    """The committed store's two models' scores, tables and site, one model displayed as LONG_NAME."""
    root = tmp_path_factory.mktemp("long-name")
    models = root / "models.json"
    models.write_text(
        json.dumps(
            {"models": [{"name": "SmolLM2-135M", "display_name": LONG_NAME}, {"name": "Gemma-3-270M"}]}
        ),
        encoding="utf-8",
    )
    scores = [
        str(REPO / "leaderboard" / "models" / name / "scores") for name in ("SmolLM2-135M", "Gemma-3-270M")
    ]
    olmes = str(Path(sys.executable).parent / "olmes")
    for command in (
        [olmes, "tables", "--scores", *scores, "--models", str(models), "--out", str(root / "tables")],
        [olmes, "site", "--scores", *scores, "--models", str(models), "--tables", str(root / "tables"),
         "--out", str(root / "site")],
    ):  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    return root / "site"


def test_a_long_display_name_keeps_the_leaderboard_scores_in_view(long_name_site, browser) -> None:
    with watched(browser, width=1366, height=900) as w:
        page = w.goto((long_name_site / "index.html").as_uri())
        layout = page.evaluate(
            """() => {
              const box = document.querySelector('.leaderboard-scroll');
              const row = [...document.querySelectorAll('#leaderboard tbody tr')]
                .find(tr => tr.getAttribute('data-name').startsWith('verylong'));
              const name = row.querySelector('th.model-col'), link = name.querySelector('a');
              const r = name.getBoundingClientRect(), line = parseFloat(getComputedStyle(link).lineHeight);
              return {scroll: box.scrollWidth, visible: box.clientWidth,
                      right: box.getBoundingClientRect().right,
                      headers: [...document.querySelectorAll('#leaderboard thead th')]
                        .map(th => th.getBoundingClientRect().right),
                      width: r.width, linkHeight: link.getBoundingClientRect().height, line,
                      title: link.title, text: link.textContent};
            }"""
        )
        assert layout["scroll"] <= layout["visible"] + 1, layout["scroll"]  # nothing to scroll to
        assert max(layout["headers"]) <= layout["right"] + 1  # the last score column is on screen
        assert layout["width"] <= 22 * 16  # the name cell: at most its max-width (20rem) and padding
        assert layout["linkHeight"] <= 3 * layout["line"] + 1  # three lines at most, then an ellipsis
        assert layout["title"] == layout["text"] == LONG_NAME  # the whole name is still there
        assert w.errors == []


NAME_BOXES = """name => {
  const found = [], walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!node.textContent.includes(name) || element.closest('script, datalist, noscript, svg')) continue;
    const box = element.getBoundingClientRect();
    if (!box.width) continue;  // not shown
    found.push({tag: element.tagName, inTable: !!element.closest('table'),
                scrolls: !!element.closest('.scroll, .chart-scroll, .preds-wrap'), width: box.width,
                right: box.right, lines: box.height / parseFloat(getComputedStyle(element).lineHeight)});
  }
  return found;
}"""


def test_a_long_display_name_stays_within_its_column_on_every_page(long_name_site, browser) -> None:
    """On every page (and the instance browser's chips and tables, made by its script): no page wider
    than the window; in a table, every element that shows the name is at most 22rem wide and three
    lines tall; outside tables, the name stays within the window (a model page's heading shows it all)."""
    with watched(browser, width=1366, height=900) as w:
        for path in sorted(long_name_site.rglob("*.html")):
            page = w.goto(path.as_uri())
            if page.locator("#browser-list").count():
                page.wait_for_selector("#browser-list .instance, #browser-list .empty")
            where = path.relative_to(long_name_site)
            assert page.evaluate("document.documentElement.scrollWidth") <= 1366, where
            boxes = page.evaluate(NAME_BOXES, LONG_NAME)
            if path.name in ("index.html", "SmolLM2-135M.html", "arc_challenge.html"):
                assert boxes, where  # the name is shown there
            for box in boxes:
                if box["inTable"]:
                    assert box["width"] <= 22 * 16 + 1 and box["lines"] <= 3.01, (where, box)
                elif not box["scrolls"]:
                    assert box["right"] <= 1366, (where, box)
        assert w.errors == []
