# Stage 3: per model, task and method (CF under none, token, char, pmi; MCF) the per-instance
# predictions, light jobs without torch; then per model and task one step gathers them into the
# predictions and the score summary (every accuracy, the OLMES score and its dagger); the same for
# a prompt variant under variants/<name>/. Per model and rotation task, MCF under every answer order.


rule predict:
    input:
        unpack(method_logprobs),
    output:
        f"{RESULTS}/{{variant_dir}}predictions/{{model}}/{{task}}.{{method}}.parquet",
    params:
        logprobs=logprob_options,
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/{{variant_dir}}logs/predictions/{{model}}/{{task}}.{{method}}.log",
    shell:
        "olmes predict --model-name {wildcards.model:q} --method {wildcards.method} {params.logprobs}"
        " --output {output:q} 2> {log:q}"


rule score:
    input:
        unpack(logprob_files),
        predictions=method_predictions,
    output:
        predictions=f"{RESULTS}/{{variant_dir}}scores/{{model}}/{{task}}.predictions.parquet",
        summary=f"{RESULTS}/{{variant_dir}}scores/{{model}}/{{task}}.scores.json",
    params:
        logprobs=logprob_options,
        limit=limit_option(),
        pmi="--pmi-everywhere" if config["pmi_everywhere"] else "",
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/{{variant_dir}}logs/scores/{{model}}/{{task}}.log",
    shell:
        "olmes score --model-name {wildcards.model:q} --task {wildcards.task} {params.logprobs}"
        " --from-predictions {input.predictions:q} {params.limit} {params.pmi}"
        " --predictions {output.predictions:q} --summary {output.summary:q} 2> {log:q}"


rule rotations:
    input:
        mcf=expand(LOGPROB_FILE, variant_dir="", request_set="mcf", allow_missing=True),
        rotations=expand(LOGPROB_FILE, variant_dir="", request_set=ROTATIONS, allow_missing=True),
    output:
        f"{RESULTS}/scores/{{model}}/{{task}}{ROTATIONS_SUFFIX}",
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/scores/{{model}}/{{task}}.rotations.log",
    shell:
        "olmes rotations --model-name {wildcards.model:q} --mcf {input.mcf:q} --rotations {input.rotations:q}"
        " --output {output:q} 2> {log:q}"
