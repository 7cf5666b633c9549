# Stage 2: log P(continuation | context) per model, task and request set (cf, pmi, mcf, mcf_rot;
# and a prompt variant's under variants/<name>/): the GPU jobs.
# On a cluster the slurm profile groups one model's jobs into one cluster job.


rule logprobs:
    input:
        rules.requests.output,
    output:
        f"{RESULTS}/{{variant_dir}}logprobs/{{model}}/{{task}}.{{request_set}}.parquet",
    params:
        spec=model_spec,
        dtype=model_dtype_option,
        identity=model_identity,
        max_batch_tokens=config["max_batch_tokens"],
    threads: 2
    resources:
        gpu=1,
        mem_mb=16000,
        runtime=60,
    group:
        "logprobs_{model}"
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/{{variant_dir}}logs/logprobs/{{model}}/{{task}}.{{request_set}}.log",
    benchmark:
        f"{RESULTS}/{{variant_dir}}benchmarks/logprobs/{{model}}/{{task}}.{{request_set}}.tsv"
    shell:
        "olmes logprobs --model {params.spec:q} {params.dtype} --requests {input}"
        " --max-batch-tokens {params.max_batch_tokens} --threads {threads} --output {output} 2> {log}"
