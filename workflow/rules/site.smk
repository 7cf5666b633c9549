# Stage 5: the static leaderboard site, from the scores, tables, requests and run records.


rule site:
    input:
        tables=TABLES_DONE,
        requests=expand(f"{RESULTS}/requests/{{task}}.{{formulation}}.jsonl", task=TASK_KEYS, formulation=FORMULATIONS),
    output:
        SITE_INDEX,
    params:
        results=lambda wildcards, input: os.path.dirname(os.path.dirname(input.tables)),
        site=lambda wildcards, output: os.path.dirname(output[0]),
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/site.log",
    shell:
        "olmes site --results {params.results} --out {params.site} 2> {log}"
