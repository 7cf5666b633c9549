"""A screenshot of the leaderboard's ranks with their 95% intervals and its tie groups, at 1366 px, from
the committed store's tables built with ``olmes tables --reported`` (42 rows: the 2 evaluated models and
the OLMES paper's 40) and the site built from them, in headless Chromium (/usr/bin/chromium, through
Playwright), for docs/screenshots/leaderboard-rank-intervals.png: the table and its legend.

    .venv/bin/python scripts/screenshot_rank_intervals.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests.helpers, scripts

from scripts.screenshot_paper_figures import build_site  # noqa: E402
from tests.helpers import headless_chromium, watched  # noqa: E402

NAME = "leaderboard-rank-intervals.png"


def screenshot(browser, site: Path, out: Path) -> None:
    """The leaderboard's table (all 42 rows, so the bottom's evaluated models show) and its legend."""
    with watched(browser, width=1366, height=900) as w:
        page = w.goto((site / "index.html").as_uri())
        rows = page.locator("#leaderboard tbody tr").count()
        if rows != 42:
            raise SystemExit(f"the leaderboard has {rows} rows, not 42 (the store's 2 and the paper's 40)")
        top = page.locator(".toolbar").bounding_box()
        legend = page.locator("section.legend").bounding_box()
        clip = {"x": 0, "y": top["y"], "width": 1366, "height": legend["y"] + legend["height"] - top["y"]}
        page.screenshot(path=str(out / NAME), clip=clip, full_page=True)
        if w.errors:
            raise SystemExit(f"the page logged errors: {w.errors}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder, headless_chromium(folder) as browser:
        screenshot(browser, build_site(Path(folder)), args.out)
    print(f"screenshot -> {args.out / NAME}")


if __name__ == "__main__":
    main()
