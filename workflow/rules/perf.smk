# Performance report (issue 9): per-iteration time vs N, E[B], achieved vs ideal speed-up, cold/warm start.
# Not part of `all` (it times the machine, it does not reproduce a paper result):
#   snakemake -j1 results/performance.csv [--configfile config/smoke.yaml]   (smoke: --quick, N <= 1e5)
# Runs alone (-j1 recommended) so the timings are not disturbed by other jobs.


rule perf:
    output:
        "results/performance.csv",
    log:
        "logs/perf.log",
    params:
        quick="--quick" if config.get("scale", "paper") == "smoke" else "",
    shell:
        "mcmc-bench perf {params.quick} --out {output} > {log} 2>&1"
