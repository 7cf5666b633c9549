"""The rendering rules shared by every OLMES task (docs/standard.md section 2).

Task templates (``olmes/requests/tasks/*``) build queries; this module owns how they are joined:
shots end in a blank line, MCF choice lines are ``"\\n " + letter + ". " + text``, letters are
A, B, C, ... by position, and a continuation always starts with one space.

The shared wording (the answer line, the label after a letter) is a :class:`Wording`; a prompt
variant of the paper's Table 5 is a :class:`Variant`: a wording and a choice of shots
(docs/standard.md section 6).
"""

from __future__ import annotations

from dataclasses import dataclass

from olmes.core.methods import letter
from olmes.core.tasks import VARIANT_NAMES

SHOT_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class Wording:
    """How the parts every template shares are worded. Continuations never change."""

    answer_line: str = "Answer:"  # also the pmi baseline's whole context
    label_end: str = "."  # after an MCF choice letter: " A. text"
    blank_before_answer: bool = False  # "...\n\nAnswer:" instead of "...\nAnswer:"

    @property
    def answer_suffix(self) -> str:
        """What ends a query (every one but HellaSwag's CF query and WinoGrande's CF contexts)."""
        return ("\n\n" if self.blank_before_answer else "\n") + self.answer_line


STANDARD = Wording()
VAR1_WORDING = Wording(answer_line="Correct answer:", label_end=")", blank_before_answer=True)


@dataclass(frozen=True)
class Variant:
    """A prompt variant: its wording, and whether 3 of the 5 curated shots are replaced by other
    examples of the few-shot source split (``olmes/requests/tasks/fewshot_var2.json``)."""

    wording: Wording = STANDARD
    other_shots: bool = False


VARIANTS = dict(
    zip(
        VARIANT_NAMES,
        (
            Variant(),
            Variant(wording=VAR1_WORDING),
            Variant(other_shots=True),
            Variant(wording=VAR1_WORDING, other_shots=True),
        ),
        strict=True,
    )
)
"""Each prompt variant's wording and shots, by its name (standard, var1, var2, var3)."""
ANSWER_SUFFIX = STANDARD.answer_suffix  # "\nAnswer:", how the reference dumps' queries end


def choice_lines(texts: list[str] | tuple[str, ...], wording: Wording = STANDARD) -> str:
    """MCF choice lines. The space after the newline keeps the label token equal to the answer token."""
    return "".join(f"\n {letter(i)}{wording.label_end} {text}" for i, text in enumerate(texts))


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
