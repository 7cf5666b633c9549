"""CoQA: a story, the conversation so far, and the next question (no shots)."""

from __future__ import annotations

import re
from typing import Any

from olmes.core.errors import OlmesError
from olmes.requests.generative.base import GenerativeInstance, GenerativeTemplate, field

_TURN = re.compile(r".*_turn(\d+)")


class CoqaTemplate(GenerativeTemplate):
    """``Passage: <story>\\n\\n`` [``Preceding questions:\\n\\n`` then ``Question: <q>\\nAnswer: <a>\\n\\n``
    per earlier turn] ``Final question:\\n\\nQuestion: <question>\\nAnswer:``."""

    def block(self, fields: dict[str, Any]) -> str:
        preceding = "".join(f"Question: {q}\nAnswer: {a}\n\n" for q, a in fields["preceding"])
        if preceding:
            preceding = "Preceding questions:\n\n" + preceding
        final = f"Final question:\n\nQuestion: {fields['question']}\nAnswer:"
        return f"Passage: {fields['story']}\n\n{preceding}{final}"

    def standardize(self, doc: dict[str, Any]) -> GenerativeInstance:
        native_id = str(field(doc, "id", self.key))
        question = field(doc, "question", self.key)
        turns = field(doc, "previous_qa", self.key)  # every turn of the story's conversation
        match = _TURN.fullmatch(native_id)
        turn = int(match.group(1)) if match else -1
        if not 0 <= turn < len(turns) or turns[turn]["question"] != question:
            raise OlmesError(f"{self.key}: document {native_id!r} is not a turn of its conversation")
        answers = list(field(doc, "answers", self.key))
        return GenerativeInstance(
            native_id=native_id,
            fields={
                "story": field(doc, "story", self.key),
                "preceding": [[t["question"], t["answer"]] for t in turns[:turn]],
                "question": question,
            },
            question=question,
            answers=[[answer] for answer in answers],
            gold=answers[0],
        )


COQA = CoqaTemplate(
    key="coqa",
    description="Below is a passage followed by a conversation so far, where each turn in the conversation "
    "contains a question and an answer. Please answer the final question by referring to the passage and "
    "the previous questions.\n\n",
)
