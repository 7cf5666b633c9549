# Stage 1: the standard's requests of each task and formulation (no model involved).


rule requests:
    output:
        f"{RESULTS}/requests/{{task}}.{{formulation}}.jsonl",
    params:
        limit=limit_option(),
        source=config["source"],
        pmi="--pmi-everywhere" if config["pmi_everywhere"] else "",
        data=dataset_identity(),
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/requests/{{task}}.{{formulation}}.log",
    shell:
        "olmes requests {wildcards.task} --formulation {wildcards.formulation} --source {params.source}"
        " {params.limit} {params.pmi} --output {output} 2> {log}"
