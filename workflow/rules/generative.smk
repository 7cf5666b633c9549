# The OLMES v0.2 generative tasks (config key generative_tasks; docs/generative.md): each task's
# generation requests (no model), then per model x task one `olmes generate` job (greedy generations
# and the gold answers' log-probs; GPU jobs on a cluster, sized like the model's log-prob job) and one
# light `olmes score-generative` job (F1 / exact match as AI2 defines them, bits per byte).


rule generation_requests:
    output:
        f"{RESULTS}/requests/{{gtask}}.gen.jsonl",
    params:
        limit=limit_option(),
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/requests/{{gtask}}.gen.log",
    shell:
        "olmes requests {wildcards.gtask} {params.limit} --output {output:q} 2> {log:q}"


rule generate:
    input:
        rules.generation_requests.output,
    output:
        f"{RESULTS}/generative/{{model}}/{{gtask}}.generations.parquet",
    params:
        spec=model_spec,
        options=model_options,
        rerun_key=model_rerun_key,
    threads: 2
    resources:
        gpu=lambda wildcards: logprob_resources(wildcards.model).gpus,
        mem_mb=lambda wildcards: logprob_resources(wildcards.model).mem_mb,
        runtime=lambda wildcards: logprob_resources(wildcards.model).runtime,
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/generate/{{model}}/{{gtask}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/generate/{{model}}/{{gtask}}.tsv"
    shell:
        "olmes generate --model {params.spec:q} {params.options} --requests {input:q} --output {output:q}"
        " --threads {threads} --quiet 2> {log:q}"


rule score_generative:
    input:
        requests=rules.generation_requests.output,
        generations=rules.generate.output,
    output:
        summary=f"{RESULTS}/generative/{{model}}/{{gtask}}.generative.json",
        instances=f"{RESULTS}/generative/{{model}}/{{gtask}}.instances.parquet",
    params:
        limit=limit_option(),
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/score_generative/{{model}}/{{gtask}}.log",
    shell:
        "olmes score-generative {wildcards.gtask} --model-name {wildcards.model:q} --requests {input.requests:q}"
        " --generations {input.generations:q} {params.limit} --summary {output.summary:q} 2> {log:q}"
