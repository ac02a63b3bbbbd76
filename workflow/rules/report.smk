# HTML report: `snakemake --report results/report.html` collects every report()-flagged output
# (tables as CSV, figures as PNG, captions in workflow/report/*.rst). The `report` rule runs that
# command at the end of the workflow (a nested snakemake with --nolock and this run's effective
# config) so one `snakemake` call leaves results/report.html behind. Its first page
# (workflow/report/workflow.rst) opens on the claims at a glance (rule claims_summary).


localrules:
    claims_summary,


rule claims_summary:
    # results/claims.csv as one table (paper, artifact, ours vs the paper's, verdict with its interval,
    # links to the claim's table and figure): the fragment the report's first page includes, and a
    # complete page in the report's "All claims" category. Links name only files under results/report/,
    # so it runs after every experiment's and verify's report assets are written.
    input:
        report_inputs(),
    output:
        fragment="results/claims_summary.html",
        page=report(
            "results/report/summary/claims_summary.html",
            caption="../report/summary.rst",
            category="All claims",
        ),
    log:
        "logs/claims_summary.log",
    params:
        script=os.path.join(workflow.basedir, "workflow", "scripts", "claims_summary.py"),
    shell:
        "{sys.executable} {params.script:q} --claims results/claims.csv --report-dir results/report "
        "--fragment {output.fragment} --standalone {output.page} > {log} 2>&1"


rule report:
    input:
        report_inputs(),
        rules.claims_summary.output,
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
