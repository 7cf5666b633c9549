"""The Robustness page's MCF letter-bias chart (olmes.site.letter_bias_chart) for 1, 2 and 12 models
and names of 200 characters: each row's title is the whole display name, horizontal, in short lines,
clear of the other titles and of the plots; PIQA's column shows its own letters, A and B, not the C
and D of the four-choice tasks. The spec is checked as written, then as Chromium draws it: the SVG
the site builds and the chart vega draws live.

:func:`letter_bias_rows` and :func:`chart_page` also make the screenshots
(scripts/screenshot_letter_bias.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import olmes.site
from olmes.site.build import environment
from olmes.site.charts import PickableChart
from olmes.site.letter_bias_chart import LINE_HEIGHT, NAME_WIDTH, PLOT_HEIGHT, letter_bias_spec, name_lines
from olmes.site.svg import static_svg
from olmes.tables.results import ModelInfo, ScoreSet
from olmes.tables.robustness import letter_bias_data
from tests.helpers import draw_charts_live, watched

CHOICES = {"arc_easy": 4, "openbookqa": 4, "piqa": 2}
"""The shipped rotation tasks (config.yaml) and their choices."""
NAMES = [
    "SmolLM2-135M instruct Q4_1 GGUF (HuggingFaceTB/SmolLM2-135M-Instruct @ 1a2b3c4)",
    "Gemma-3-270M base Q8_0 GGUF (google/gemma-3-270m @ 9f8e7d6)",
    "SmolLM2-360M instruct (HuggingFaceTB/SmolLM2-360M-Instruct @ 4b5c6d7)",
    "Qwen2.5-0.5B base Q4_K_M GGUF (Qwen/Qwen2.5-0.5B @ 0c1d2e3)",
    "OLMo-2-0425-1B base (allenai/OLMo-2-0425-1B @ 5e6f7a8)",
    "Llama-3.2-1B instruct Q8_0 GGUF (meta-llama/Llama-3.2-1B-Instruct @ 2f3a4b5)",
    "Pythia-160M base (EleutherAI/pythia-160m @ 50f5173)",
    "TinyLlama-1.1B chat (TinyLlama/TinyLlama-1.1B-Chat-v1.0 @ fe8a4ea)",
    "Phi-1.5 base (microsoft/phi-1_5 @ 675aa38)",
    "SmolLM2-1.7B base Q6_K GGUF (HuggingFaceTB/SmolLM2-1.7B @ 9c8d7e6)",
    "Gemma-3-1B instruct (google/gemma-3-1b-it @ 3a2b1c0)",
    "Qwen2.5-1.5B instruct Q5_K_M GGUF (Qwen/Qwen2.5-1.5B-Instruct @ 7d8e9f0)",
]
LONG_NAME = (
    "SmolLM2-135M instruct Q4_1 GGUF (HuggingFaceTB/SmolLM2-135M-Instruct @ 1a2b3c4d5e6f), converted "
    "with llama.cpp b4567 from the hub revision's safetensors, evaluated on 2 CPU threads of an AMD EPYC 7763"
)
UNBROKEN_NAME = ("VeryLongModelName" * 12)[:200]
"""No space, slash or hyphen: no place a line may break but anywhere."""
assert len(LONG_NAME) == len(UNBROKEN_NAME) == 200


def letter_bias_rows(names: list[str]) -> list[dict]:
    """The tables' ``letter_bias`` figure rows (:func:`letter_bias_data`) of made-up rotations reports
    of ``names`` on :data:`CHOICES`: the k-th model prefers the k-th letter (modulo the task's), gold
    answers sit evenly; each report also lists a letter its task lacks, which the rows leave out."""
    models = [ModelInfo(f"model-{k:02}", name) for k, name in enumerate(names)]
    rotations = {
        (info.name, task): {"rotations": choices, "letters": _shares(k % choices, choices)}
        for k, info in enumerate(models)
        for task, choices in CHOICES.items()
    }
    return letter_bias_data(ScoreSet({}, {}, models, list(CHOICES), rotations=rotations))


def _shares(preferred: int, choices: int) -> dict[str, dict[str, float]]:
    predicted = [0.6 if position == preferred else 0.4 / (choices - 1) for position in range(choices)]
    shares = {"ABCD"[k]: {"predicted": share, "gold": 1 / choices} for k, share in enumerate(predicted)}
    return {**shares, "ABCDE"[choices]: {"predicted": 0.0, "gold": 0.0}}


PAGE = """{% from "macros.html" import chart, chart_scripts with context %}
<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Letter bias</title>
<link rel="stylesheet" href="{{ root }}static/style.css"></head>
<body><main class="wrap">
<h3>Letter bias</h3>
{{ chart("letter-bias", pick, "MCF letter bias per model and task") }}
</main>
<script src="{{ root }}static/site.js"></script>
{{ chart_scripts() }}
</body>
</html>
"""


def chart_page(chart: PickableChart) -> str:
    """A page that shows ``chart`` as the Robustness page does (the site's chart macro, style and
    scripts, from the package's ``static/``): its SVG drawn now, drawn live by the shipped vega files
    once the pointer moves onto it."""
    drawn = replace(chart, svg=static_svg(chart.spec, "letter-bias"))
    root = Path(olmes.site.__file__).parent.as_uri() + "/"
    return environment().from_string(PAGE).render(pick=drawn, root=root)


def _spec(names: list[str]) -> dict:
    chart = letter_bias_spec(letter_bias_rows(names), names)
    assert chart is not None and chart.shown == names
    return chart.spec


MODEL_SETS = {
    "one": NAMES[:1],
    "two": NAMES[:2],
    "twelve": NAMES,
    "long": [LONG_NAME, NAMES[1]],
    "unbroken": [NAMES[0], UNBROKEN_NAME],
}

# -- the spec -------------------------------------------------------------------------------------


@pytest.mark.parametrize("names", MODEL_SETS.values(), ids=MODEL_SETS.keys())
def test_row_titles_are_whole_names_in_short_horizontal_lines(names):
    spec = _spec(names)
    row = spec["facet"]["row"]
    header = row.get("header", {})
    assert header.get("labelAngle") == 0 and header.get("labelLimit") == 0  # horizontal, never cut
    assert header.get("labelExpr") == "split(datum.value, '\\n')"
    titles = {value["model"]: value[row["field"]] for value in spec["data"]["values"]}
    assert list(titles) == names
    height = spec["spec"]["height"]
    for name, title in titles.items():
        lines = title.split("\n")
        assert "".join(lines) == name  # every character, in order
        assert all(0 < len(line) <= NAME_WIDTH for line in lines), lines
        assert len(lines) * LINE_HEIGHT <= height  # the title fits beside its row


def test_rows_are_tall_enough_for_a_model_the_reader_adds_later():
    names = [*NAMES, UNBROKEN_NAME]  # the 13th: not drawn until picked
    chart = letter_bias_spec(letter_bias_rows(names), names)
    assert chart is not None and list(chart.others) == [UNBROKEN_NAME]
    picked = chart.others[UNBROKEN_NAME][0][chart.fields.index("row_title")]
    assert "".join(picked.split("\n")) == UNBROKEN_NAME
    assert chart.spec["spec"]["height"] >= len(picked.split("\n")) * LINE_HEIGHT > PLOT_HEIGHT


def test_piqa_has_only_its_two_letters_and_each_task_its_own_x_scale():
    spec = _spec(NAMES[:2])
    letters = {}
    for value in spec["data"]["values"]:
        letters.setdefault(value["task"], set()).add(value["letter"])
    assert letters == {"ARC-Easy": set("ABCD"), "OpenBookQA": set("ABCD"), "PIQA": {"A", "B"}}
    assert spec.get("resolve", {}).get("scale", {}) == {"x": "independent", "xOffset": "independent"}


def test_letter_bias_data_leaves_out_letters_a_task_lacks():
    rows = letter_bias_rows(NAMES[:1])
    assert [row["letter"] for row in rows if row["task"] == "piqa"] == ["A", "B"]
    assert [row["letter"] for row in rows if row["task"] == "arc_easy"] == ["A", "B", "C", "D"]
    assert set(rows[0]) == {"model", "display_name", "task", "task_name", "letter", "predicted", "gold"}


@pytest.mark.parametrize(
    "name,lines",
    [
        ("Gemma-3-270M", ["Gemma-3-270M"]),
        ("a" * 70, ["a" * 32, "a" * 32, "a" * 6]),
        ("org/" + "b" * 30 + " c", ["org/", "b" * 30 + " c"]),
        ("SmolLM2-135M instruct Q4_1 GGUF (HuggingFaceTB/SmolLM2-135M-Instruct @ 1a2b3c4)",
         ["SmolLM2-135M instruct Q4_1 GGUF ", "(HuggingFaceTB/SmolLM2-135M-", "Instruct @ 1a2b3c4)"]),
    ],
)  # fmt: skip
def test_name_lines_break_after_a_space_slash_or_hyphen_else_anywhere(name, lines):
    assert name_lines(name) == lines


# -- in Chromium ----------------------------------------------------------------------------------

LAYOUT = """svg => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const all = (root, selector) => [...root.querySelectorAll(selector)];
  const cells = all(svg, '.cell > g');
  const piqa = box(all(svg, '.column_header .role-title-text text').find(t => t.textContent === 'PIQA'));
  const middle = (piqa[0] + piqa[2]) / 2;
  const piqaCells = cells.filter(c => { const b = box(c); return b[0] <= middle && middle <= b[2]; });
  const left = Math.min(...piqaCells.map(c => box(c)[0])), right = Math.max(...piqaCells.map(c => box(c)[2]));
  const inColumn = e => { const b = box(e), x = (b[0] + b[2]) / 2; return left <= x && x <= right; };
  return {
    svg: box(svg),
    titles: all(svg, '.row_header .role-title-text text').map(t => ({text: t.textContent, box: box(t)})),
    plots: [...cells, ...all(svg, '.row_header .role-axis')].map(box),
    piqaCells: piqaCells.map(c => all(c, '.role-axis-label text').map(t => t.textContent)),
    piqaLetters: all(svg, '.role-axis-label text').filter(inColumn).map(t => t.textContent),
  };
}"""


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def _check_layout(page, names: list[str], state: str) -> None:
    layout = page.evaluate(LAYOUT, page.locator("#letter-bias svg").element_handle())
    titles = layout["titles"]
    shown = [title["text"].replace(" ", "") for title in titles]  # vega drops a space that ends a line
    assert shown == [name.replace(" ", "") for name in names], state  # whole, in the ranking's order
    for k, title in enumerate(titles):
        assert layout["svg"][0] <= title["box"][0] and title["box"][2] <= layout["svg"][2], (state, k)
        for other in titles[k + 1 :]:
            assert not _overlap(title["box"], other["box"]), (state, title, other)
        for plot in layout["plots"]:
            assert not _overlap(title["box"], plot), (state, title, plot)
    assert layout["piqaCells"] == [["A", "B"]] * len(names), state
    assert set(layout["piqaLetters"]) == {"A", "B"}, state


@pytest.mark.parametrize(
    "names", [[LONG_NAME, NAMES[1]], [*NAMES[:5], LONG_NAME, *NAMES[6:]]], ids=["2", "12"]
)
def test_row_titles_clear_of_each_other_and_the_plots_in_chromium(names, browser, tmp_path):
    """The SVG drawn at build (text measured in DejaVu Sans, shown in the page's fonts) and the chart
    vega draws live: every row title whole, inside the chart, overlapping no other title, no plot
    and no axis; in PIQA's column, the letters A and B only, under every row."""
    page_file = tmp_path / "letter-bias.html"
    page_file.write_text(chart_page(letter_bias_spec(letter_bias_rows(names), names)), encoding="utf-8")
    with watched(browser, width=1366, height=900) as w:
        page = w.goto(page_file.as_uri())
        _check_layout(page, names, "static")
        assert draw_charts_live(page) == 1
        _check_layout(page, names, "live")
        assert w.errors == [] and w.blocked == []
