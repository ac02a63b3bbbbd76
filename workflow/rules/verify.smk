# Verification tables (theory vs empirics, claims, exact checks) from `mcmc-bench verify`
# (verify/cli.py), one job per check family (parallel under -j N), then merged into
# results/{verify_exact,theory_vs_empirics,claims}.csv. A failing family does not stop the DAG: its
# exit code goes into results/verify_status.csv and check_cells then fails loudly. If the verify
# subcommand is not installed in this checkout, verify_status says "not available".
# `experiments: all` runs every check family (the shipped ones and those of installed plugins,
# verify.registry.all_families); a selection runs only the families verifying the selected experiments'
# families (verify.registry.families_of_experiments).
try:
    from verify.registry import all_families, families_of_experiments
except ModuleNotFoundError as _e:
    if not (_e.name or "").startswith("verify"):
        raise
    VERIFY_FAMILIES = ()
else:
    VERIFY_FAMILIES = (
        all_families()
        if config.get("experiments", "all") == "all"
        else families_of_experiments([get_experiment(e).family for e in config["experiments"]])
    )


wildcard_constraints:
    vfam="|".join(VERIFY_FAMILIES) or "(?!)",


rule verify_family:
    input:
        # claims read experiment results: run after every experiment is aggregated
        [f"results/manifests/{e}.json" for e in EXPERIMENT_IDS],
        [f"results/logs/compile_kernels/{f}.json" for f in WARM],
    output:
        "results/verify/{vfam}/exit_code.json",
    log:
        "logs/verify/{vfam}.log",
    params:
        quick="--quick" if (config.get("verify") or {}).get("quick", SCALE == "smoke") else "",
    resources:
        runtime=120,
    shell:
        "rc=0; {CLI} verify --family {wildcards.vfam} --out-dir results/verify/{wildcards.vfam} "
        "{params.quick} > {log} 2>&1 || rc=$?; "
        "printf '{{\"family\": \"%s\", \"exit_code\": %d}}\\n' {wildcards.vfam} $rc > {output}"


rule verify:
    input:
        [f"results/verify/{f}/exit_code.json" for f in VERIFY_FAMILIES],
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
        families=list(VERIFY_FAMILIES),
    script:
        "../scripts/verify.py"
