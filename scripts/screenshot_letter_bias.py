"""Screenshots of the Robustness page's MCF letter-bias chart at 1366 px, drawn live by the shipped vega
files in headless Chromium (/usr/bin/chromium, through Playwright), for docs/screenshots/:

- letter-bias-2-models.png: two models with real-length names;
- letter-bias-12-models.png: the twelve a chart draws before its reader picks more;
- letter-bias-long-name.png: a 200-character display name beside a shorter one.

    .venv/bin/python scripts/screenshot_letter_bias.py [--out docs/screenshots]

The rows are the tables' ``letter_bias`` figure rows of made-up rotations reports, and the page is the
site's chart macro, style and scripts: both as tests/test_letter_bias_chart.py checks them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests.helpers, tests.test_letter_bias_chart

from olmes.site.letter_bias_chart import letter_bias_spec  # noqa: E402
from tests.helpers import draw_charts_live, headless_chromium, watched  # noqa: E402
from tests.test_letter_bias_chart import LONG_NAME, NAMES, chart_page, letter_bias_rows  # noqa: E402

SHOTS = {
    "letter-bias-2-models": NAMES[:2],
    "letter-bias-12-models": NAMES,
    "letter-bias-long-name": [LONG_NAME, NAMES[1]],
}
"""Each screenshot's name and the display names it draws, strongest first."""


def screenshot(browser, names: list[str], folder: Path, target: Path) -> None:
    """The chart of ``names`` drawn live in a page 1366 px wide, the whole page, the pointer off it."""
    page_file = folder / f"{target.stem}.html"
    page_file.write_text(chart_page(letter_bias_spec(letter_bias_rows(names), names)), encoding="utf-8")
    with watched(browser, width=1366, height=900) as w:
        page = w.goto(page_file.as_uri())
        draw_charts_live(page)
        page.mouse.move(0, 0)  # no tooltip in the picture
        page.screenshot(path=str(target), full_page=True)
        if w.errors:
            raise SystemExit(f"{target.name}: the page logged errors: {w.errors}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder, headless_chromium(folder) as browser:
        for name, names in SHOTS.items():
            screenshot(browser, names, Path(folder), args.out / f"{name}.png")
            print(args.out / f"{name}.png")


if __name__ == "__main__":
    main()
