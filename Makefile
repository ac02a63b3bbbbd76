# Two entry points (README quick start). Each creates .venv if missing.
#   make run   -> the workflow on the smoke config (every registered cell at tiny scale)
#   make test  -> the whole test suite (unit, statistical, verify --quick, workflow smoke, benchmarks)
# and
#   make results -> every paper artifact rebuilt from the committed results store (no cell runs)
#   make paper   -> snakemake -j8 on config/default.yaml (the paper run this machine can afford)
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
JOBS ?= 2
export MCMC_BENCH_MIRROR ?= $(abspath $(CURDIR)/../shared/datasets)

.PHONY: run paper results test test-all lint env clean-cache

env: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev,cluster]"
	@touch $@

run: env
	$(BIN)/snakemake -j$(JOBS) --configfile config/smoke.yaml

paper: env
	$(BIN)/snakemake -j8

# results/, paper_figs/ and results/report.html from results/store; then the figures the results pages show
# (docs/results/figs) refreshed from paper_figs
results: env
	$(BIN)/snakemake -j$(JOBS) --configfile config/full.yaml config/rebuild.yaml
	$(BIN)/mcmc-bench docs-figures

# The unit tier runs on $(JOBS) xdist workers (--dist loadfile: a file's tests share one worker and its
# module fixtures); the smoke workflow (itself `snakemake -j2`, with a 10-minute budget) runs alone after
# it, and the benchmarks alone last (timings on a quiet machine).
test: env
	$(BIN)/python -m pytest -q --ignore=tests/benchmarks -m "not extended and not workflow_smoke" \
		-n $(JOBS) --dist loadfile --durations=15
	$(BIN)/python -m pytest -q tests/test_workflow.py -m workflow_smoke -p no:xdist --durations=1
	mkdir -p results
	$(BIN)/python -m pytest -q tests/benchmarks --benchmark-enable --benchmark-only -p no:xdist \
		--benchmark-timer=time.process_time --benchmark-json results/benchmarks.json

test-all: env
	$(BIN)/python -m pytest -q --ignore=tests/benchmarks

lint: env
	$(BIN)/ruff check samplers verify bench tests

clean-cache:
	rm -rf .numba_cache
