# Cells: one job per (experiment, cell) enumerated at parse time from the registry; per-experiment
# aggregation into tables (results/) and figures (paper_figs/); the cells table and its check.


rule compile_kernels:
    # Warm the shared Numba cache once per warm-up group so `-j N` cells do not all compile the same
    # kernels (only the methods the selected cells use; see WARM in common.smk).
    output:
        "results/logs/compile_kernels/{family}.json",
    log:
        "logs/compile_kernels/{family}.log",
    params:
        methods=lambda wc: WARM[wc.family],
        metrics=lambda wc: wc.family == "metrics",
    resources:
        runtime=30,
    script:
        "../scripts/compile_kernels.py"


rule experiment_config:
    # The config one experiment's cells see; rewritten (so its cells rerun) only when it changes.
    output:
        "results/config/{exp}.json",
    params:
        cfg=lambda wc: config_json(experiment_config(wc.exp)),
    shell:
        CONFIG_WRITE


rule experiment_cell_config:
    # What the experiment's cells read: its config without grid keys (replicate counts), so that
    # raising runs reruns only the new cells (each cell gets its params from the rule).
    output:
        "results/config/{exp}.cells.json",
    params:
        cfg=lambda wc: config_json(experiment_cell_config(wc.exp)),
    shell:
        CONFIG_WRITE


rule run_cell:
    input:
        unpack(cell_inputs),
    output:
        "results/cells/{exp}/{cell}.json",
    log:
        "logs/cells/{exp}/{cell}.log",
    params:
        scale=SCALE,
        cell=cell_params_json,
    resources:
        runtime=60,
    # Cells never download (MCMC_BENCH_OFFLINE): the download rule tried once; a missing file makes
    # the cell record status "data unavailable". --record-errors keeps an "error" record (exit 0)
    # so the DAG completes; check_cells then fails loudly.
    shell:
        "MCMC_BENCH_OFFLINE=1 {CLI} cell --experiment {wildcards.exp} --cell {wildcards.cell} "
        "--scale {params.scale} --config {input.config} --params-json {params.cell:q} --out {output} "
        "--record-errors "
        "> {log} 2>&1"


rule aggregate:
    input:
        unpack(aggregate_inputs),
    output:
        manifest="results/manifests/{exp}.json",
        assets=report(
            directory("results/report/{exp}"),
            patterns=["{name}.png", "{name}.csv"],
            caption="../report/experiment.rst",
            category="{exp}",
        ),
    log:
        "logs/aggregate/{exp}.log",
    params:
        scale=SCALE,
        source=source_args,
    shell:
        "{CLI} aggregate --experiment {wildcards.exp} --scale {params.scale} {params.source} "
        "--config {input.config} --assets-dir {output.assets} --manifest {output.manifest} "
        "> {log} 2>&1"


rule workflow_config:
    output:
        "results/config/_all.json",
    params:
        cfg=lambda wc: config_json(workflow_config()),
    shell:
        CONFIG_WRITE


rule cells_table:
    input:
        cells=[f for e in EXPERIMENT_IDS for f in cell_files(e)] if SOURCE == "cells" else [
            str(path_of(e, STORE_DIR)) for e in EXPERIMENT_IDS
        ],
        config="results/config/_all.json",
    output:
        csv=report(
            "results/cells.csv",
            caption="../report/cells.rst",
            category="Cells",
        ),
        md="results/cells.md",
    log:
        "logs/cells_table.log",
    params:
        scale=SCALE,
        source=source_args(),
    shell:
        "{CLI} cells-table --config {input.config} --scale {params.scale} {params.source} "
        "--out {output.csv} > {log} 2>&1"


rule check_cells:
    # Fails (listing the cells and the --forcerun command) while any cell has status "error" or
    # the verification failed; runs after the report so that one documents the failures too.
    input:
        cells="results/cells.csv",
        verify="results/manifests/verify.json",
        report="results/report.html",
    output:
        "results/cells_check.txt",
    log:
        "logs/check_cells.log",
    shell:
        "{CLI} check-cells {input.cells} --verify-status results/verify_status.csv --out {output} "
        "2> {log} || (cat {log} >&2; exit 1)"
