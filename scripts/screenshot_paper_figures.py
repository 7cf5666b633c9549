"""Screenshots of the paper's Figure 2 and Table 3 drawn with the paper's own models, at 1366 px, from the
committed store's tables built with ``olmes tables --reported`` and the site built from them, in
headless Chromium (/usr/bin/chromium, through Playwright), for docs/screenshots/:

- paper-figure2-reported.png: Figure 2 on the CF vs MCF page, the paper's 15 models with the evaluated;
- paper-figure2-evaluated-only.png: the same chart once its checkbox hides the paper's models;
- paper-table3-reported.png: Table 3 on the normalization page, every block;
- paper-table3-check.png: the paper's Table 3 recomputed from its Tables 9-12, differences first.

    .venv/bin/python scripts/screenshot_paper_figures.py [--out docs/screenshots]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests.helpers

from olmes.cli.main import main as olmes  # noqa: E402
from tests.helpers import headless_chromium, watched  # noqa: E402


def build_site(folder: Path) -> Path:
    """The committed store's tables with the paper's models, and the site built from them."""
    tables, site = folder / "tables", folder / "site"
    store = str(REPO / "leaderboard")
    if olmes(["tables", "--store", store, "--reported", "--out", str(tables)]) != 0:
        raise SystemExit("olmes tables failed")
    if olmes(["site", "--store", store, "--tables", str(tables), "--out", str(site)]) != 0:
        raise SystemExit("olmes site failed")
    return site


def screenshots(browser, site: Path, out: Path) -> None:
    with watched(browser, width=1366, height=900) as w:
        page = w.goto((site / "cf-vs-mcf.html").as_uri())
        page.locator("#figure2").screenshot(path=str(out / "paper-figure2-reported.png"))
        page.uncheck("input[data-toggle-reported-chart='figure2']")
        page.wait_for_selector("#figure2[data-rendered='true']")
        page.mouse.move(0, 0)  # no tooltip in the picture
        page.locator("#figure2").screenshot(path=str(out / "paper-figure2-evaluated-only.png"))
        page = w.goto((site / "normalization.html").as_uri())
        figures = page.locator("figure.table-figure")
        figures.nth(0).screenshot(path=str(out / "paper-table3-reported.png"))
        figures.nth(1).screenshot(path=str(out / "paper-table3-check.png"))
        if w.errors:
            raise SystemExit(f"the pages logged errors: {w.errors}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder, headless_chromium(folder) as browser:
        screenshots(browser, build_site(Path(folder)), args.out)
    print(f"screenshots -> {args.out}")


if __name__ == "__main__":
    main()
