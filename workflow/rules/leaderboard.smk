# Stage 6: the results store. `publish` moves the evaluated models into it (olmes publish, checked);
# the default target builds the leaderboard's tables and site from it (with the OLMES paper's 40
# models as reported rows, `--reported`), with a reproduction report per store model whose weights
# are here: its first N instances recomputed on this machine.


rule publish:
    input:
        scores=standard_scores(),
        robustness=robustness_results(),
        generative=generative_summaries(),
        models=rules.models_file.output,
    output:
        f"{RESULTS}/published.txt",
    params:
        flags=publish_flags(),
        models=" ".join(MODELS),  # names are shell-safe (the schema's pattern)
        results=lambda wildcards, output: os.path.dirname(output[0]),
        store=lambda wildcards: STORE,
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/publish.log",
    shell:
        "olmes publish {params.models} --from {params.results:q} --store {params.store:q} {params.flags}"
        " 2> {log:q} && cp {log:q} {output:q}"


rule reproduce:
    input:
        f"{STORE}/models/{{model}}/model.json",
    output:
        f"{RESULTS}/reproduction/{{model}}.json",
    params:
        limit=config["reproduce"],
        generative=config.get("reproduce_generative") or 0,
        store=lambda wildcards: STORE,
        workdir=lambda wildcards, output: os.path.splitext(output[0])[0],
        weights=weights_option,
    threads: 1
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/reproduction/{{model}}.log",
    shell:
        "olmes reproduce {wildcards.model:q} --store {params.store:q} --limit {params.limit}"
        " --generative-limit {params.generative}"
        " --workdir {params.workdir:q} {params.weights} --threads {threads} --output {output:q} 2> {log:q}"


rule leaderboard_tables:
    input:
        store_files(),
    output:
        f"{RESULTS}/leaderboard/tables/index.json",
    params:
        out=lambda wildcards, output: os.path.dirname(output[0]),
        store=lambda wildcards: STORE,
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/leaderboard_tables.log",
    shell:
        "olmes tables --store {params.store:q} --reported --out {params.out:q} 2> {log:q}"


rule leaderboard_site:
    input:
        store=store_files(),
        tables=rules.leaderboard_tables.output,
        reproduction=expand(rules.reproduce.output, model=reproducible_models()),
    output:
        SITE_INDEX,
    params:
        tables=lambda wildcards, input: os.path.dirname(input.tables[0]),
        site=lambda wildcards, output: os.path.dirname(output[0]),
        store=lambda wildcards: STORE,
        reproduction=lambda wildcards, input: (
            f"--reproduction {shlex.join(input.reproduction)}" if input.reproduction else ""
        ),
    conda:
        "../envs/olmes.yaml"
    log:
        f"{RESULTS}/logs/leaderboard_site.log",
    shell:
        "olmes site --store {params.store:q} --tables {params.tables:q} {params.reproduction} --out {params.site:q}"
        " 2> {log:q}"
