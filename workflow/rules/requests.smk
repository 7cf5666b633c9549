# Stage 1: the standard's requests of each task and request set (cf, pmi, mcf; mcf_rot for the
# rotation tasks), a prompt variant's under variants/<name>/, and each task's instances (no model).


rule requests:
    output:
        f"{RESULTS}/{{variant_dir}}requests/{{task}}.{{request_set}}.jsonl",
    params:
        limit=limit_option(),
        source=config["source"],
        pmi="--pmi-everywhere" if config["pmi_everywhere"] else "",
        variant=variant_option,
        data=dataset_identity(),
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/{{variant_dir}}logs/requests/{{task}}.{{request_set}}.log",
    shell:
        "olmes requests {wildcards.task} --request-set {wildcards.request_set} --source {params.source}"
        " {params.limit} {params.pmi} {params.variant} --output {output:q} 2> {log:q}"


rule instances:
    """What readers of the results see of each instance: question, choices, gold (the site reads it)."""
    output:
        f"{RESULTS}/requests/{{task}}.instances.jsonl",
    params:
        limit=limit_option(),
        source=config["source"],
        data=dataset_identity(),
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/requests/{{task}}.instances.log",
    shell:
        "olmes requests {wildcards.task} --source {params.source} {params.limit} --instances {output:q} 2> {log:q}"
