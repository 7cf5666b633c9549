"""``olmes import oe-eval``, the log-probs: each canonical request's ``sum_logits`` (or
``sum_logits_uncond``) from the run's predictions, checked to be a log-prob of the right instance."""

from __future__ import annotations

import math

from olmes.core.errors import OlmesError
from olmes.core.methods import CF, MCF, PMI
from olmes.core.records import RequestRow
from olmes.scoring.logprob_files import LOGPROB_TOLERANCE
from olmes.store.oe_eval.checks import ImportedTask, Instance, int_field


def logprob_results(checked: ImportedTask, request_set: str, rows: list[RequestRow], counts: list[int]):
    """(sum_logprob, num_tokens, is_greedy) of each canonical row, from the run's predictions, and how
    many of the run's own token counts differ from ours."""
    formulation = MCF if request_set == MCF else CF
    outputs: dict[tuple[int, int], list[dict]] = {}
    for run in checked.parts[formulation]:
        for prediction in run.predictions:
            doc_id = int_field(prediction.get("doc_id"), run, "doc_id", "predictions.jsonl")
            position = checked.positions.get((id(run), doc_id))
            if position is not None:
                _check_same_instance(prediction, checked.instance(request_set, position))
                outputs[position] = prediction.get("model_output") or []
    results, differing = [], 0
    key = "sum_logits_uncond" if request_set == PMI else "sum_logits"
    for row, count in zip(rows, counts, strict=True):
        instance = checked.instance(request_set, row["instance_index"])
        where = f"{instance.run.paths['predictions.jsonl']}: doc_id {instance.doc_id} ({instance.native_id})"
        output = outputs.get(row["instance_index"])
        if output is None or len(output) <= row["choice"] or not isinstance(output[row["choice"]], dict):
            raise OlmesError(f"{where}: no model output for choice {row['choice']}")
        choice = output[row["choice"]]
        value = choice.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            missing = "; run the rc task with its unconditional requests" if request_set == PMI else ""
            raise OlmesError(f"{where} choice {row['choice']}: {key} is {value!r}, not a log-prob{missing}")
        if value > LOGPROB_TOLERANCE:
            raise OlmesError(
                f"{where} choice {row['choice']}: {key} is {value!r}, positive: not a log-prob (at most 0); "
                "import a run whose predictions are as oe-eval wrote them"
            )
        if request_set != PMI and choice.get("num_tokens") != count:
            differing += 1
        greedy = choice.get("is_greedy") if request_set != PMI else None
        results.append((float(value), count, greedy if isinstance(greedy, bool) else None))
    return results, differing


def _check_same_instance(prediction: dict, instance: Instance) -> None:
    """A prediction that names its instance (native_id) must name the one its doc_id's requests are of."""
    named = prediction.get("native_id")
    if named is not None and str(named) != instance.native_id:
        raise OlmesError(
            f"{instance.run.paths['predictions.jsonl']}: doc_id {instance.doc_id} is {named}, its requests' "
            f"is {instance.native_id}: which instance its log-probs are of is ambiguous; import the files "
            "of one run as oe-eval wrote them"
        )
