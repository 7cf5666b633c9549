# The OLMES evaluation pipeline: requests -> log-probs -> scores -> tables -> site, and the results
# store the published leaderboard is built from. Targets (README.md):
#   snakemake --cores N             the leaderboard site from the store, with the reproduction here
#   snakemake --cores N evaluate    the config's models: scores, tables and a preview site in results/
#   snakemake --cores N publish     evaluate, then move the config's models into the store

import os

# The config is config/config.yaml of the folder snakemake runs in (this one, or --directory FOLDER with
# its own: config/README.md), then each --configfile over it. A folder without one gets one line from
# common.smk saying so, not a key its absence left out.
CONFIG_FILE = "config/config.yaml"
if os.path.isfile(CONFIG_FILE):

    configfile: CONFIG_FILE


# Snakemake deep-merges each --configfile into config.yaml, so a layered file that lists `models`
# (config/paper.yaml) would get config.yaml's models as well: its models replace them instead, and
# its checkpoint `series` (none if it lists none) replace config.yaml's, as one listing only `series`
# replaces config.yaml's models too. Every other key merges as Snakemake merges it
# (config/full-standard.yaml sets two keys).
LAYERED = workflow.config_settings.overwrite_config
if "models" in LAYERED or "series" in LAYERED:
    config["models"] = dict(LAYERED.get("models", {}))
    config["series"] = dict(LAYERED.get("series", {}))


include: "workflow/rules/common.smk"
include: "workflow/rules/requests.smk"
include: "workflow/rules/logprobs.smk"
include: "workflow/rules/scores.smk"
include: "workflow/rules/generative.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/site.smk"
include: "workflow/rules/leaderboard.smk"


# On a cluster only the log-prob jobs are submitted; the light ones run where snakemake runs.
localrules:
    requests,
    instances,
    models_file,
    predict,
    score,
    rotations,
    generation_requests,
    score_generative,
    tables,
    site,
    publish,
    reproduce,
    leaderboard_tables,
    leaderboard_site,


rule all:
    default_target: True
    input:
        rules.leaderboard_site.output,


rule evaluate:
    input:
        rules.site.output,
        rules.tables.output,


onsuccess:
    print_reproduction(rules.leaderboard_site.input.reproduction)
