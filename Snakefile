# The OLMES evaluation pipeline: requests -> log-probs -> scores -> tables -> site, and the results
# store the published leaderboard is built from. Targets (README.md):
#   snakemake --cores N             the leaderboard site from the store, with the reproduction here
#   snakemake --cores N evaluate    the config's models: scores, tables and a preview site in results/
#   snakemake --cores N publish     evaluate, then move the config's models into the store

configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/requests.smk"
include: "workflow/rules/logprobs.smk"
include: "workflow/rules/scores.smk"
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
