"""Re-score a store model from its own log-probs with this olmes, then publish it back (--replace).

No model runs. What a newer scoring adds reaches published results this way: the ``num_bytes``
column (bits per byte) is restored from the canonical requests, whose rows the log-prob file must
match one for one (task, instance, native id, choice, continuation length); predictions and
summaries are written again by ``olmes score``; ``olmes publish`` checks everything as usual.

    .venv/bin/python scripts/rescore_store.py MODEL [--store leaderboard]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

from olmes import store
from olmes.cli.main import main as olmes
from olmes.core.errors import OlmesError
from olmes.store.blobs import model_logprob_file
from olmes.tables.results import ModelInfo


def with_bytes(frame: pd.DataFrame, task: str, request_set: str, limit: int | None) -> pd.DataFrame:
    rows = store.canonical_requests(task, request_set, limit, "bundle")
    if len(rows) != len(frame):
        raise OlmesError(f"{task} {request_set}: {len(frame)} log-prob rows, {len(rows)} canonical requests")
    expected = pd.DataFrame(
        {
            "instance_index": [r["instance_index"] for r in rows],
            "native_id": [str(r["native_id"]) for r in rows],
            "choice": [r["choice"] for r in rows],
            "num_chars": [len(r["continuation"]) for r in rows],
        }
    )
    if not frame[expected.columns].reset_index(drop=True).equals(expected):
        raise OlmesError(f"{task} {request_set}: the log-prob rows are not the canonical requests, in order")
    out = frame.copy()
    position = out.columns.get_loc("num_chars") + 1
    out.insert(position, "num_bytes", [len(r["continuation"].encode("utf-8")) for r in rows])
    return out


def rescore(root: Path, model: str, work: Path) -> None:
    record = store.read_model_record(root, model)
    source = root / "models" / model
    logprobs, scores = work / "logprobs" / model, work / "scores" / model
    logprobs.mkdir(parents=True)
    for task, entry in record["tasks"].items():
        inputs = []
        for request_set in entry["requests_sha256"]:
            name = f"{task}.{request_set}.parquet"
            frame = pd.read_parquet(model_logprob_file(root, model, task, request_set))
            if "num_bytes" not in frame.columns:
                frame = with_bytes(frame, task, request_set, entry["limit"])
            frame.to_parquet(logprobs / name, index=False)
            shutil.copy(source / "logprobs" / f"{name}.run.json", logprobs / f"{name}.run.json")
            inputs += [f"--{request_set}", str(logprobs / name)]
        limit = ["--limit", str(entry["limit"])] if entry["limit"] else []
        pmi = ["--pmi-everywhere"] if "pmi" in entry["requests_sha256"] else []
        outputs = ["--predictions", str(scores / f"{task}.predictions.parquet"),
                   "--summary", str(scores / f"{task}.scores.json")]  # fmt: skip
        if olmes(["score", "--model-name", model, "--task", task, *inputs, *limit, *pmi, *outputs]) != 0:
            raise OlmesError(f"{model} {task}: olmes score failed")
    info = ModelInfo.from_record(record, str(source / store.MODEL_RECORD), other_keys=True).entry()
    (work / "models.json").write_text(json.dumps({"models": [info]}), encoding="utf-8")


def layout(root: Path, model: str) -> str:
    """Where the model's log-prob files are now (olmes publish --logprobs): a model whose files are in
    its folder (in git) keeps them there."""
    in_tree = any((root / "models" / model / "logprobs").glob("*.parquet"))
    return "in-store" if in_tree else "external"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--store", type=Path, default=Path("leaderboard"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        try:
            rescore(args.store, args.model, Path(work))
        except OlmesError as error:
            print(f"rescore_store: error: {error}", file=sys.stderr)
            return 2
        where = ["--logprobs", layout(args.store, args.model)]
        return olmes(["publish", args.model, "--from", work, "--store", str(args.store), "--replace", *where])


if __name__ == "__main__":
    sys.exit(main())
