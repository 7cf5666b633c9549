# Stage 4: the paper's tables (CSV, JSON, LaTeX), figure data and statistics over all models.


rule models_file:
    """The config's models (names, specs, checkpoint series) as a file the tables read."""
    output:
        MODELS_FILE,
    params:
        models=models_file_text(),
    log:
        f"{RESULTS}/logs/models_file.log",
    run:
        write_text_atomic(output[0], params.models)
        write_text_atomic(log[0], f"{len(config['models'])} models -> {output[0]}\n")


rule tables:
    input:
        scores=standard_scores(),
        robustness=robustness_results(),
        generative=generative_summaries(),
        models=rules.models_file.output,
    output:
        TABLES_DONE,
    params:
        out=lambda wildcards, output: os.path.dirname(output[0]),
        generative=generative_option,
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/tables.log",
    shell:
        "olmes tables --scores {input.scores:q} {input.robustness:q} --models {input.models:q} {params.generative}"
        " --out {params.out:q} 2> {log:q}"
