# Stage 5: a preview site of the evaluated models (`snakemake evaluate`), from their scores, tables,
# requests and instances; the published leaderboard is built from the store (leaderboard.smk).


rule site:
    input:
        tables=rules.tables.output,
        models=rules.models_file.output,
        scores=standard_scores(),
        robustness=robustness_results(),
        requests=all_request_files(),
        generative=generative_summaries(),
        generation_requests=expand(rules.generation_requests.output, gtask=GENERATIVE_KEYS),
        instances=expand(rules.instances.output, task=TASK_KEYS),
    output:
        PREVIEW_INDEX,
    params:
        tables=lambda wildcards, input: os.path.dirname(input.tables[0]),
        requests=lambda wildcards, input: os.path.dirname(input.requests[0]),
        site=lambda wildcards, output: os.path.dirname(output[0]),
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/site.log",
    shell:
        "olmes site --scores {input.scores:q} {input.robustness:q} --tables {params.tables:q}"
        " --requests {params.requests:q} --models {input.models:q} --out {params.site:q} 2> {log:q}"
