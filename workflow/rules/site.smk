# Stage 5: the static leaderboard site, from the scores, tables, requests and run records.


rule site:
    input:
        tables=TABLES_DONE,
        models=MODELS_FILE,
        scores=expand(f"{RESULTS}/scores/{{model}}/{{task}}.scores.json", model=MODELS, task=TASK_KEYS),
        requests=expand(f"{RESULTS}/requests/{{task}}.{{formulation}}.jsonl", task=TASK_KEYS, formulation=FORMULATIONS),
    output:
        SITE_INDEX,
    params:
        tables=lambda wildcards, input: os.path.dirname(input.tables),
        requests=lambda wildcards, input: os.path.dirname(input.requests[0]),
        site=lambda wildcards, output: os.path.dirname(output[0]),
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/site.log",
    shell:
        "olmes site --scores {input.scores} --tables {params.tables} --requests {params.requests}"
        " --models {input.models} --out {params.site} 2> {log}"
