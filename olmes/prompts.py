"""The rendering rules shared by every OLMES task (docs/standard.md section 2).

Task templates (``olmes/tasks/*``) build queries; this module owns how they are joined:
shots end in a blank line, MCF choice lines are ``"\\n " + letter + ". " + text``, letters are
A, B, C, ... by position, and a continuation always starts with one space.
"""

from __future__ import annotations

import string

SHOT_SEPARATOR = "\n\n"
ANSWER_SUFFIX = "\nAnswer:"  # ends every query but HellaSwag's CF one and WinoGrande's CF contexts
UNCONDITIONAL_CONTEXT = "Answer:"


def letter(position: int) -> str:
    """The MCF label of the choice at ``position``: A, B, C, ... whatever the dataset calls it."""
    return string.ascii_uppercase[position]


def choice_lines(texts: list[str] | tuple[str, ...]) -> str:
    """MCF choice lines. The space after the newline keeps the label token equal to the answer token."""
    return "".join(f"\n {letter(i)}. {text}" for i, text in enumerate(texts))


def mcf_continuations(num_choices: int) -> list[str]:
    return [" " + letter(i) for i in range(num_choices)]


def cf_shot(query: str, gold_continuation: str) -> str:
    """A cloze shot: the query followed by the gold continuation (which starts with a space)."""
    return query + gold_continuation


def mcf_shot(query: str, gold: int) -> str:
    return query + " " + letter(gold)


def fewshot_context(instruction: str, shots: list[str], query: str) -> str:
    """The full context: instruction, each shot followed by a blank line, then the query."""
    return instruction + "".join(shot + SHOT_SEPARATOR for shot in shots) + query
