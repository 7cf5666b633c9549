"""The files of ``olmes tables``: its index, each table and figure, and the flags."""

from collections.abc import Callable
from typing import Any, Literal, NotRequired, TypedDict

from olmes.core.methods import Formulation
from olmes.core.records.formats import Format
from olmes.core.records.generative import MetricValue


class TaskFlag(TypedDict):
    """A sign that a model x task result went wrong (:func:`olmes.scoring.flags.task_flags`)."""

    code: Literal["below_chance", "one_answer", "near_ties", "nan"]
    method: str | None  # the method key it concerns
    message: str


class LeaderboardTask(TypedDict):
    """One model x task of the leaderboard: what its cell shows (``olmes tables``' ``leaderboard``)."""

    score: float | None  # the best-of-two score; None when CF (recommended) or MCF was not scored
    stderr: float | None  # of the method that decided the score
    formulation: Formulation | None  # the winner: MCF exactly where dagger
    dagger: bool
    partial: bool
    cf_accuracy: float | None
    mcf_accuracy: float | None
    n: int | None  # instances scored; None on a reported row (the paper gives no counts)
    statistically_tied_with: list[str]  # model names: the paired bootstrap's ties with its neighbours
    method: str | None  # the deciding method's key
    chance: float | None  # accuracy of guessing uniformly on the instances scored; None on a reported row
    flags: list[TaskFlag]  # those of the score's two formulations (recommended CF and MCF)


RowKind = Literal["evaluated", "reported"]
"""A leaderboard row scored here from per-instance predictions, or copied from a paper (no stderr, no
predictions, never statistically tied with anything)."""


IntervalKind = Literal["paired bootstrap", "binomial (reported)"]
"""How a leaderboard row's intervals were drawn (olmes/tables/rank_intervals.py): a bootstrap over the
instances, paired with the other evaluated models, or, for a reported row (no predictions), a binomial
approximation from its printed accuracies and the tasks' instance counts."""


class LeaderboardRow(TypedDict):
    """One model of the leaderboard, in rank order (the ``leaderboard`` table's records). The interval
    fields are None without a rank (and in a leaderboard written before them, olmes.table/4)."""

    rank: int | None  # None: no average (a task missing or partial)
    model: str
    display_name: str
    partial: bool
    average: float | None  # Table 4's
    average_stderr: float | None
    average_low: float | None  # the average's 95% interval
    average_high: float | None
    rank_low: int | None  # the rank's 95% interval (the best and the worst rank)
    rank_high: int | None
    tie_group: int | None  # 1 at the top; neighbours whose ranks cannot be separated share one
    interval: IntervalKind | None
    tasks: dict[str, LeaderboardTask | None]  # every task of the tables; None where not scored
    # only in a leaderboard built with reported rows (olmes tables --reported):
    kind: NotRequired[RowKind]
    source: NotRequired[str]  # who produced the numbers: this pipeline, or the paper that printed them


class TableInput(TypedDict):
    model: str
    task: str
    path: str
    sha256: str
    partial: bool


class RobustnessInput(TypedDict):
    result: list[str]  # (model, task, kind)
    path: str
    sha256: str


class ReportedInput(TypedDict):
    """The paper data a leaderboard's reported rows were copied from (``olmes tables --reported``)."""

    source: str
    url: str
    table: str  # the file of olmes/tables/paper_data/
    sha256: str


class GenerativeInput(TypedDict):
    """A generative score summary the tables were built from (``olmes tables --generative``)."""

    model: str
    task: str  # a key of olmes.core.generative.GENERATIVE_TASKS
    path: str  # as given to olmes tables
    sha256: str
    partial: bool


class TablesIndex(TypedDict):
    """``<tables>/index.json`` (``olmes tables``): every file written and every input, by SHA-256."""

    format: str  # TABLES_INDEX_FORMAT's tag
    olmes_version: str
    files: list[str]
    models: list[dict[str, Any]]  # the models' display records (olmes.tables.results.ModelInfo), in order
    tasks: list[str]
    bootstrap: dict[str, int]  # resamples, seed
    inputs: list[TableInput]
    robustness_inputs: list[RobustnessInput]
    reported: NotRequired[ReportedInput]  # only with reported rows (olmes tables --reported)
    # only with generative results (olmes tables --generative): their summaries, by SHA-256
    generative_inputs: NotRequired[list[GenerativeInput]]


class TableGroup(TypedDict):
    """Rows of a table shown together: the leaderboard's partial runs, a paper layout's model family."""

    label: str | None  # None: the table's first, unlabelled group
    rows: list[list[str]]  # the cells as shown
    reported: bool  # its rows are, or are computed from, a paper's printed numbers (not evaluated here)


class TableLayout(TypedDict):
    """A table of ``olmes tables`` as shown (``<tables>/<key>.json``, less its records): header, rows
    in groups, and ``values``, the number behind each shown cell (what a page sorts by)."""

    key: str
    title: str
    caption: str
    header: list[str]
    rows: list[list[str]]  # every group's rows, in order
    groups: list[TableGroup]
    values: list[list[float | None]]  # parallel to ``rows``
    text_columns: int  # leading columns of text (names); the others are numbers
    header_groups: list[list[str | int]] | None  # (label, columns spanned) above the header in LaTeX


class TableDocument(TableLayout):
    """``<tables>/<key>.json``: a table and its structured records (each table its own fields)."""

    format: str  # TABLE_FORMAT's tag
    records: list[dict[str, Any]]


class LeaderboardTable(TableLayout):
    """``<tables>/leaderboard.json``: the leaderboard, its records checked field by field."""

    format: str  # TABLE_FORMAT's tag
    records: list[LeaderboardRow]


class GenerativeTask(TypedDict):
    """One model x OLMES v0.2 generative task of ``generative_scores``: its summary's numbers."""

    score: float  # the primary metric's mean (0..1)
    stderr: float | None
    n: int
    primary_metric: str  # "f1" or "exact_match"
    metrics: dict[str, MetricValue]  # exact_match, f1 (where the task has it)
    bits_per_byte: MetricValue
    partial: bool
    partial_reasons: list[str]
    version: str  # olmes.core.generative.GENERATIVE_VERSION


class GenerativeRow(TypedDict):
    """One model of ``generative_scores`` (models-file order): its generative average over the six
    tasks (only complete, none partial) and each task's cell."""

    model: str
    display_name: str
    partial: bool  # some task's result is partial
    average: float | None
    average_stderr: float | None  # sqrt(sum of the tasks' se^2) / 6
    no_average: str | None  # why there is no average (a task missing or partial); None with one
    version: str
    tasks: dict[str, GenerativeTask | None]  # every generative task; None where not scored


class GenerativeScoresTable(TableLayout):
    """``<tables>/generative_scores.json`` (``olmes tables --generative``), its records checked."""

    format: str  # TABLE_FORMAT's tag
    records: list[GenerativeRow]


class FigureDocument(TypedDict):
    """``<tables>/<key>.json`` of a figure (:mod:`olmes.tables.figures`): its data, a row per point."""

    format: str  # FIGURE_FORMAT's tag
    key: str
    description: str
    columns: list[str]
    rows: list[dict[str, Any]]


class ModelTaskFlag(TaskFlag):
    """A flag of ``<tables>/flags.json``: whose result it concerns, and the flag."""

    model: str
    task: str


class FlagsDocument(TypedDict):
    """``<tables>/flags.json`` (``olmes tables``): every flag of every model x task."""

    format: str  # FLAGS_FORMAT's tag
    flags: list[ModelTaskFlag]


def _tagged(document: dict[str, Any]) -> dict[str, Any]:
    """/1 -> /2: the file names its format (files of the tables before olmes.tables-index/2 did not)."""
    return document


GRID_FIELDS = ("model", "display_name", "partial", "tasks")
"""The fields of a record of a table of models x tasks (olmes.tables.model_grid.model_table)."""


def _averages_in_one_place(table: dict[str, Any]) -> dict[str, Any]:
    """/2 -> /3: a models x tasks table's averages are in each record's ``averages``, by label (empty
    where the table has none). /2 had two shapes: Tables 4, CF and MCF accuracy, the normalizations
    and bits per byte kept them at the top of the record by label, the paper's layouts under
    ``averages``. A record is of such a table when it has the grid's fields and is no leaderboard row;
    an average is a top-level key that is one of the table's column labels."""
    labels = set(table.get("header", [])) - set(GRID_FIELDS)
    records = []
    for record in table.get("records", []):
        if isinstance(record, dict) and set(GRID_FIELDS) <= set(record) and "rank" not in record:
            moved = {key: value for key, value in record.items() if key in labels}
            kept = {key: value for key, value in record.items() if key not in labels and key != "averages"}
            at = list(kept).index("tasks") + 1
            record = _with_key_at(kept, "averages", {**record.get("averages", {}), **moved}, at)
        records.append(record)
    return {**table, "records": records}


def _groups_say_if_reported(table: dict[str, Any]) -> dict[str, Any]:
    """/3 -> /4: each group says whether it holds a paper's reported numbers; before /4 none did."""
    groups = [{**group, "reported": False} for group in table.get("groups", [])]
    return {**table, "groups": groups}


INTERVAL_FIELDS = ("average_low", "average_high", "rank_low", "rank_high", "tie_group", "interval")
"""A leaderboard row's fields of olmes.table/5 (olmes/tables/rank_intervals.py), after ``average_stderr``."""


def _leaderboard_rows_have_intervals(table: dict[str, Any]) -> dict[str, Any]:
    """/4 -> /5: a leaderboard row has its rank's and average's 95% intervals and its tie group
    (:data:`INTERVAL_FIELDS`); an older leaderboard's rows get nulls (it was built without the draws).
    A leaderboard row is a record with ``rank`` and ``average_stderr``."""
    records = []
    for record in table.get("records", []):
        if isinstance(record, dict) and {"rank", "average_stderr"} <= set(record):
            items, at = list(record.items()), list(record).index("average_stderr") + 1
            record = dict([*items[:at], *((key, None) for key in INTERVAL_FIELDS), *items[at:]])
        records.append(record)
    return {**table, "records": records}


def _rows_say_their_kind(figure: dict[str, Any]) -> dict[str, Any]:
    """/2 -> /3: a CF-vs-MCF figure's rows say whether their model was evaluated here or reported by a
    paper (column ``kind``, after ``display_name``); before /3 every row was evaluated."""
    columns = figure.get("columns", [])
    if "cf_accuracy" not in columns or "kind" in columns:
        return figure
    at = columns.index("display_name") + 1 if "display_name" in columns else len(columns)
    rows = [_with_key_at(row, "kind", "evaluated", at) for row in figure.get("rows", [])]
    return {**figure, "columns": [*columns[:at], "kind", *columns[at:]], "rows": rows}


def _with_key_at(row: dict[str, Any], key: str, value: Any, at: int) -> dict[str, Any]:
    items = list(row.items())
    return dict([*items[:at], (key, value), *items[at:]])


def _tables_format(name: str, kind: type, *upgrades: Callable[[dict[str, Any]], dict[str, Any]]) -> Format:
    return Format(name, kind, made_by="re-run olmes tables", upgrades=(_tagged, *upgrades), unversioned=True)


TABLES_INDEX_FORMAT = _tables_format("olmes.tables-index", TablesIndex)
TABLE_UPGRADES = (_averages_in_one_place, _groups_say_if_reported, _leaderboard_rows_have_intervals)
TABLE_FORMAT = _tables_format("olmes.table", TableDocument, *TABLE_UPGRADES)
LEADERBOARD_FORMAT = _tables_format("olmes.table", LeaderboardTable, *TABLE_UPGRADES)  # records checked
GENERATIVE_TABLE_FORMAT = _tables_format("olmes.table", GenerativeScoresTable, *TABLE_UPGRADES)
FIGURE_FORMAT = _tables_format("olmes.figure", FigureDocument, _rows_say_their_kind)
FLAGS_FORMAT = _tables_format("olmes.flags", FlagsDocument)
