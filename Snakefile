# minibatch-mcmc-bench: regenerate every table, figure and the HTML report.
#
#   snakemake -j8                                   # paper scale (config/default.yaml)
#   snakemake -j2 --configfile config/smoke.yaml    # smoke scale, minutes
#   snakemake --report results/report.html          # HTML report of the last run
#
# profiles/default/config.yaml (keep-going, rerun-incomplete, printshellcmds) is used automatically;
# on a SLURM cluster add `--workflow-profile profiles/slurm` (see config/README.md).
# Cells come from the experiment registry (bench/experiments/*.py): adding an experiment or a
# method never edits this file.

import os

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

min_version("9.0")


# config/default.yaml, unless the command line names config files: then those alone (each of default.yaml,
# full.yaml and smoke.yaml is complete; rebuild.yaml goes on top of one), so full.yaml does not inherit
# default.yaml's replicate cuts. Relative to this file, so `snakemake -d <other dir>` works too.
if not workflow.overwrite_configfiles:
    _default_config = os.path.join(workflow.basedir, "config", "default.yaml")
    try:

        configfile: _default_config

    except WorkflowError:  # Snakemake's message names neither the file nor the line: say both
        from bench.cli_workflow import config_syntax_error

        _why = os.path.isfile(_default_config) and config_syntax_error(_default_config)
        if not _why:
            raise
        raise WorkflowError(_why) from None


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/cells.smk"
include: "workflow/rules/verify.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/perf.smk"


report: "workflow/report/workflow.rst"


localrules:
    all,
    download,
    preprocess,
    experiment_config,
    workflow_config,
    aggregate,
    cells_table,
    check_cells,
    report,


rule all:
    default_target: True
    input:
        all_outputs(),


onstart:
    print(f"minibatch-mcmc-bench: scale={SCALE}, {len(EXPERIMENT_IDS)} experiments, "
          f"{sum(len(v) for v in CELLS.values())} cells, datasets: {sorted(DATASETS) or 'none'}")
