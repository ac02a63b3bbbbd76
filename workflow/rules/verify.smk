# Verification tables (theory vs empirics, claims, exact checks) from `mcmc-bench verify`
# (verify/cli.py). If that subcommand is not installed in this checkout, the rule writes tables
# that say "not available" instead of silently skipping.


rule verify:
    input:
        # claims read experiment results: run after every experiment is aggregated
        [f"results/manifests/{e}.json" for e in EXPERIMENT_IDS],
        "results/logs/compile_kernels.json",
    output:
        manifest="results/manifests/verify.json",
        assets=report(
            directory("results/report/verify"),
            patterns=["{name}.csv"],
            caption="../report/verify.rst",
            category="Verification",
        ),
    log:
        "logs/verify.log",
    params:
        quick=lambda wc: bool((config.get("verify") or {}).get("quick", SCALE == "smoke")),
        cli=CLI,
    resources:
        runtime=120,
    script:
        "../scripts/verify.py"
