"""A table or chart wider than its box shows that it scrolls, and which way: an edge shadow on each side
with hidden content and a short hint below ("scroll →", "← scroll →", "← scroll"), kept right on
scroll, on resize and when the table's content changes (site.js: initScrollSign). Without JavaScript the
box draws the shadows itself (style.css: background-attachment local).

The site is built from the committed store, as test_reported builds it; its paper tables on the
normalization page are many columns wide (Table 10 scrolls at 1366 px), its Table 3 fits.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from olmes.cli.main import main
from tests.helpers import watched

STORE = Path(__file__).resolve().parents[1] / "leaderboard"
WIDE = ".table-figure:has(a[href$='/table10_normalizations.csv']) .scroll"
NARROW = ".table-figure:has(a[href$='/table3_normalizations.csv']) .scroll"

# The sign a box shows, as a reader sees it: each shadow's opacity and the hint's text (None when not
# shown); null where the box has no sign at all.
SIGN = """box => {
  const frame = box.parentElement;
  if (!frame.classList.contains('scroll-frame')) return null;
  const opacity = pseudo => parseFloat(getComputedStyle(frame, pseudo).opacity);
  const hint = frame.nextElementSibling;
  const shown = hint && hint.classList.contains('scroll-hint') && hint.offsetParent !== null;
  return {left: opacity('::before'), right: opacity('::after'), hint: shown ? hint.textContent : null};
}"""

# SIGN of a box, once it is `want` (the sign follows in the next frame or two and its shadows fade in)
# or after three seconds.
SETTLED = f"""async (box, want) => {{
  const sign = {SIGN}, same = s => JSON.stringify(s) === JSON.stringify(want);
  for (const start = performance.now(); !same(sign(box)) && performance.now() - start < 3000; )
    await new Promise(done => requestAnimationFrame(done));
  return sign(box);
}}"""


def sign(left: int, right: int, hint: str | None) -> dict:
    return {"left": left, "right": right, "hint": hint}


NONE, RIGHT, BOTH, LEFT = (
    sign(0, 0, None),
    sign(0, 1, "scroll →"),
    sign(1, 1, "← scroll →"),
    sign(1, 0, "← scroll"),
)


def settled(box, want: dict) -> dict:
    """The sign of ``box`` (a locator) once it is ``want``, or as it is after three seconds."""
    return box.evaluate(SETTLED, want)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The committed store's tables and site (test_reported's, without the reported rows)."""
    root = tmp_path_factory.mktemp("scroll-sign")
    tables, site = root / "tables", root / "site"
    assert main(["tables", "--store", str(STORE), "--out", str(tables)]) == 0
    assert main(["site", "--store", str(STORE), "--tables", str(tables), "--out", str(site)]) == 0
    return site


def test_a_wide_table_shows_which_way_it_scrolls(site, browser):
    """At 1366 px Table 10 shows its right sign, both once scrolled halfway, its left one at its end;
    Table 3 fits and shows none; on both wide pages every box shows a sign exactly when it scrolls."""
    with watched(browser, width=1366) as w:
        page = w.goto((site / "normalization.html").as_uri())
        wide, narrow = page.locator(WIDE), page.locator(NARROW)
        assert wide.evaluate("box => box.scrollWidth > box.clientWidth + 100")
        assert settled(wide, RIGHT) == RIGHT
        wide.evaluate("box => { box.scrollLeft = (box.scrollWidth - box.clientWidth) / 2; }")
        assert settled(wide, BOTH) == BOTH
        wide.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
        assert settled(wide, LEFT) == LEFT
        assert narrow.evaluate("box => box.scrollWidth <= box.clientWidth")
        assert settled(narrow, NONE) == NONE
        for name in ("normalization.html", "cf-vs-mcf.html"):  # every table and chart: a sign iff it scrolls
            page = w.goto((site / name).as_uri())
            boxes = page.locator(".scroll, .chart-scroll")
            assert boxes.count() >= 5
            for k in range(boxes.count()):
                want = RIGHT if boxes.nth(k).evaluate("box => box.scrollWidth > box.clientWidth") else NONE
                assert settled(boxes.nth(k), want) == want, (name, k)
        assert w.errors == []


def test_the_sign_follows_resizes_and_the_tables_content(site, browser):
    """A table that fits shows a sign once the window is too narrow for it, and again none when it is
    wide enough; a wider row added shows one, hidden as a reported row (any table's hide-reported
    class, as the leaderboard's checkbox sets it) it shows none."""
    with watched(browser, width=1366) as w:
        page = w.goto((site / "normalization.html").as_uri())
        narrow = page.locator(NARROW)
        assert settled(narrow, NONE) == NONE
        page.set_viewport_size({"width": 700, "height": 900})
        assert settled(narrow, RIGHT) == RIGHT
        page.set_viewport_size({"width": 1366, "height": 900})
        assert settled(narrow, NONE) == NONE
        narrow.evaluate(
            """box => { const row = box.querySelector('tbody tr').cloneNode(true);
              row.classList.add('is-reported');
              row.cells[0].textContent = 'A reported model with a very long name '.repeat(8);
              box.querySelector('tbody').appendChild(row); }"""
        )
        assert settled(narrow, RIGHT) == RIGHT
        narrow.evaluate("box => box.querySelector('table').classList.add('hide-reported')")
        assert (
            narrow.evaluate("box => getComputedStyle(box.querySelector('tr.is-reported')).display") == "none"
        )
        assert settled(narrow, NONE) == NONE
        narrow.evaluate("box => box.querySelector('table').classList.remove('hide-reported')")
        assert settled(narrow, RIGHT) == RIGHT
        assert w.errors == []


def test_the_left_shadow_starts_past_a_sticky_first_column(site, browser):
    """On the leaderboard (its model column sticks to the left) in a narrow window, scrolled to its
    end: the model column still sticks, and the left shadow falls on the scores, not on the names."""
    with watched(browser, width=600) as w:
        page = w.goto((site / "index.html").as_uri())
        board = page.locator(".leaderboard-scroll")
        assert settled(board, RIGHT) == RIGHT
        board.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
        assert settled(board, LEFT) == LEFT
        place = board.evaluate(
            """box => { const name = box.querySelector('thead th.model-col').getBoundingClientRect();
              const frame = box.parentElement.getBoundingClientRect();
              return {stuck: name.left - box.getBoundingClientRect().left - box.clientLeft,
                      names: name.right - frame.left,
                      shadow: parseFloat(getComputedStyle(box.parentElement, '::before').left)}; }"""
        )
        assert abs(place["stuck"]) <= 1 and abs(place["shadow"] - place["names"]) <= 1, place
        assert w.errors == []


def test_without_javascript_the_box_draws_its_own_shadows(site, browser):
    """No script: no hint, and the box's own backgrounds (covers that scroll with the content over
    shadows that stay at the edges) show the shadows; with the script, the box draws none of its own."""
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1366, "height": 900})
    try:
        page = context.new_page()
        page.goto((site / "normalization.html").as_uri())
        assert page.locator(".scroll-frame, .scroll-hint").count() == 0
        attachment = page.locator(WIDE).evaluate("box => getComputedStyle(box).backgroundAttachment")
        assert attachment.split(", ")[:4] == ["local", "local", "scroll", "scroll"]  # covers, shadows
    finally:
        context.close()
    with watched(browser, width=1366) as w:
        page = w.goto((site / "normalization.html").as_uri())
        assert settled(page.locator(WIDE), RIGHT) == RIGHT
        assert page.locator(WIDE).evaluate("box => getComputedStyle(box).backgroundImage") == "none"
