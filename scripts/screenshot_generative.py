"""Screenshots of the OLMES v0.2 generative tasks on a built site, at 1366 px in headless Chromium
(/usr/bin/chromium, through Playwright): the leaderboard's generative table
(docs/screenshots/generative-board.png) and a generative task's page, its facts, scores, prompt and
instance browser (docs/screenshots/generative-task.png).

The site is one ``olmes site`` built from tables made with ``olmes tables --generative``:

    .venv/bin/python scripts/screenshot_generative.py --site site [--task drop] [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests.helpers

from olmes.core.generative import GENERATIVE_TASKS  # noqa: E402
from tests.helpers import headless_chromium, watched  # noqa: E402

BOARD = "generative-board.png"
TASK = "generative-task.png"
WIDTH = 1366


def board(browser, site: Path, out: Path) -> None:
    """The leaderboard's section "Generative tasks (OLMES v0.2)": its heading, note and table."""
    with watched(browser, width=WIDTH, height=900) as w:
        page = w.goto((site / "index.html").as_uri())
        section = page.locator("#generative")
        if section.count() != 1:
            raise SystemExit(f"{site}/index.html has no generative table: build its tables with --generative")
        box = section.bounding_box()
        clip = {"x": 0, "y": max(box["y"] - 8, 0), "width": WIDTH, "height": box["height"] + 16}
        page.screenshot(path=str(out / BOARD), clip=clip, full_page=True)
        if w.errors:
            raise SystemExit(f"the page logged errors: {w.errors}")


def task_page(browser, site: Path, task: str, out: Path) -> None:
    """A generative task's page from its title to its instance browser's first instances."""
    with watched(browser, width=WIDTH, height=900) as w:
        page = w.goto((site / "tasks" / f"{task}.html").as_uri())
        page.wait_for_function(
            "document.querySelectorAll('#gen-list .instance').length > 0 && "
            "!document.querySelector('#gen-list').textContent.includes('loading…')"
        )
        height = page.evaluate("document.querySelector('#gen-browser').getBoundingClientRect().bottom")
        top = page.locator("main h1").bounding_box()["y"]
        clip = {"x": 0, "y": max(top - 16, 0), "width": WIDTH, "height": height + 16 - max(top - 16, 0)}
        page.screenshot(path=str(out / TASK), clip=clip, full_page=True)
        if w.errors:
            raise SystemExit(f"the page logged errors: {w.errors}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, required=True, help="a site built by olmes site")
    parser.add_argument(
        "--task", choices=list(GENERATIVE_TASKS), help="the task page (default: the first built)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    args = parser.parse_args()
    task = args.task or next(
        (key for key in GENERATIVE_TASKS if (args.site / "tasks" / key / "instances.js").is_file()), None
    )
    if task is None:
        raise SystemExit(f"{args.site} has no generative task page: build its tables with --generative")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder, headless_chromium(folder) as browser:
        board(browser, args.site, args.out)
        task_page(browser, args.site, task, args.out)
    print(f"screenshots -> {args.out / BOARD}, {args.out / TASK}")


if __name__ == "__main__":
    main()
