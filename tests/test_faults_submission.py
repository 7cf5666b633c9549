"""Issue 29, case 8: the submission workflow verifies a pull request with the base branch's code.

`scripts/submission_check.sh BASE PR` is what `.github/workflows/submission.yml` runs; here it runs the
same way in a temporary git repository with a base branch and two pull-request branches: one that
edits `olmes/store/verify.py` and a store file (refused in one line), one that changes only the store
(verified by the base's code, its `logprob_hosts` change named).
"""

from __future__ import annotations

import json
import os
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


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A base branch (a stub verify.py, a store with one log-prob host) and two PR branches."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "test@example.com")
    _git(repo, "config", "user.name", "test")
    store = {"format": "olmes.store/1", "logprob_hosts": ["https://old.example/blobs/"]}
    _commit(
        repo,
        {"olmes/store/verify.py": BASE_VERIFY, "leaderboard/store.json": json.dumps(store, indent=2) + "\n"},
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


def _check(repo: Path, tmp_path: Path, pr: str) -> tuple[subprocess.CompletedProcess, str]:
    summary = tmp_path / "summary.md"
    env = {**os.environ, "OLMES": str(_wrapper(tmp_path)), "GITHUB_STEP_SUMMARY": str(summary)}
    done = subprocess.run(
        ["bash", str(SCRIPT), "main", pr], cwd=repo, capture_output=True, text=True, env=env, timeout=120
    )
    return done, summary.read_text() if summary.exists() else ""


def test_a_pull_request_changing_verify_and_the_store_is_refused_in_one_line(repo: Path, tmp_path: Path):
    done, summary = _check(repo, tmp_path, "pr-code")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    assert "olmes/store/verify.py" in lines[0] and "leaderboard/store.json" not in lines[0]
    assert "changes only leaderboard/" in lines[0] and "separate pull request" in lines[0]
    assert "olmes/store/verify.py" in summary and "separate pull request" in summary
    assert not (tmp_path / "ran.log").exists()  # no olmes ran, neither the PR's nor the base's
    assert _git(repo, "worktree", "list").count("\n") == 1


def test_a_store_only_pull_request_is_verified_by_the_base_code(repo: Path, tmp_path: Path):
    done, summary = _check(repo, tmp_path, "pr-store")
    assert done.returncode == 0, done.stdout + done.stderr
    ran = (tmp_path / "ran.log").read_text()
    assert "olmes verify leaderboard --base " in ran and "olmes fetch-logprobs --store leaderboard" in ran
    assert BASE_VERIFY in ran and PR_VERIFY not in ran  # the base's checkout, not the PR's
    assert "olmes: verify: clean" in done.stderr
    hosts = [line for line in done.stdout.splitlines() if "logprob_hosts" in line]
    assert len(hosts) == 1, done.stdout
    assert "https://old.example/blobs/" in hosts[0] and "https://new.example/blobs/" in hosts[0]
    assert "logprob_hosts change" in summary and "https://new.example/blobs/" in summary
    assert "verify: clean" in summary
    assert _git(repo, "worktree", "list").count("\n") == 1  # its worktree removed
    assert _git(repo, "status", "--porcelain") == ""


def test_the_workflow_installs_the_base_and_runs_the_script():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["verify"]["steps"]
    checkout = next(step for step in steps if step.get("uses", "").startswith("actions/checkout"))
    assert "base" in checkout["with"]["ref"]
    runs = "\n".join(step.get("run", "") for step in steps)
    assert "scripts/submission_check.sh" in runs and "pip install ." in runs
    assert "pull/" in runs  # the PR's head is fetched, as data
    assert runs.index("pip install .") < runs.index("git fetch")  # installed before the PR is fetched
