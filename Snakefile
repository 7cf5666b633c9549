# The OLMES evaluation pipeline: requests -> log-probs -> scores -> tables -> site.
# Run `snakemake --cores N` here (profiles in workflow/profiles/); see README.md.

configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/requests.smk"
include: "workflow/rules/logprobs.smk"
include: "workflow/rules/scores.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/site.smk"


# On a cluster only the log-prob jobs are submitted; the light ones run where snakemake runs.
localrules:
    requests,
    instances,
    models_file,
    predict,
    score,
    tables,
    site,


rule all:
    default_target: True
    input:
        rules.site.output,
        rules.tables.output,
