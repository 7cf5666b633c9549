"""GSM8K: a math word problem, answered by 8 curated chain-of-thought shots' example."""

from __future__ import annotations

from typing import Any

from olmes.requests.generative.base import GenerativeInstance, field
from olmes.requests.generative.qa import QuestionTemplate


class Gsm8kTemplate(QuestionTemplate):
    """``Question: <problem>\\nAnswer:``; a shot's answer is its reasoning ending in "So the answer is N."."""

    def standardize(self, doc: dict[str, Any]) -> GenerativeInstance:
        question = field(doc, "question", self.key)
        return GenerativeInstance(
            native_id=str(field(doc, "id", self.key)),
            fields={"question": question},
            question=question,
            answers=[[field(doc, "short_answer", self.key)]],
            # AI2's gold bits-per-byte answer: the reference solution rewritten as a chain of thought
            # like the shots' (its document's "choices"), not the bare number
            gold=field(doc, "choices", self.key)[0],
        )


GSM8K = Gsm8kTemplate(key="gsm8k")
