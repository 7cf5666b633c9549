"""The published site built from the results store: build time, size, largest file, and the time to
first render of its heaviest pages in headless Chromium.

It runs what the Pages workflow runs (``scripts/build_pages.sh``) into a temporary folder, then opens
each page REPEAT times in a fresh browser context (nothing cached between loads) and prints the
fastest and the slowest load until the page's content is drawn: the leaderboard's rows, the MMLU
task page's instance browser (14,042 instances) and the Robustness page's charts. Console errors fail
the run.

    .venv/bin/python benchmarks/site_at_scale.py [--repeat 5]

Needs /usr/bin/chromium and the playwright package (``pip install playwright``, never
``playwright install``), as the site tests do.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
# page -> what is drawn once its first render is done
PAGES = {
    "index.html": "#leaderboard tbody tr",
    "tasks/mmlu.html": "#browser-list .instance",
    "mmlu.html": ".chart[data-rendered=true]",
    "robustness.html": ".chart[data-rendered=true]",
}
LIMIT_BYTES = 5 * 2**20  # no file a page loads may be larger (issue 10)


def build(site: Path) -> float:
    """scripts/build_pages.sh (tables and site from the committed store leaderboard/) into ``site``."""
    env = {**os.environ, "OLMES": str(Path(sys.executable).parent / "olmes")}
    started = time.monotonic()
    subprocess.run(["bash", "scripts/build_pages.sh", str(site)], cwd=REPO, env=env, check=True,
                   capture_output=True, text=True)  # fmt: skip
    return time.monotonic() - started


def first_renders(site: Path, repeat: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {page: [] for page in PAGES}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])  # fmt: skip
        for _ in range(repeat):
            for page_path, drawn in PAGES.items():
                context = browser.new_context(viewport={"width": 1366, "height": 900})
                page = context.new_page()
                errors: list[str] = []
                page.on("console", lambda msg, errors=errors: msg.type == "error" and errors.append(msg.text))
                page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
                started = time.monotonic()
                page.goto((site / page_path).as_uri())
                page.wait_for_selector(drawn, timeout=120_000)
                times[page_path].append(time.monotonic() - started)
                context.close()
                if errors:
                    raise SystemExit(f"{page_path}: console errors: {errors}")
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        seconds = build(site)
        files = [path for path in site.rglob("*") if path.is_file()]
        largest = max(files, key=lambda path: path.stat().st_size)
        total = sum(path.stat().st_size for path in files)
        pages = sum(1 for path in files if path.suffix == ".html")
        print(f"build: {seconds:.2f} s, {pages} pages, {len(files)} files, {total / 2**20:.1f} MiB")
        size = largest.stat().st_size
        verdict = "within" if size <= LIMIT_BYTES else "OVER"
        print(f"largest file: {largest.relative_to(site)} {size / 2**20:.2f} MiB ({verdict} the 5 MiB limit)")
        for page_path, seconds_each in first_renders(site, args.repeat).items():
            print(f"first render {page_path}: {min(seconds_each):.2f}-{max(seconds_each):.2f} s "
                  f"({len(seconds_each)} loads, no console errors)")  # fmt: skip


if __name__ == "__main__":
    main()
