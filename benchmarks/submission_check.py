"""The whole submission check (scripts/submission_check.sh, as .github/workflows/submission.yml runs it)
on an honest pull request and on each attack of issue 37, timed, in a clone of this repository.

The base branch is this repository's HEAD without the Gemma-3-270M model folder; the honest pull
request adds it back (a new model: all 10 tasks verified, 5 instances per task reproduced from its
weights, as the workflow does); each attack is a pull request off the base (or off the honest one, for
the claims). Prints one line per case: exit status, seconds, and the check's deciding line.

    .venv/bin/python benchmarks/submission_check.py [--reproduce 5]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
MODEL = "Gemma-3-270M"
FOLDER = f"leaderboard/models/{MODEL}"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def branch(repo: Path, name: str, start: str, change) -> None:
    git(repo, "checkout", "-q", "-b", name, start)
    change(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", name)
    git(repo, "checkout", "-q", "base")


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


def rename_summary_model(repo: Path) -> None:
    """Case 6: the summary, the predictions' model column and its SHA-256 say GPT-5-Turbo."""
    scores = repo / FOLDER / "scores"
    predictions = scores / "arc_easy.predictions.parquet"
    frame = pd.read_parquet(predictions)
    frame["model"] = "GPT-5-Turbo"
    frame.to_parquet(predictions, index=False)
    sha256 = hashlib.sha256(predictions.read_bytes()).hexdigest()
    edit_json(
        scores / "arc_easy.scores.json",
        lambda s: s.update(model="GPT-5-Turbo") or s["predictions"].update(sha256=sha256),
    )


def write(name: str, text: str = "x\n"):
    def change(repo: Path) -> None:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)

    return change


def cases() -> dict[str, tuple[str, object]]:
    """Each pull request: (the branch it starts from, its change)."""
    return {
        "honest: a new model": ("base", lambda r: git(r, "checkout", "main", "--", FOLDER)),
        "1 rename of the workflow into a leftover": (
            "base",
            lambda r: git(r, "mv", ".github/workflows/submission.yml", "leaderboard/.submission.abc.tmp"),
        ),
        "2 .gitignore listing models/": ("base", write("leaderboard/.gitignore", "/blobs/\nmodels/\n")),
        "3a a committed publish lock": (
            "base",
            write("leaderboard/.publish.lock", '{"pid": 1, "host": "x"}\n'),
        ),
        "3b a publish leftover holding HTML": (
            "base",
            write("leaderboard/models/.X.publishing-x1/a.html", "<b>x</b>\n"),
        ),
        "4 blobs linked out of the store": (
            "base",
            lambda r: os.symlink("../../outside", r / "leaderboard/blobs"),
        ),
        "5 model.json display name edited": (
            "honest",
            lambda r: edit_json(r / FOLDER / "model.json", lambda m: m.update(display_name="Llama-3-70B")),
        ),
        "5 model.json identity and dtype edited": (
            "honest",
            lambda r: edit_json(
                r / FOLDER / "model.json",
                lambda m: (
                    m.update(dtype="bfloat16")
                    or m["identity"].update(weight_format="safetensors", quantization="none")
                ),
            ),
        ),
        "6 a summary naming GPT-5-Turbo": ("honest", rename_summary_model),
        "7 a model folder differing only in case": (
            "honest",
            lambda r: shutil.copytree(r / FOLDER, r / "leaderboard/models/gemma-3-270m"),
        ),
        "a reproduction record in the PR": (
            "base",
            write("leaderboard/reproductions/Gemma-3-270M/x.parquet"),
        ),
    }


def run_check(repo: Path, pr: str, reproduce: int) -> tuple[int, float, str]:
    env = {
        **os.environ,
        "OLMES": str(REPO / ".venv" / "bin" / "olmes"),
        "OLMES_REPRODUCE_LIMIT": str(reproduce),
    }
    started = time.monotonic()
    done = subprocess.run(
        ["bash", "scripts/submission_check.sh", "base", pr], cwd=repo, capture_output=True, text=True, env=env
    )
    seconds = time.monotonic() - started
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    return done.returncode, seconds, deciding_line(done.returncode, lines)


def deciding_line(code: int, lines: list[str]) -> str:
    """A refusal, else verify's first problem, else its verdict and the reproduced sample's verdict."""
    refused = [line for line in lines if "refused" in line]
    said = ("olmes: verify: against", "olmes: verify: clean", "olmes: verify: note")
    problems = [line for line in lines if line.startswith("olmes: verify: ") and not line.startswith(said)]
    if code and (refused or problems):
        return (refused or problems)[0]
    verdicts = [
        line for line in lines if line.startswith("olmes: verify: clean") or "decisions identical" in line
    ]
    return " | ".join(verdicts) or lines[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reproduce", type=int, default=5, help="instances per task the check reproduces")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="olmes-submissions-") as work:
        repo = Path(work) / "repo"
        subprocess.run(["git", "clone", "-q", str(REPO), str(repo)], check=True)
        git(repo, "config", "user.email", "bench@example.com")
        git(repo, "config", "user.name", "bench")
        git(repo, "checkout", "-q", "-b", "base")
        git(repo, "rm", "-q", "-r", FOLDER)
        git(repo, "commit", "-q", "-m", f"base: the store without {MODEL}")
        print(f"{'case':<42} {'exit':>4} {'seconds':>8}  deciding line")
        for name, (start, change) in cases().items():
            pr = (
                "honest"
                if name.startswith("honest")
                else name.split()[0] + "-" + str(abs(hash(name)) % 10**6)
            )
            branch(repo, pr, start, change)
            code, seconds, line = run_check(repo, pr, args.reproduce)
            print(f"{name:<42} {code:>4} {seconds:>8.1f}  {line[:220]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
