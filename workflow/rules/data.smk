# Data: download (one job per raw file: checksum-verified, mirror first) and preprocess (one job per
# named dataset, cached .npz under data/cache). A file that cannot be obtained is recorded as
# "data unavailable" (status JSON) instead of failing, so the DAG goes on and the cells say so.


rule download:
    output:
        "data/status/raw/{name}.json",
    log:
        "logs/download/{name}.log",
    shell:
        "{CLI} prepare-data {wildcards.name} --raw --out {output} > {log} 2>&1"


rule preprocess:
    input:
        raw_status_files,
    output:
        "data/status/{name}.json",
    log:
        "logs/preprocess/{name}.log",
    shell:
        "MCMC_BENCH_OFFLINE=1 {CLI} prepare-data {wildcards.name} --out {output} > {log} 2>&1"
