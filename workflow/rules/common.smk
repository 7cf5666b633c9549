# Helpers shared by the rules: config validation, the lists the rules fan out over, identities. The
# rules reach olmes only through olmes/cli/workflow.py (torch-free; each model spec parsed once).

import functools
import os
import shlex
import sys
import time
from pathlib import Path

from olmes.cli import workflow as olmes_workflow
from olmes.cli.workflow import (
    GENERATIVE_TASKS,
    METHODS,
    REQUEST_SETS,
    ROTATIONS,
    ROTATIONS_SUFFIX,
    STANDARD_VARIANT,
    TASKS,
    VARIANT_NAMES,
    OlmesError,
    get_method,
    methods_for,
    request_sets,
    write_text_atomic,
)


# config["models"] becomes every model the rules fan out over: its entries, then each checkpoint of
# config["series"] as an entry of its own (olmes/cli/series.py), so a checkpoint added adds only its jobs.
try:
    config["models"] = olmes_workflow.check_config(
        config, Path(workflow.source_path("../schemas/config.schema.yaml"))
    )
except OlmesError as error:
    if not os.path.isfile(CONFIG_FILE):
        error = (
            f"{Path.cwd()} has no {CONFIG_FILE}, where a run's config starts ({error}); run snakemake in "
            f"{workflow.basedir}, the Snakefile's folder, or give --directory a folder with its own {CONFIG_FILE}"
        )
    sys.exit(f"olmes: error: {error}")


# The jobs' `olmes` is the one beside the Python running snakemake (the olmes imported above), found
# first on the PATH the jobs inherit: `.venv/bin/snakemake` works without an activated venv.
envvars:
    "PATH",


if os.access(Path(sys.executable).parent / "olmes", os.X_OK):
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

RESULTS = config["results"]
MODELS = list(config["models"])
TASK_KEYS = list(config["tasks"])
GENERATIVE_KEYS = list(config.get("generative_tasks", []))
STORE = config["store"]
PREVIEW_INDEX = f"{RESULTS}/site/index.html"
SITE_INDEX = f"{config['site']}/index.html"
TABLES_DONE = f"{RESULTS}/tables/index.json"
MODELS_FILE = f"{RESULTS}/models.json"
ROBUSTNESS = config["robustness"]
LOGPROB_FILE = f"{RESULTS}/{{variant_dir}}logprobs/{{model}}/{{task}}.{{request_set}}.parquet"

# A prompt variant's requests, log-probs and scores live under RESULTS/variants/<name>/; the rules
# that make them are the standard's, with variant_dir "" for the standard.
wildcard_constraints:
    model="[^/]+",
    task="|".join(TASKS),
    gtask="|".join(GENERATIVE_TASKS),
    request_set="|".join((*REQUEST_SETS, ROTATIONS)),
    method="|".join(METHODS),
    variant_dir="(variants/(" + "|".join(v for v in VARIANT_NAMES if v != STANDARD_VARIANT) + ")/)?",


def variant_dir(variant):
    return "" if variant == STANDARD_VARIANT else f"variants/{variant}/"


def variant_option(wildcards):
    """--variant NAME for the requests of a prompt variant (made under variants/NAME/)."""
    return f"--variant {wildcards.variant_dir.split('/')[1]}" if wildcards.variant_dir else ""


def task_request_sets(task):
    """cf and mcf, and pmi for the tasks that score it (all of them with pmi_everywhere)."""
    return request_sets(TASKS[task], config["pmi_everywhere"])


def task_methods(task):
    """The scoring methods of a task: those whose request sets the task has (pmi only where it has
    pmi requests)."""
    return [method.key for method in methods_for(task_request_sets(task))]


def all_request_files():
    return [
        expand(rules.requests.output[0], variant_dir="", task=task, request_set=request_set)[0]
        for task in TASK_KEYS
        for request_set in task_request_sets(task)
    ]


def logprob_sets():
    """(variant_dir, task, request_set) of each log-prob file every model gets: the standard's, each
    prompt variant's on the variant tasks, mcf_rot on the rotation tasks."""
    standard = [("", task, request_set) for task in TASK_KEYS for request_set in task_request_sets(task)]
    variants = [
        (variant_dir(variant), task, request_set)
        for variant in ROBUSTNESS["variants"]
        for task in ROBUSTNESS["variant_tasks"]
        for request_set in task_request_sets(task)
    ]
    return standard + variants + [("", task, ROTATIONS) for task in ROBUSTNESS["rotation_tasks"]]


def logprob_requests():
    """The request file of each log-prob file of a model, in the order of logprob_outputs()."""
    return [
        expand(rules.requests.output[0], variant_dir=folder, task=task, request_set=request_set)[0]
        for folder, task, request_set in logprob_sets()
    ]


def logprob_outputs():
    """Every log-prob file of one model (the pattern keeps {model}): one job makes them all."""
    folders, tasks, sets = zip(*logprob_sets())
    return expand(LOGPROB_FILE, zip, variant_dir=folders, task=tasks, request_set=sets, allow_missing=True)


@functools.cache
def logprob_resources(model):
    """The GPUs, memory (MB) and time (min) of a model's log-prob job (olmes.cli.workflow)."""
    return olmes_workflow.logprob_resources(config, model)


def logprob_files(wildcards):
    """One model x task's log-prob files by request set (the inputs a score summary records)."""
    return {
        request_set: expand(
            LOGPROB_FILE,
            variant_dir=wildcards.variant_dir,
            model=wildcards.model,
            task=wildcards.task,
            request_set=request_set,
        )[0]
        for request_set in task_request_sets(wildcards.task)
    }


def method_logprobs(wildcards):
    """The log-prob files one scoring method reads (its request sets)."""
    files = logprob_files(wildcards)
    return {request_set: files[request_set] for request_set in get_method(wildcards.method).request_sets}


def method_predictions(wildcards):
    return expand(
        rules.predict.output[0],
        variant_dir=wildcards.variant_dir,
        model=wildcards.model,
        task=wildcards.task,
        method=task_methods(wildcards.task),
    )


def logprob_options(wildcards, input):
    """The log-prob inputs as command-line options: --cf FILE --pmi FILE --mcf FILE (quoted for the shell)."""
    return " ".join(f"--{name} {shlex.quote(path)}" for name, path in input.items() if name in REQUEST_SETS)


def generative_summaries():
    """Every model x generative task's summary (none without generative_tasks)."""
    return expand(rules.score_generative.output.summary, model=MODELS, gtask=GENERATIVE_KEYS)


def generative_option(wildcards, input):
    """--generative with the generative summaries for the tables, when there are any."""
    return f"--generative {shlex.join(input.generative)}" if input.generative else ""


def standard_scores():
    return expand(rules.score.output.summary, variant_dir="", model=MODELS, task=TASK_KEYS)


def robustness_results():
    """The config's robustness runs: score summaries of each prompt variant on its tasks, and the
    rotations report (MCF under every answer order) of each rotation task, for every model."""
    variants = expand(
        rules.score.output.summary,
        variant_dir=[variant_dir(v) for v in ROBUSTNESS["variants"]],
        model=MODELS,
        task=ROBUSTNESS["variant_tasks"],
    )
    return variants + expand(rules.rotations.output[0], model=MODELS, task=ROBUSTNESS["rotation_tasks"])


def model_spec(wildcards):
    return config["models"][wildcards.model]["spec"]


def model_options(wildcards):
    """The model's own options of `olmes logprobs`: its dtype, and --trust-remote-code when its entry
    says trust_remote_code: true."""
    entry = config["models"][wildcards.model]
    options = [f"--dtype {entry['dtype']}"] if entry.get("dtype") else []
    return " ".join(options + (["--trust-remote-code"] if entry.get("trust_remote_code") else []))


def model_rerun_key(wildcards):
    """The model's part of what decides a log-prob job's rerun (a param: a changed key reruns it)."""
    return olmes_workflow.rerun_key(model_spec(wildcards))


def dataset_identity():
    """The data a request file is built from: the source and, for the hub, the dataset ids."""
    return olmes_workflow.dataset_identity(config["source"])


def models_file_text():
    """The models file of `olmes tables`/`olmes site`: names in config order, checkpoint series."""
    return olmes_workflow.models_file_text(config["models"])


def limit_option():
    return f"--limit {config['limit']}" if config["limit"] else ""


# -- the results store and the leaderboard built from it ------------------------------------------


def store_models():
    """The store's models (none while there is no store)."""
    return olmes_workflow.store_models(STORE)


def local_weights(name):
    """Where this machine has a store model's weights without the hub (olmes.cli.workflow)."""
    return olmes_workflow.local_weights(STORE, name, config["models"])


def reproducible_models():
    """Store models whose weights are here (:func:`local_weights`)."""
    if not config["reproduce"]:
        return []
    return [name for name in store_models() if local_weights(name) is not None]


def weights_option(wildcards):
    """``--weights`` for ``olmes reproduce`` when the weights are not where the store's spec says."""
    weights = local_weights(wildcards.model)
    spec = olmes_workflow.stored_spec(STORE, wildcards.model)
    return "" if weights == spec else f"--weights {shlex.quote(str(Path(weights).expanduser()))}"


def store_files():
    """Every file of the store, so that a publish reruns the leaderboard's tables and site."""
    return olmes_workflow.store_files(STORE)


def publish_flags():
    return " ".join(f"--{flag}" for flag in ("partial", "replace") if config["publish"][flag])


STARTED = time.time()


def print_reproduction(paths):
    """The reproduction reports this run wrote, as the main job ends with them (also on the site)."""
    olmes_workflow.print_reproduction(paths, STARTED, STORE)
