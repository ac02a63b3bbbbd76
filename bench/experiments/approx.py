"""Experiments of the approx family (registered in EXPERIMENTS; see bench/experiment.py)."""

from bench.experiment import Experiment  # noqa: F401

EXPERIMENTS: list = []
