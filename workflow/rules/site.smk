# Stage 5: the static leaderboard site, from the scores, tables, requests, instances and run records.


rule site:
    input:
        tables=rules.tables.output,
        models=rules.models_file.output,
        scores=expand(rules.score.output.summary, model=MODELS, task=TASK_KEYS),
        requests=all_request_files(),
        instances=expand(rules.instances.output, task=TASK_KEYS),
    output:
        SITE_INDEX,
    params:
        tables=lambda wildcards, input: os.path.dirname(input.tables[0]),
        requests=lambda wildcards, input: os.path.dirname(input.requests[0]),
        site=lambda wildcards, output: os.path.dirname(output[0]),
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/site.log",
    shell:
        "olmes site --scores {input.scores} --tables {params.tables} --requests {params.requests}"
        " --models {input.models} --out {params.site} 2> {log}"
