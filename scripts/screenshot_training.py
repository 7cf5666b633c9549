"""Screenshots of the Training pages at 1366 px, drawn live by the shipped vega files in headless Chromium
(/usr/bin/chromium, through Playwright), for docs/screenshots/:

- training-index.png: the Training page of two synthetic series (the series, the atlas, the transitions);
- training-series.png: a synthetic series on which MCF overtakes CF on every task (Figure 1, every
  measure, the transitions drawn);
- training-not-yet.png: a synthetic series on which MCF has not yet overtaken CF (the "not yet" notes);
- training-store-<slug>.png: each series page of the committed store training/, where it exists.

    .venv/bin/python scripts/screenshot_training.py [--out docs/screenshots] [--checkpoints 30]

The synthetic series are those of benchmarks/training_at_scale.py (scored like real runs), on BoolQ,
ARC-Easy and HellaSwag at their standard sizes; tables and site are built by olmes tables and olmes site.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # benchmarks.training_at_scale, tests.helpers

from benchmarks.training_at_scale import series_models, write_models_file, write_series  # noqa: E402
from olmes import store as store_api  # noqa: E402
from olmes.cli.main import main as olmes  # noqa: E402
from olmes.site.pages import slugify  # noqa: E402
from tests.helpers import draw_charts_live, headless_chromium, watched  # noqa: E402

TASKS = ["boolq", "arc_easy", "hellaswag"]
CROSSES, NOT_YET = 0, 8
"""benchmarks/training_at_scale.py's series numbers: MCF rises later in each; series 8's has not passed
CF by the last checkpoint (3T)."""


def synthetic_site(folder: Path, checkpoints: int) -> Path:
    """Tables and site of the two synthetic series; the site's folder."""
    models = []
    for number in (CROSSES, NOT_YET):
        models += write_series(folder, number, checkpoints, TASKS)
    models_file = write_models_file(folder / "models.json", models)
    scores = str(folder / "scores")
    built = [
        olmes(["tables", "--scores", scores, "--models", str(models_file), "--out", str(folder / "tables")]),
        olmes(
            ["site", "--scores", scores, "--tables", str(folder / "tables"), "--out", str(folder / "site")]
        ),
    ]
    if built != [0, 0]:
        raise SystemExit("olmes tables or olmes site failed on the synthetic series")
    return folder / "site"


def store_site(store: Path, folder: Path) -> Path:
    """Tables and site of the committed store ``store``; the site's folder."""
    tables, site = folder / "store-tables", folder / "store-site"
    if olmes(["tables", "--store", str(store), "--out", str(tables)]) != 0:
        raise SystemExit(f"olmes tables --store {store} failed")
    if olmes(["site", "--store", str(store), "--tables", str(tables), "--out", str(site)]) != 0:
        raise SystemExit(f"olmes site --store {store} failed")
    return site


def screenshot(browser, page_file: Path, target: Path) -> None:
    """The page at 1366 px, its charts drawn live by vega, the whole page, the pointer off it."""
    with watched(browser, width=1366, height=900) as w:
        page = w.goto(page_file.as_uri())
        draw_charts_live(page)
        page.mouse.move(0, 0)  # no tooltip in the picture
        page.screenshot(path=str(target), full_page=True)
        if w.errors:
            raise SystemExit(f"{target.name}: the page logged errors: {w.errors}")
    print(target)


def series_page(site: Path, series: str) -> Path:
    return site / "training" / f"{slugify(series, set())}.html"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--checkpoints", type=int, default=30)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        os.environ["OLMES_CACHE_DIR"] = str(work / "cache")  # the digests of these scores only
        site = synthetic_site(work, args.checkpoints)
        with headless_chromium(folder) as browser:
            screenshot(browser, site / "training.html", args.out / "training-index.png")
            for number, name in ((CROSSES, "training-series"), (NOT_YET, "training-not-yet")):
                series = series_models(number, 1)[0].series
                screenshot(browser, series_page(site, series), args.out / f"{name}.png")
            store = REPO / "training"
            if store_api.is_store(store):
                pages = sorted((store_site(store, work) / "training").glob("*.html"))
                for page in pages:
                    screenshot(browser, page, args.out / f"training-store-{page.stem}.png")


if __name__ == "__main__":
    main()
