# HTML report: `snakemake --report results/report.html` collects every report()-flagged output
# (tables as CSV, figures as PNG, captions in workflow/report/*.rst). The `report` rule runs that
# command at the end of the workflow (a nested snakemake with --nolock and this run's effective
# config) so one `snakemake` call leaves results/report.html behind.


rule report:
    input:
        report_inputs(),
    output:
        "results/report.html",
    log:
        "logs/report.log",
    params:
        # the nested run sees exactly this run's experiments (not modules registered meanwhile)
        cfg=lambda wc: json.dumps(
            {**config, "experiments": EXPERIMENT_IDS}, sort_keys=True, default=str
        ),
    run:
        import subprocess

        from bench.outputs import atomic_write_text

        eff = atomic_write_text("results/config/_effective.json", params.cfg + "\n")
        cmd = [sys.executable, "-m", "snakemake", "-s", workflow.main_snakefile,
               "-d", os.getcwd(), "--configfile", str(eff), "--report", output[0], "--nolock"]
        with open(log[0], "w") as fh:
            rc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT).returncode
        if rc != 0:
            raise RuntimeError(f"snakemake --report failed (exit {rc}); see {log[0]}")
