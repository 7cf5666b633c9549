"""Closed-book questions: Natural Questions (open) and Jeopardy (a clue under its category)."""

from __future__ import annotations

import re
from typing import Any

from olmes.core.errors import OlmesError
from olmes.requests.generative.base import GenerativeInstance, GenerativeTemplate, field


class QuestionTemplate(GenerativeTemplate):
    """``Question: <question>\\nAnswer:`` (Natural Questions; GSM8K's block too)."""

    def block(self, fields: dict[str, Any]) -> str:
        return f"Question: {fields['question']}\nAnswer:"


class NaturalQuestionsTemplate(QuestionTemplate):
    def standardize(self, doc: dict[str, Any]) -> GenerativeInstance:
        question = field(doc, "question", self.key)
        answers = list(field(doc, "answers", self.key))
        return GenerativeInstance(
            native_id=str(field(doc, "index", self.key)),
            fields={"question": question},
            question=question,
            answers=[[answer] for answer in answers],
            gold=answers[0],
        )


_JEOPARDY_QUERY = re.compile(r"Category: (?P<category>[^\n]*)\nQuestion: (?P<question>[^\n]*)\nAnswer:")


class JeopardyTemplate(GenerativeTemplate):
    """``Category: <CATEGORY>\\nQuestion: <clue>\\nAnswer:``.

    AI2's document keeps the category as written on the board only in its rendered ``query`` (its
    ``category`` field is lower-cased with underscores), so category and clue are read off it."""

    def block(self, fields: dict[str, Any]) -> str:
        return f"Category: {fields['category']}\nQuestion: {fields['question']}\nAnswer:"

    def standardize(self, doc: dict[str, Any]) -> GenerativeInstance:
        match = _JEOPARDY_QUERY.fullmatch(field(doc, "query", self.key))
        if match is None:
            raise OlmesError(f"{self.key}: document {doc.get('index')!r} has a query of another form")
        answer = field(doc, "answer", self.key)
        return GenerativeInstance(
            native_id=str(field(doc, "index", self.key)),
            fields=match.groupdict(),
            question=f"{match['category']}: {match['question']}",
            answers=[[answer]],
            gold=answer,
        )


NATURALQS_OPEN = NaturalQuestionsTemplate(key="naturalqs_open")
JEOPARDY = JeopardyTemplate(key="jeopardy")
