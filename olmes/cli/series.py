"""Checkpoint series: one config entry (``series:``) expanded into one model per checkpoint.

A training run's checkpoints are the revisions of one source: the branches of a hub repository
(``org/name``; each checkpoint is pinned to the commit its branch points to, so that its identity is
that commit) or the checkpoint folders of a local folder (its subfolders with a ``config.json``). An
entry picks some of them (``checkpoints``) and says how many tokens each was trained on
(``tokens``); :func:`expand_series` turns it into model entries of the shape ``models:`` holds, so the
workflow fans out over them like over any other model, and adding checkpoints adds only their jobs.

A hub repository's branches are read once (``HfApi.list_repo_refs``) and recorded in
``<results>/series/<series>.refs.json``; later runs (offline, on a cluster node) read that file.
Deleting it reads them again. Torch-free: the workflow's config check runs this.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from olmes.core.atomic import write_text_atomic
from olmes.core.errors import OlmesError
from olmes.logprobs.spec import LOCAL_PREFIXES

HUB_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")  # org/name, no @revision: the series picks those
NOT_IN_NAME = re.compile(r"[^A-Za-z0-9._+-]")  # what a model name may not hold (the models' pattern)
CHECKPOINT_OPTIONS = ("dtype", "parameters", "resources", "trust_remote_code")  # copied to each checkpoint

_UNITS = {"M": 1e6, "B": 1e9}
_OLMO = re.compile(r"^step\d+-tokens(?P<count>\d+)(?P<unit>[MB])$")
_STEPS = {"pythia": re.compile(r"^step(?P<step>\d+)$"), "smollm": re.compile(r"^step-(?P<step>\d+)$")}
RULE_FORMS = {"olmo": "stepN-tokensNB or stepN-tokensNM", "pythia": "stepN", "smollm": "step-N"}


@dataclass(frozen=True)
class TokenRule:
    """How many tokens a revision was trained on: read from its name by a named rule, or a table."""

    rule: str | None = None  # olmo, pythia or smollm; None for a table
    tokens_per_step: int | None = None  # pythia and smollm
    table: dict[str, float] | None = None  # revision -> tokens

    def tokens(self, revision: str) -> float | None:
        """The revision's training tokens; None when this rule cannot read it."""
        if self.table is not None:
            return self.table.get(revision)
        if self.rule == "olmo":
            found = _OLMO.match(revision)
            return int(found["count"]) * _UNITS[found["unit"]] if found else None
        found = _STEPS[self.rule].match(revision)
        return float(int(found["step"]) * self.tokens_per_step) if found else None

    def reads(self) -> str:
        """What revisions this rule reads, for a message."""
        if self.table is not None:
            return "the revisions of tokens.table"
        return f"{RULE_FORMS[self.rule]} (the {self.rule} rule)"


@dataclass(frozen=True)
class Checkpoints:
    """Which revisions are checkpoints of the series: exactly one of the three is set."""

    revisions: tuple[str, ...] | None = None  # these
    match: re.Pattern | None = None  # those it finds (re.search)
    every: int | None = None  # every Nth of those the token rule reads, in training order, and the last


@dataclass(frozen=True)
class SeriesEntry:
    """One entry of the config's ``series`` (its shape checked by the schema first)."""

    name: str
    source: str  # a hub repo id org/name, or a local folder of checkpoint folders
    display_name: str
    checkpoints: Checkpoints
    tokens: TokenRule
    options: dict[str, Any]  # CHECKPOINT_OPTIONS given, as every checkpoint's model entry gets them

    def key(self, *parts: str) -> str:
        """The config key of this entry (or of a key under it), as the messages name it."""
        return ".".join(("series", self.name, *parts))


@dataclass(frozen=True)
class Revisions:
    """A source's revisions, each with the model spec of its checkpoint, and how messages name them."""

    specs: dict[str, str]  # revision -> spec: org/name@commit, or the checkpoint folder
    described: str  # e.g. "the branches of org/name (recorded in results/series/x.refs.json on ...)"

    def listed(self, limit: int = 5) -> str:
        """The first few revisions by name, for a message saying which there are."""
        names = sorted(self.specs)
        more = f", ... ({len(names)} in all)" if len(names) > limit else ""
        return ", ".join(names[:limit]) + more


def expand_series(series: dict[str, dict], results: Path, models: Collection[str]) -> dict[str, dict]:
    """Every series' checkpoints as model entries, by name: each series in config order, its checkpoints
    by training tokens (then name). ``models`` are the names the config's ``models`` takes (a
    checkpoint may not take one). Raise a one-line :class:`OlmesError` naming the key for any problem."""
    expanded: dict[str, dict] = {}
    for name, raw in series.items():
        entry = parse_entry(name, raw)
        for model, model_entry in checkpoint_models(entry, source_revisions(entry, results)).items():
            if model in models or model in expanded:
                taken = f"models.{model}" if model in models else f"series.{expanded[model]['series']}"
                raise OlmesError(
                    f"config key '{entry.key()}': its checkpoint {model_entry['checkpoint']} would be the "
                    f"model {model}, a name {taken} already gives a model; rename the series or that entry"
                )
            expanded[model] = model_entry
    return expanded


def parse_entry(name: str, raw: dict[str, Any]) -> SeriesEntry:
    """The typed entry; what the schema cannot say (exactly one of, a rule's own keys) is checked here."""
    return SeriesEntry(
        name=name,
        source=raw["source"],
        display_name=raw.get("display_name", name),
        checkpoints=_parse_checkpoints(raw["checkpoints"], f"series.{name}.checkpoints"),
        tokens=_parse_tokens(raw["tokens"], f"series.{name}.tokens"),
        options={option: raw[option] for option in CHECKPOINT_OPTIONS if option in raw},
    )


def _exactly_one(raw: dict[str, Any], keys: tuple[str, ...], key: str) -> str:
    given = [k for k in keys if k in raw]
    if len(given) != 1:
        has = f"it has {', '.join(given)}" if given else "it has none"
        raise OlmesError(f"config key '{key}': give exactly one of {', '.join(keys)} ({has})")
    return given[0]


def _parse_checkpoints(raw: dict[str, Any], key: str) -> Checkpoints:
    which = _exactly_one(raw, ("revisions", "match", "every"), key)
    if which == "revisions":
        return Checkpoints(revisions=tuple(raw["revisions"]))
    if which == "every":
        return Checkpoints(every=raw["every"])
    try:
        return Checkpoints(match=re.compile(raw["match"]))
    except re.error as error:
        raise OlmesError(
            f"config key '{key}.match': {raw['match']!r} is no regular expression ({error})"
        ) from None


def _parse_tokens(raw: dict[str, Any], key: str) -> TokenRule:
    which = _exactly_one(raw, ("rule", "table"), key)
    if which == "table":
        if "tokens_per_step" in raw:
            raise OlmesError(f"config key '{key}.tokens_per_step': a table gives the tokens; remove it")
        return TokenRule(table={revision: float(tokens) for revision, tokens in raw["table"].items()})
    rule, per_step = raw["rule"], raw.get("tokens_per_step")
    if rule in _STEPS and per_step is None:
        raise OlmesError(
            f"config key '{key}.tokens_per_step': the {rule} rule needs it: a revision {RULE_FORMS[rule]} "
            "was trained on N x tokens_per_step tokens (the batch size in tokens, e.g. 2097152)"
        )
    if rule not in _STEPS and per_step is not None:
        raise OlmesError(
            f"config key '{key}.tokens_per_step': the {rule} rule reads the tokens from the name; remove it"
        )
    return TokenRule(rule=rule, tokens_per_step=per_step)


# -- the revisions of a source: a local folder's checkpoint folders, a hub repo's branches -----------


def source_revisions(entry: SeriesEntry, results: Path) -> Revisions:
    """The source's revisions: a local folder (a path by its form, or a folder here) or a hub repo."""
    folder = Path(entry.source).expanduser()
    if entry.source.startswith(LOCAL_PREFIXES) or folder.is_dir():
        return _local_revisions(entry, folder)
    if not HUB_REPO.match(entry.source):
        raise OlmesError(
            f"config key '{entry.key('source')}': {entry.source} is no folder here and no hub repo id "
            "(org/name, without @revision: checkpoints picks the revisions); write a local folder as "
            "./path or /path"
        )
    return _hub_revisions(entry, results / "series" / f"{entry.name}.refs.json")


def _local_revisions(entry: SeriesEntry, folder: Path) -> Revisions:
    """A local folder's checkpoint folders: its subfolders with a config.json (Hugging Face folders)."""
    key = entry.key("source")
    if not folder.is_dir():
        where = "" if folder.is_absolute() else f" (relative to {Path.cwd()})"
        raise OlmesError(
            f"config key '{key}': the folder {entry.source} does not exist{where}; give a folder of "
            "checkpoint folders or a hub repo id org/name"
        )
    base = entry.source.rstrip("/")
    specs = {sub.name: f"{base}/{sub.name}" for sub in folder.iterdir() if (sub / "config.json").is_file()}
    if not specs:
        raise OlmesError(
            f"config key '{key}': the folder {entry.source} holds no checkpoint folder (a subfolder with a "
            "config.json, one Hugging Face folder per checkpoint)"
        )
    return Revisions(specs, f"the checkpoint folders of {entry.source}")


def _hub_revisions(entry: SeriesEntry, recorded: Path) -> Revisions:
    """A hub repo's branches, each pinned to its commit: from the recorded refs file when it is of this
    repo, else read from the hub and recorded there."""
    refs = read_refs_file(recorded, entry.key("source"))
    if refs is None or refs["repo"] != entry.source:
        refs = {"repo": entry.source, "read_at": _now(), "branches": hub_branches(entry)}
        write_text_atomic(recorded, json.dumps(refs, indent=2) + "\n")
    specs = {branch["name"]: f"{entry.source}@{branch['target_commit']}" for branch in refs["branches"]}
    described = (
        f"the branches of {entry.source} (recorded in {recorded} on {refs['read_at']}; "
        "delete that file to read them again)"
    )
    return Revisions(specs, described)


def read_refs_file(path: Path, key: str) -> dict[str, Any] | None:
    """A recorded refs file (repo, read_at, branches as the hub API gives them: name, ref,
    target_commit), or None when there is none."""
    if not path.is_file():
        return None
    try:
        refs = json.loads(path.read_text(encoding="utf-8"))
        branches = [{field: b[field] for field in ("name", "ref", "target_commit")} for b in refs["branches"]]
        return {"repo": refs["repo"], "read_at": refs["read_at"], "branches": branches}
    except (ValueError, KeyError, TypeError) as error:
        raise OlmesError(
            f"config key '{key}': the recorded refs file {path} is not one this workflow writes ({error!r}); "
            "delete it to read the branches again"
        ) from None


def hub_branches(entry: SeriesEntry) -> list[dict[str, str]]:
    """The hub repo's branches (name, ref, target_commit), read with ``HfApi.list_repo_refs``."""
    from huggingface_hub import HfApi

    try:
        refs = HfApi().list_repo_refs(entry.source)
    except Exception as error:  # no network, offline mode, no such repo: each is the same one line
        reason = (str(error).strip().splitlines() or [""])[0]
        raise OlmesError(
            f"config key '{entry.key('source')}': cannot read the branches of {entry.source} from the hub "
            f"({type(error).__name__}: {reason}), nor is there a folder {entry.source} here; check the repo "
            "id and the network, or put a refs file recorded elsewhere where this run records it "
            "(config/README.md, series)"
        ) from None
    return [{"name": b.name, "ref": b.ref, "target_commit": b.target_commit} for b in refs.branches]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# -- the checkpoints picked and their model entries --------------------------------------------------


def checkpoint_models(entry: SeriesEntry, revisions: Revisions) -> dict[str, dict]:
    """The picked checkpoints' model entries by model name, by training tokens (then revision)."""
    picked = sorted((_tokens(entry, revision), revision) for revision in pick(entry, revisions))
    models: dict[str, dict] = {}
    for tokens, revision in picked:
        name = model_name(entry.name, revision)
        if name in models:
            raise OlmesError(
                f"config key '{entry.key('checkpoints')}': revisions {models[name]['checkpoint']!r} and "
                f"{revision!r} are both the model {name} (a name keeps letters, digits and . _ + -); "
                "leave one out"
            )
        models[name] = {
            "spec": revisions.specs[revision],
            "display_name": f"{entry.display_name}, {revision}",
            "series": entry.name,
            "checkpoint": revision,
            "training_tokens": tokens,
            **entry.options,
        }
    return models


def pick(entry: SeriesEntry, revisions: Revisions) -> list[str]:
    """The revisions ``checkpoints`` picks among the source's."""
    chosen, key = entry.checkpoints, entry.key("checkpoints")
    if chosen.revisions is not None:
        missing = [revision for revision in chosen.revisions if revision not in revisions.specs]
        if missing:
            raise OlmesError(
                f"config key '{key}.revisions': {missing[0]!r} is not among {revisions.described}: "
                f"{revisions.listed()}"
            )
        return list(chosen.revisions)
    if chosen.match is not None:
        matched = [revision for revision in revisions.specs if chosen.match.search(revision)]
        if not matched:
            raise OlmesError(
                f"config key '{key}.match': {chosen.match.pattern!r} matches none of {revisions.described}: "
                f"{revisions.listed()}"
            )
        return matched
    return _every(entry, revisions)


def _every(entry: SeriesEntry, revisions: Revisions) -> list[str]:
    """Every Nth checkpoint in training order, from the first, and the last: of the revisions the token
    rule reads as trained (a branch such as main names no step, step0 holds the initial weights)."""
    readable = sorted((tokens, r) for r in revisions.specs if (tokens := entry.tokens.tokens(r) or 0) > 0)
    if not readable:
        raise OlmesError(
            f"config key '{entry.key('tokens')}': no revision is {entry.tokens.reads()} among "
            f"{revisions.described}: {revisions.listed()}; give another rule or a table"
        )
    ordered = [revision for _, revision in readable]
    every = ordered[:: entry.checkpoints.every]
    return every if every[-1] == ordered[-1] else [*every, ordered[-1]]


def _tokens(entry: SeriesEntry, revision: str) -> float:
    tokens = entry.tokens.tokens(revision)
    if tokens is None:
        raise OlmesError(
            f"config key '{entry.key('tokens')}': revision {revision!r} is not {entry.tokens.reads()}; "
            "pick only such revisions (checkpoints) or give its tokens in a table"
        )
    if tokens <= 0:
        raise OlmesError(
            f"config key '{entry.key('tokens')}': revision {revision!r} was trained on 0 tokens (the "
            "initial weights); Figure 1 places checkpoints by tokens > 0, so leave it out (checkpoints)"
        )
    return tokens


def model_name(series: str, revision: str) -> str:
    """``<series>-<revision>``, each character a model name may not hold made ``-``."""
    return f"{series}-{NOT_IN_NAME.sub('-', revision)}"
