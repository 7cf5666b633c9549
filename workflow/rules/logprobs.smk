# Stage 2: log P(continuation | context), one job per model: every log-prob file of the model (each
# task and request set: cf, pmi, mcf; each prompt variant's under variants/<name>/; mcf_rot on the
# rotation tasks) from one `olmes logprobs` process that loads the weights once. These are the GPU
# jobs, the only cluster jobs; their GPUs, memory and time come from the model's size
# (logprob_resources in common.smk; workflow/profiles/slurm/README.md).


rule logprobs:
    input:
        logprob_requests(),
    output:
        logprob_outputs(),
    params:
        spec=model_spec,
        options=model_options,
        rerun_key=model_rerun_key,
        max_batch_tokens=config["max_batch_tokens"],
        pairs=lambda wildcards, input, output: " ".join(
            f"--requests {shlex.quote(requests)} --output {shlex.quote(logprobs)}"
            for requests, logprobs in zip(input, output)
        ),
    threads: 2
    resources:
        gpu=lambda wildcards: logprob_resources(wildcards.model).gpus,
        mem_mb=lambda wildcards: logprob_resources(wildcards.model).mem_mb,
        runtime=lambda wildcards: logprob_resources(wildcards.model).runtime,
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/logprobs/{{model}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/logprobs/{{model}}.tsv"
    shell:
        "olmes logprobs --model {params.spec:q} {params.options} {params.pairs}"
        " --max-batch-tokens {params.max_batch_tokens} --threads {threads} --quiet 2> {log:q}"
