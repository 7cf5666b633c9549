"""The leaderboard at 50, 200 and 500 models: what the Pages build, the site and git cost, and how each
cost grows with the number of models N.

Per store (made with ``benchmarks/synthetic_store.py``; run nothing else on the machine meanwhile):

- ``olmes tables --store`` and ``olmes site --store`` (what ``scripts/build_pages.sh`` runs): wall
  time and peak memory (max RSS) of each;
- the site: files, total size, largest file; for every page, the bytes it loads before first render
  (the page and the scripts and styles it references; the largest of all pages is printed);
- in headless Chromium, served over HTTP as Pages serves it, one page of each kind (the leaderboard,
  the MMLU and ARC-Challenge task pages, a model page, a reported page, MMLU's subjects, CF vs MCF,
  Normalization, Robustness), by the page's own clock from the start of navigation: the first render,
  the later of its first contentful paint and the moment its content is there (the leaderboard's rows,
  the instance browser's first instances, the chart; a mutation observer notes it), and the bytes of
  the files that had arrived by then; on the chart pages, also the time from the pointer entering the
  chart until vega has drawn it live (the chart shown first is the SVG drawn when the site was built);
  sorting the leaderboard (a header click until the rows are re-laid out);
- the rebuild after one model is added (``--rebuild``, largest store): the store gets one more
  synthetic model and ``build_pages.sh`` runs again into the same site;
- git growth per published model (``--git``): the store's model folders committed in a scratch git
  repository one by one; the growth of its objects (zlib-compressed, as git stores them) per model;
- the Pages build of the code before a change (``--before CHECKOUT``, e.g. a git worktree of HEAD made
  before editing): the same two commands, run with that checkout's olmes on the largest store, printed
  beside this checkout's (what a change costs at scale, on the same machine the same day).

Then each cost is fitted as a + b·N over the stores and printed with its per-model slope.

    .venv/bin/python benchmarks/leaderboard_at_scale.py /tmp/synth/store-50 /tmp/synth/store-200 \\
        /tmp/synth/store-500 [--rebuild] [--git 5] [--repeat 3] [--before /tmp/olmes-head]

Needs /usr/bin/chromium and playwright (as the site tests do).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
MiB = 2**20
# page kind -> (path in the site, what is drawn once its first render is done)
PAGE_KINDS = {
    "leaderboard": ("index.html", "#leaderboard tbody tr"),
    "task MMLU": ("tasks/mmlu.html", "#browser-list .instance"),
    "task ARC-Challenge": ("tasks/arc_challenge.html", "#browser-list .instance"),
    "model page": (None, "main"),
    "reported page": (None, "main"),
    "MMLU subjects": ("mmlu.html", ".chart svg"),
    "CF vs MCF": ("cf-vs-mcf.html", ".chart svg"),
    "Normalization": ("normalization.html", "main"),
    "Robustness": ("robustness.html", "main"),  # its chart, letter bias, needs rotations (none synthetic)
}
CHART_KINDS = ("MMLU subjects", "CF vs MCF")
"""Pages with a chart: it is there at first render (drawn when the site was built); the benchmark also
times its live drawing by vega, with tooltips, once the pointer moves onto it."""
REFERENCED = re.compile(r"""<(?:script|link)\b[^>]*?(?:src|href)="([^"#?]+\.(?:js|css))\"""")


def measured(command: list[str], cache: Path, checkout: Path = REPO) -> tuple[float, int]:
    """Run ``command`` in ``checkout`` with ``cache`` as OLMES_CACHE_DIR; its wall time (s) and peak RSS
    (bytes), measured by a wrapper process."""
    probe = (
        "import resource, subprocess, sys, time; t = time.monotonic(); "
        "code = subprocess.run(sys.argv[1:]).returncode; "
        "print(time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)"
    )
    env = {**os.environ, "OLMES_CACHE_DIR": str(cache), "PYTHONPATH": str(checkout)}
    done = subprocess.run(
        [sys.executable, "-c", probe, *command], capture_output=True, text=True, cwd=checkout, env=env
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    seconds, rss_kib = done.stdout.split()[-2:]
    return float(seconds), int(rss_kib) * 1024


OLMES = [sys.executable, "-c", "import sys; from olmes.cli.main import main; sys.exit(main())"]
"""``olmes`` as the checkout it runs in has it (its folder first on the path: this venv's packages, the
checkout's olmes)."""


def pages_build(store: Path, site: Path, tables: Path, cache: Path, checkout: Path = REPO) -> dict:
    """The two commands of scripts/build_pages.sh with the olmes of ``checkout``, each measured;
    ``cache`` is OLMES_CACHE_DIR (a new folder: a first build, as on a fresh Pages runner; the same
    folder again: a rebuild)."""
    t_seconds, t_rss = measured(
        [*OLMES, "tables", "--store", str(store), "--reported", "--out", str(tables)], cache, checkout
    )
    site_command = [*OLMES, "site", "--store", str(store), "--tables", str(tables), "--out", str(site)]
    s_seconds, s_rss = measured(site_command, cache, checkout)
    return {"tables_s": t_seconds, "tables_rss": t_rss, "site_s": s_seconds, "site_rss": s_rss,
            "build_s": t_seconds + s_seconds}  # fmt: skip


def site_sizes(site: Path) -> dict:
    files = [path for path in site.rglob("*") if path.is_file()]
    largest = max(files, key=lambda path: path.stat().st_size)
    heaviest, heaviest_bytes = None, 0
    for page in site.rglob("*.html"):
        size = page_bytes(site, page)
        if size > heaviest_bytes:
            heaviest, heaviest_bytes = page, size
    return {
        "files": len(files),
        "pages": sum(1 for path in files if path.suffix == ".html"),
        "site_bytes": sum(path.stat().st_size for path in files),
        "largest_file": str(largest.relative_to(site)),
        "largest_bytes": largest.stat().st_size,
        "heaviest_page": str(heaviest.relative_to(site)),
        "heaviest_page_bytes": heaviest_bytes,
    }


def page_bytes(site: Path, page: Path) -> int:
    """The page and every script and style it references by a relative URL (what it loads up front)."""
    html = page.read_text(encoding="utf-8")
    total = len(html.encode())
    for reference in set(REFERENCED.findall(html)):
        target = (page.parent / reference).resolve()
        if target.is_file() and site.resolve() in target.parents:
            total += target.stat().st_size
    return total


class _Server:
    """The site over HTTP on 127.0.0.1 (as Pages serves it), in a thread."""

    def __init__(self, site: Path):
        handler = functools.partial(_QuietHandler, directory=str(site))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def browser_costs(site: Path, repeat: int) -> dict:
    """Per page kind: the slowest first render of ``repeat`` cold loads and the bytes fetched before it;
    and the slowest of ``repeat`` sorts of the leaderboard."""
    from playwright.sync_api import sync_playwright

    pages = dict(PAGE_KINDS)
    pages["model page"] = (str(next(iter(sorted(site.glob("models/*.html")))).relative_to(site)), "main")
    reported = sorted(site.glob("reported/*.html"))
    if reported:
        pages["reported page"] = (str(reported[0].relative_to(site)), "main")
    else:
        del pages["reported page"]
    server = _Server(site)
    results = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                                 args=["--no-sandbox", "--disable-gpu"])  # fmt: skip
            for kind, (path, drawn) in pages.items():
                if not (site / path).is_file():
                    continue
                loads = [_first_render(browser, server.url + path, drawn) for _ in range(repeat)]
                results[kind] = {
                    "path": path,
                    "first_paint": max(paint for paint, _, _ in loads),
                    "first_render": max(max(paint, drawn) for paint, drawn, _ in loads),
                    "seconds": max(drawn for _, drawn, _ in loads),
                    "bytes": max(size for _, _, size in loads),
                }
                if kind in CHART_KINDS:
                    live = [_live_after_pointer(browser, server.url + path) for _ in range(repeat)]
                    results[kind]["live_s"] = max(live)
            results["sort"] = {"ms": max(_sort_ms(browser, server.url + "index.html") for _ in range(repeat))}
            browser.close()
    finally:
        server.close()
    return results


def _first_render(browser, url: str, drawn: str) -> tuple[float, float, int]:
    """(first contentful paint, the page's content drawn, bytes of the files that had arrived when it
    was drawn) of one cold load; times in seconds from the start of navigation by the page's own clock.
    A mutation observer installed before the page loads notes the moment ``drawn`` first matches."""
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    context.add_init_script(_WATCH.replace("SELECTOR", json.dumps(drawn)))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
    page.goto(url, wait_until="commit")
    page.wait_for_function(
        "() => window.__drawn !== undefined && performance.getEntriesByName('first-contentful-paint').length",
        timeout=120_000,
    )
    paint, seconds, size = page.evaluate(
        """() => {
          const drawn = window.__drawn;
          const paint = performance.getEntriesByName('first-contentful-paint')[0];  // present: waited for
          const entries = performance.getEntriesByType('navigation')
            .concat(performance.getEntriesByType('resource')).filter(e => e.responseEnd <= drawn);
          const size = entries.reduce((sum, e) => sum + e.encodedBodySize, 0);
          return [paint.startTime, drawn, size];
        }"""
    )
    context.close()
    if errors:
        raise SystemExit(f"{url}: console errors: {errors[:3]}")
    return paint / 1000, seconds / 1000, size


def _live_after_pointer(browser, url: str) -> float:
    """Seconds from the pointer entering the page's first chart (cold: no chart library loaded yet) until
    vega has drawn it live, by the page's own clock."""
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.evaluate(
        """() => {
          const chart = document.querySelector('.chart');
          const entered = () => { window.__entered = performance.now(); };
          chart.addEventListener('pointerenter', entered, { once: true });
          new MutationObserver(() => {
            if (window.__live === undefined && chart.getAttribute('data-rendered') === 'true') {
              window.__live = performance.now();
            }
          }).observe(chart, { attributes: true });
        }"""
    )
    page.hover(".chart")
    page.wait_for_function("() => window.__live !== undefined", timeout=120_000)
    seconds = page.evaluate("() => (window.__live - window.__entered) / 1000")
    context.close()
    return seconds


_WATCH = """
(() => {
  const selector = SELECTOR;
  const check = () => {
    if (window.__drawn === undefined && document.querySelector(selector)) window.__drawn = performance.now();
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true, attributes: true });
})();
"""


def _sort_ms(browser, url: str) -> float:
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#leaderboard tbody tr")
    ms = page.evaluate(
        """async () => {
            const header = document.querySelectorAll('#leaderboard thead th')[2];
            const started = performance.now();
            header.click();
            await new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)));
            return performance.now() - started;
        }"""
    )
    context.close()
    return ms


def rebuild_after_one(store: Path, site: Path, tables: Path, work: Path) -> dict:
    """Add one synthetic model to a copy of ``store`` and rebuild ``site`` (already built) from it, with
    the first build's cache."""
    grown = work / "store-plus-one"
    subprocess.run(["cp", "-al", str(store), str(grown)], check=True)
    models = sum(1 for _ in (grown / "models").iterdir())
    maker = [sys.executable, str(REPO / "benchmarks" / "synthetic_store.py"), str(grown)]
    subprocess.run([*maker, "--models", str(models + 1), "--jobs", "1"], check=True, cwd=REPO)
    return pages_build(grown, site, tables, work / "cache")


def git_growth(store: Path, count: int, work: Path) -> dict:
    """Commit the store without its last ``count`` models, then each of them: bytes of new git objects
    (zlib-compressed loose objects, an upper bound of what a packed push adds) per model."""
    repo = work / "git-growth"
    models = sorted(p.name for p in (store / "models").iterdir())
    shutil.copytree(store, repo, ignore=shutil.ignore_patterns("blobs", *models[-count:]))
    git = functools.partial(_git, repo)
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "base")
    growth = []
    for model in models[-count:]:
        before = _objects_bytes(repo)
        shutil.copytree(
            store / "models" / model, repo / "models" / model, ignore=shutil.ignore_patterns("blobs")
        )
        git("add", "-A")
        git("commit", "-qm", model)
        growth.append(_objects_bytes(repo) - before)
    return {"per_model_bytes": float(np.mean(growth)), "max_bytes": max(growth), "models": count}


def _git(repo: Path, *args: str) -> None:
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b", "PATH": "/usr/bin:/bin"}  # fmt: skip
    subprocess.run(["git", *args], cwd=repo, check=True, env=env)


def _objects_bytes(repo: Path) -> int:
    return sum(p.stat().st_size for p in (repo / ".git" / "objects").rglob("*") if p.is_file())


def fit(ns: list[int], values: list[float]) -> str:
    """a + b·N by least squares (exact with two stores)."""
    if len(ns) < 2:
        return ""
    slope, intercept = np.polyfit(ns, values, 1)
    return f"{intercept:.3g} + {slope:.3g}·N"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rebuild", action="store_true", help="time the rebuild after one model is added")
    parser.add_argument("--git", type=int, default=0, help="measure git growth over this many models")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument(
        "--before", type=Path, help="a checkout of the code before a change: its Pages build too"
    )
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for store in args.stores:
            work = Path(tmp) / store.name
            work.mkdir()
            n = sum(1 for _ in (store / "models").iterdir())
            row = {"N": n, **pages_build(store, work / "site", work / "tables", work / "cache")}
            row.update(site_sizes(work / "site"))
            row["browser"] = browser_costs(work / "site", args.repeat)
            if args.rebuild and store == args.stores[-1]:
                row["rebuild"] = rebuild_after_one(store, work / "site", work / "tables", work)
            if args.git and store == args.stores[-1]:
                row["git"] = git_growth(store, args.git, work)
            if args.before and store == args.stores[-1]:
                before = work / "before"
                row["before"] = pages_build(
                    store, before / "site", before / "tables", before / "cache", args.before
                )
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


def print_table(rows: list[dict]) -> None:
    ns = [row["N"] for row in rows]
    lines = [
        ("olmes tables: time (s)", [r["tables_s"] for r in rows], "{:.1f}"),
        ("olmes tables: peak memory (MiB)", [r["tables_rss"] / MiB for r in rows], "{:.0f}"),
        ("olmes site: time (s)", [r["site_s"] for r in rows], "{:.1f}"),
        ("olmes site: peak memory (MiB)", [r["site_rss"] / MiB for r in rows], "{:.0f}"),
        ("Pages build (tables + site) (s)", [r["build_s"] for r in rows], "{:.1f}"),
        ("site: files", [r["files"] for r in rows], "{:.0f}"),
        ("site: total (MiB)", [r["site_bytes"] / MiB for r in rows], "{:.1f}"),
        ("site: largest file (MiB)", [r["largest_bytes"] / MiB for r in rows], "{:.2f}"),
        (
            "heaviest page, all it loads up front (MiB)",
            [r["heaviest_page_bytes"] / MiB for r in rows],
            "{:.2f}",
        ),
    ]
    for kind in rows[0]["browser"]:
        if kind == "sort":
            continue
        lines.append(
            (f"{kind}: first render (s)", [r["browser"][kind]["first_render"] for r in rows], "{:.2f}")
        )
        lines.append(
            (
                f"{kind}: fetched before it (MiB)",
                [r["browser"][kind]["bytes"] / MiB for r in rows],
                "{:.2f}",
            )
        )
    for kind in CHART_KINDS:
        if all("live_s" in r["browser"].get(kind, {}) for r in rows):
            live = [r["browser"][kind]["live_s"] for r in rows]
            lines.append((f"{kind}: chart live after the pointer enters (s)", live, "{:.2f}"))
    lines.append(("leaderboard sort (ms)", [r["browser"]["sort"]["ms"] for r in rows], "{:.0f}"))
    print("| cost | " + " | ".join(f"N = {n}" for n in ns) + " | fit |")
    print("|---|" + "---|" * len(ns) + "---|")
    for label, values, form in lines:
        print(f"| {label} | " + " | ".join(form.format(v) for v in values) + f" | {fit(ns, values)} |")
    for row in rows:
        print(f"\nN = {row['N']}: largest file {row['largest_file']}; heaviest page {row['heaviest_page']}")
        if "rebuild" in row:
            r = row["rebuild"]
            print(f"rebuild after adding one model: tables {r['tables_s']:.1f} s + site {r['site_s']:.1f} s "
                  f"= {r['build_s']:.1f} s (full build {row['build_s']:.1f} s)")  # fmt: skip
        if "before" in row:
            print_before_after(row["before"], row)
        if "git" in row:
            g = row["git"]
            print(f"git growth per published model: {g['per_model_bytes'] / MiB:.2f} MiB on average over "
                  f"{g['models']} models (max {g['max_bytes'] / MiB:.2f} MiB)")  # fmt: skip


def print_before_after(before: dict, after: dict) -> None:
    """The Pages build of the code before the change (``--before``) and of this checkout, side by side."""
    print("Pages build, the code before the change -> this checkout:")
    for key, label in (("tables_s", "olmes tables"), ("site_s", "olmes site"), ("build_s", "tables + site")):
        print(f"  {label}: {before[key]:.1f} s -> {after[key]:.1f} s ({after[key] - before[key]:+.1f} s)")
    for key, label in (("tables_rss", "olmes tables"), ("site_rss", "olmes site")):
        print(f"  {label} peak memory: {before[key] / MiB:.0f} MiB -> {after[key] / MiB:.0f} MiB")


if __name__ == "__main__":
    sys.exit(main())
