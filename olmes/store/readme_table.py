"""``olmes verify``, the README beside a store: its table of published results (rows of store models x
tasks, each linking its summary) and its averages line (Table 4's Average column), against the store."""

from __future__ import annotations

import re
from pathlib import Path

from olmes.core.methods import MCF_METHOD, get_method
from olmes.core.records import olmes_score, read_score_summary
from olmes.store.reading import model_infos, read_model_record, score_paths
from olmes.store.verification import Problem
from olmes.tables.results import load_scores

README = "README.md"  # beside a store: its table of published results, when it has one, is checked
README_AVERAGES = "OLMES average over the 10 tasks:"  # the README line stating Table 4's averages
README_LINK = "score summary"  # the header of the README table's column linking each row's summary
TABLE_RULE = re.compile(r"^:?-+:?$")  # a cell of the line under a Markdown table's header
LINK = re.compile(r"\]\(([^)\s]+)\)")


def readme_problems(readme: Path, store: Path) -> list[Problem]:
    """The README's table of published results (rows of store models x tasks, each linking its summary)
    and its averages line (Table 4's Average column) against the store; nothing when no row of the
    README links into this store. Each column is found by its header, so the columns may come in any
    order. Models the README leaves out are no problem: it shows a selection, the site shows the whole
    store."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    rows = store_rows(lines, Path(store).resolve().name)
    problems = []
    for number, cells, columns in rows:
        path = readme.parent / _link_target(cells[columns[README_LINK]])
        if not path.is_file():
            problems.append(Problem(readme, f"line {number} links {path}, which is not in the store"))
            continue
        expected = readme_row(store, read_score_summary(path))
        for header, column in columns.items():
            have = cells[column] if column < len(cells) else ""
            if header in expected and have != expected[header]:
                problems.append(
                    Problem(
                        readme,
                        f"line {number}, column {column + 1}: {have!r}, the store says {expected[header]!r}",
                    )
                )
    if rows:
        problems += _average_problems(readme, lines, store)
    return problems


def store_rows(lines: list[str], store_name: str) -> list[tuple[int, list[str], dict[str, int]]]:
    """(line number, cells, column of each header) of the rows of Markdown tables with a
    ``score summary`` column whose link is a file of the store ``store_name``."""
    found = []
    header: list[str] | None = None
    columns: dict[str, int] | None = None
    for number, line in enumerate(lines, 1):
        if not line.lstrip().startswith("|"):
            header = columns = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if columns is None:
            if header is not None and all(TABLE_RULE.match(cell) for cell in cells):
                columns = {name: column for column, name in enumerate(header)}
            else:
                header = cells
            continue
        column = columns.get(README_LINK)
        if (
            column is not None
            and column < len(cells)
            and _link_target(cells[column]).startswith(f"{store_name}/")
        ):
            found.append((number, cells, columns))
    return found


def _link_target(cell: str) -> str:
    """Where a Markdown link in a table cell points (``[name](target)``); empty if it holds none."""
    match = LINK.search(cell)
    return match[1] if match else ""


def readme_row(store: Path, summary: dict) -> dict[str, str]:
    """The cells of a README row, by the header of their column: model, task, OLMES (dagger), CF (its
    norm), MCF, in %."""
    olmes = olmes_score(summary) or {}
    record = read_model_record(store, summary["model"])
    cf = olmes.get("cf_method", "")
    mcf = summary["methods"].get(MCF_METHOD.key)
    return {
        "model": record["display_name"],
        "task": summary["display_name"],
        "OLMES": f"{100 * olmes['score']:.1f}" + ("†" if olmes["dagger"] else "") if olmes else "",
        "CF (normalization)": (
            f"{100 * summary['methods'][cf]['accuracy']:.1f} ({get_method(cf).normalization})" if cf else ""
        ),
        "MCF": f"{100 * mcf['accuracy']:.1f}" if mcf is not None else "",
    }


def _average_problems(readme: Path, lines: list[str], store: Path) -> list[Problem]:
    """The line "OLMES average over the 10 tasks: <model> <average>, ..." is Table 4's Average column."""
    stated_line = next((line for line in lines if line.startswith(README_AVERAGES)), None)
    if stated_line is None:
        return []
    pairs = stated_line.removeprefix(README_AVERAGES).strip().rstrip(".").split(", ")
    stated = dict(pair.rsplit(" ", 1) for pair in pairs if pair)
    averages = model_averages(store)
    return [
        Problem(
            readme,
            f"the averages line says {name} {value}, the store's Table 4 {_percent(averages.get(name))}",
        )
        for name, value in stated.items()
        if value != _percent(averages.get(name))
    ]


def _percent(value: float | None) -> str:
    return "none" if value is None else f"{100 * value:.1f}"


def model_averages(store: Path) -> dict[str, float | None]:
    """Each store model's OLMES average (Table 4's Average column; None unless every task is there),
    by display name."""
    from olmes.tables.score_tables import table4

    table = table4(load_scores(score_paths(store), model_infos(store)))
    return {record["display_name"]: record["averages"]["Average"] for record in table.records}
