# Performance report: per-iteration time vs N, E[B], achieved vs ideal speed-up, cold/warm start.
# Not part of `all` when cells run (it times the machine, it does not reproduce a paper result); with
# source: store (make results) it redraws the stored run's table and figures and is part of `all`:
#   snakemake -j1 results/performance.csv [--configfile config/smoke.yaml]   (smoke: --quick, N <= 1e5)
# Runs alone (-j1 recommended) so the timings are not disturbed by other jobs.


if SOURCE == "store":

    rule perf:
        # the stored `mcmc-bench perf --paired` run behind docs/performance.md: table and figures redrawn
        input:
            os.path.join(STORE_DIR, "perf.csv.xz"),
        output:
            "results/performance.csv",
        log:
            "logs/perf.log",
        shell:
            "{CLI} perf --from-table {input} --out {output} > {log} 2>&1"

else:

    rule perf:
        output:
            "results/performance.csv",
        log:
            "logs/perf.log",
        params:
            quick="--quick" if config.get("scale", "paper") == "smoke" else "",
        shell:
            "{CLI} perf {params.quick} --out {output} > {log} 2>&1"


# BlackJAX / NumPyro side by side (bench/peers.py, optional extra [peers]): part of `all` at paper scale and,
# with source: store, where results/store/peers.csv.xz holds a run. Where the extra is absent the rule writes
# a one-row "peers not installed" table and figure (exit 0), so the workflow and its report never fail on it.
# Like perf it times the machine: run it alone (-j1) for numbers to quote.
if SOURCE == "store":

    rule peers:
        input:
            os.path.join(STORE_DIR, "peers.csv.xz"),
        output:
            csv="results/peers.csv",
            fig=report("paper_figs/peers.png", caption="../report/peers.rst", category="Performance"),
        log:
            "logs/peers.log",
        shell:
            "{CLI} peers --from-table {input} --out {output.csv} --figs paper_figs > {log} 2>&1"

else:

    rule peers:
        output:
            csv="results/peers.csv",
            fig=report("paper_figs/peers.png", caption="../report/peers.rst", category="Performance"),
        log:
            "logs/peers.log",
        params:
            quick="--quick" if config.get("scale", "paper") == "smoke" else "",
        resources:
            runtime=60,
        shell:
            "{CLI} peers {params.quick} --if-missing placeholder --out {output.csv} --figs paper_figs "
            "> {log} 2>&1"
