"""Plain helpers shared by several test modules: made-up engine rows and files, run records, the
headless-Chromium page wrapper, the tiny workflow configuration. Fixtures live in conftest.py."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from olmes.core.records import LOGPROB_SCORED
from olmes.core.tasks import get_task
from olmes.requests.build import request_sets

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
