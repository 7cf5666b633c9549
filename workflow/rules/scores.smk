# Stage 3: per model and task, every normalization's accuracy, the OLMES score and its dagger.


rule score:
    input:
        cf=expand(rules.logprobs.output[0], formulation="cf", allow_missing=True),
        mcf=expand(rules.logprobs.output[0], formulation="mcf", allow_missing=True),
    output:
        predictions=f"{RESULTS}/scores/{{model}}/{{task}}.predictions.parquet",
        summary=f"{RESULTS}/scores/{{model}}/{{task}}.scores.json",
    params:
        limit=limit_option(),
        pmi="--pmi-everywhere" if config["pmi_everywhere"] else "",
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/scores/{{model}}/{{task}}.log",
    shell:
        "olmes score --model-name {wildcards.model} --task {wildcards.task} --cf {input.cf}"
        " --mcf {input.mcf} {params.limit} {params.pmi} --predictions {output.predictions}"
        " --summary {output.summary} 2> {log}"
