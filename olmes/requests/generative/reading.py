"""Reading comprehension over a given text: DROP (a passage) and SQuAD (a titled background)."""

from __future__ import annotations

import re
from typing import Any

from olmes.core.errors import OlmesError
from olmes.requests.generative.base import GenerativeInstance, GenerativeTemplate, field


class DropTemplate(GenerativeTemplate):
    """``Passage: <passage>\\nQuestion: <question>\\nAnswer:``; answers are sets of spans."""

    def block(self, fields: dict[str, Any]) -> str:
        return f"Passage: {fields['passage']}\nQuestion: {fields['question']}\nAnswer:"

    def standardize(self, doc: dict[str, Any]) -> GenerativeInstance:
        answers = [list(spans) for spans in field(doc, "answers", self.key)]
        question = field(doc, "question", self.key)
        return GenerativeInstance(
            native_id=str(field(doc, "query_id", self.key)),
            fields={"passage": field(doc, "passage", self.key), "question": question},
            question=question,
            answers=answers,
            # AI2's bits-per-byte answer: the Python tuple of the first answer's spans, "('swedish',)"
            gold=str(tuple(answers[0])),
        )


_SQUAD_QUERY = re.compile(
    r"Title: (?P<title>[^\n]*)\nBackground: (?P<background>.*)\nQuestion: (?P<question>[^\n]*)\nAnswer:",
    re.DOTALL,
)


class SquadTemplate(GenerativeTemplate):
    """``Title: <title>\\nBackground: <paragraph>\\nQuestion: <question>\\nAnswer:``.

    AI2's SQuAD document holds the paragraph and question only inside its rendered ``query``, so they
    are read back off it (the question is its last line, the paragraph may have line breaks)."""

    def block(self, fields: dict[str, Any]) -> str:
        title, background, question = fields["title"], fields["background"], fields["question"]
        return f"Title: {title}\nBackground: {background}\nQuestion: {question}\nAnswer:"

    def standardize(self, doc: dict[str, Any]) -> GenerativeInstance:
        match = _SQUAD_QUERY.fullmatch(field(doc, "query", self.key))
        if match is None or match["title"] != doc.get("title"):
            raise OlmesError(f"{self.key}: document {doc.get('id')!r} has a query of another form")
        answers = list(field(doc, "answers_text", self.key))
        return GenerativeInstance(
            native_id=str(field(doc, "id", self.key)),
            fields=match.groupdict(),
            question=match["question"],
            answers=[[answer] for answer in answers],
            gold=answers[0],
        )


DROP = DropTemplate(
    key="drop",
    description="The following are reading comprehension questions, where the answer to each question is "
    "either a segment of text from the corresponding passage, a number, or a date (containing any of the "
    "date, month, and/or year components). Some questions may require you to pull together information "
    "pieces from the passage and reason over them.\n\n",
)
SQUAD = SquadTemplate(
    key="squad",
    description="The following are reading comprehension questions, where the answer to each question is "
    "a segment of text from the corresponding background text.\n\n",
)
