"""Score summaries -> the tables folder: every table (``TABLE_BUILDERS``, in the order they are
built and written), the figure data, the flags and ``index.json`` under one folder (``olmes tables``).

Every table is written three ways (:mod:`olmes.tables.render`): ``<key>.csv`` (the table as displayed:
percentages with one decimal, † where MCF won, ᵖ on partial cells), ``<key>.json`` (the displayed
rows plus structured records and the cells' values at full precision) and ``<key>.tex`` (a booktabs
``table``). Figure data (:mod:`olmes.tables.figures`) is written as CSV and JSON only. ``index.json``
lists every file and the inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from olmes import __version__
from olmes.core.records import FLAGS_FORMAT, TABLES_INDEX_FORMAT, RobustnessInput, TablesIndex
from olmes.core.resources import file_sha256
from olmes.tables.bootstrap import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, bootstrap_table
from olmes.tables.figures import write_figures
from olmes.tables.generative import GENERATIVE_KEY, GenerativeSet, generative_table
from olmes.tables.leaderboard import leaderboard_table
from olmes.tables.paper_check import PAPER_CHECK_KEYS, paper_check_tables
from olmes.tables.paper_layouts import (
    CF_MCF_TABLE_KEYS,
    NORMALIZATION_LAYOUT_KEYS,
    cf_mcf_tables,
    normalization_layout_tables,
)
from olmes.tables.render import Table, write_table
from olmes.tables.reported import reported_input
from olmes.tables.reported_scores import ReportedScores, reported_scores
from olmes.tables.results import ScoreSet
from olmes.tables.robustness import rotations_table, table5
from olmes.tables.score_tables import (
    NORMALIZATION_TABLES,
    SUBJECT_TASKS,
    bpb_table,
    cf_accuracy_table,
    mcf_accuracy_table,
    near_ties_table,
    normalization_tables,
    table4,
    table8,
    table8_key,
)
from olmes.tables.signal_noise import SIGNAL_NOISE_KEY, signal_noise_table
from olmes.tables.table3 import CHECK_KEY, TABLE3_KEY, table3, table3_check
from olmes.tables.training import TRAINING_KEYS, training_tables


@dataclass
class TableInputs:
    """What the table builders read: the scores, the bootstrap's settings, the tables built so far
    (a builder may use those of the builders before it) and the flags, computed once."""

    scores: ScoreSet
    resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED
    reported: bool = False  # the leaderboard, Table 3 and the paper's layouts add the paper's models
    generative: GenerativeSet | None = None  # the OLMES v0.2 generative tasks' summaries, where given
    built: dict[str, Table] = field(default_factory=dict)
    _flags: list[dict] | None = None

    @property
    def paper_models(self) -> ReportedScores | None:
        """The paper's models of Tables 6-12, where the tables add them."""
        return reported_scores() if self.reported else None

    def flags(self) -> list[dict]:
        if self._flags is None:
            self._flags = flag_rows(self.scores)
        return self._flags


@dataclass(frozen=True)
class TableBuilder:
    """One entry of :data:`TABLE_BUILDERS`: the keys of the tables it builds, in order, and how."""

    keys: tuple[str, ...]
    build: Callable[[TableInputs], list[Table]]
    optional: bool = False  # builds no table when its inputs are not given (olmes tables --generative)


TABLE_BUILDERS = (
    TableBuilder((TABLE3_KEY,), lambda given: [table3(given.scores, given.paper_models)]),
    TableBuilder((CHECK_KEY,), lambda given: [table3_check(reported_scores())]),
    TableBuilder(("table4_olmes",), lambda given: [table4(given.scores)]),
    TableBuilder(CF_MCF_TABLE_KEYS, lambda given: cf_mcf_tables(given.scores, given.paper_models)),
    TableBuilder(tuple(map(table8_key, SUBJECT_TASKS)), lambda given: table8(given.scores)),
    TableBuilder(
        NORMALIZATION_LAYOUT_KEYS, lambda given: normalization_layout_tables(given.scores, given.paper_models)
    ),
    TableBuilder(("cf_accuracy",), lambda given: [cf_accuracy_table(given.scores)]),
    TableBuilder(("mcf_accuracy",), lambda given: [mcf_accuracy_table(given.scores)]),
    TableBuilder(
        tuple(key for key, _ in NORMALIZATION_TABLES), lambda given: normalization_tables(given.scores)
    ),
    TableBuilder(("near_ties",), lambda given: [near_ties_table(given.scores)]),
    TableBuilder((SIGNAL_NOISE_KEY,), lambda given: [signal_noise_table(given.scores)]),
    TableBuilder(("bpb",), lambda given: [bpb_table(given.scores)]),
    TableBuilder(
        ("paired_bootstrap",), lambda given: [bootstrap_table(given.scores, given.resamples, given.seed)]
    ),
    TableBuilder(TRAINING_KEYS, lambda given: training_tables(given.scores, given.resamples, given.seed)),
    TableBuilder(("table5_variants",), lambda given: [table5(given.scores)]),
    TableBuilder(("rotations",), lambda given: [rotations_table(given.scores)]),
    TableBuilder(
        PAPER_CHECK_KEYS,
        lambda given: paper_check_tables(given.scores, given.built["table5_variants"]),
    ),
    TableBuilder(
        (GENERATIVE_KEY,),
        lambda given: (
            [] if given.generative is None else [generative_table(given.generative, given.scores.models)]
        ),
        optional=True,
    ),
    TableBuilder(
        ("leaderboard",),
        lambda given: [
            leaderboard_table(
                given.scores,
                given.built["table4_olmes"],
                given.built["paired_bootstrap"],
                given.flags(),
                given.reported,
                given.resamples,
                given.seed,
            )
        ],
    ),
)
"""Every table of the tables folder, in the order they are built and written: adding a table means
adding its builder here (``olmes site`` reads the tables by these keys)."""

TABLE_KEYS = tuple(key for builder in TABLE_BUILDERS if not builder.optional for key in builder.keys)
"""The tables every tables folder holds."""
OPTIONAL_TABLE_KEYS = tuple(key for builder in TABLE_BUILDERS if builder.optional for key in builder.keys)
"""The tables a tables folder holds only when their inputs were given (``generative_scores``)."""


def all_tables(
    scores: ScoreSet, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[Table]:
    return _build_all(TableInputs(scores, resamples, seed))


def _build_all(given: TableInputs) -> list[Table]:
    for builder in TABLE_BUILDERS:
        tables = builder.build(given)
        keys = tuple(table.key for table in tables)
        if keys != builder.keys and not (builder.optional and not keys):
            raise RuntimeError(f"the table builder of {builder.keys} built {keys}")
        given.built.update((table.key, table) for table in tables)
    return list(given.built.values())


def build_tables(
    scores: ScoreSet,
    out: str | Path,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    reported: bool = False,
    generative: GenerativeSet | None = None,
) -> list[Path]:
    """Write every table, the figure data and ``index.json`` under ``out``; return the paths written.
    ``reported`` adds the paper's reported rows to the leaderboard (:func:`leaderboard_table`);
    ``generative`` the table of the OLMES v0.2 generative tasks (``generative_scores``)."""
    out = Path(out)
    given = TableInputs(scores, resamples, seed, reported, generative)
    written = []
    for table in _build_all(given):
        written += write_table(table, out)
    written += write_figures(scores, out, given.paper_models)
    written.append(write_flags(given.flags(), out))
    index = out / "index.json"
    document = _index(scores, written, resamples, seed)
    if reported:
        document["reported"] = reported_input()
    if generative is not None:
        document["generative_inputs"] = generative.inputs()
    TABLES_INDEX_FORMAT.write(index, document)
    return [*written, index]


def flag_rows(scores: ScoreSet) -> list[dict]:
    """Every flag of every model x task (olmes/scoring/flags.py), each with its ``model`` and ``task``."""
    return [
        {"model": model, "task": task, **flag}
        for (model, task), summary in sorted(scores.summaries.items())
        for flag in scores.digest(model, task).flags
    ]


def write_flags(rows: list[dict], out: Path) -> Path:
    """``flags.json``: the flags of :func:`flag_rows`, for the site to show."""
    path = out / "flags.json"
    FLAGS_FORMAT.write(path, {"flags": rows})
    return path


def _index(scores: ScoreSet, written: list[Path], resamples: int, seed: int) -> TablesIndex:
    return {
        "olmes_version": __version__,
        "files": [path.name for path in written],
        "models": [vars(info) for info in scores.models],
        "tasks": scores.tasks,
        "bootstrap": {"resamples": resamples, "seed": seed},
        "inputs": [
            {
                "model": model,
                "task": task,
                "path": str(path),
                "sha256": file_sha256(path),
                "partial": scores.summaries[(model, task)]["partial"],
            }
            for (model, task), path in sorted(scores.paths.items())
        ],  # fmt: skip
        "robustness_inputs": robustness_inputs(scores),
    }


def robustness_inputs(scores: ScoreSet) -> list[RobustnessInput]:
    """The prompt-variant summaries and rotations reports the tables were built from, by SHA-256."""
    return [
        {"result": list(key), "path": str(path), "sha256": file_sha256(path)}
        for key, path in sorted(scores.robustness_paths.items())
    ]
